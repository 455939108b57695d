"""A readable transcript of an evaluation: live from the bus, or afterwards from a record.

:class:`Transcript` prints each step as its event arrives (what the model reads, each
tool call with its result, each retry, how the evaluation ended); the demo uses it.
:func:`render_transcript` feeds the same printer from what an evaluation left behind:
its ``PromptResponse``, a ``Session`` that recorded it, or a session's stored log
(``store.read(session_id)``), so one implementation prints all of them.

A tool can run another tool inside its own call: discovery's ``call_tool(x)`` runs
``x`` through the shared execution path, which publishes ``ToolInvoked`` for ``x``
with the call id ``<outer call id>/<new id>`` before the outer call's own event. The
transcript holds such inner events back and prints them under the call that ran
them, so each execution appears once, where it happened. Inner events whose outer
call never shows up are printed at the end of the evaluation, so nothing is lost.
"""

from __future__ import annotations

import json
import textwrap
from typing import TextIO

from weakincentives.runtime import (
    EventBus,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    ToolInvoked,
)

__all__ = ["Transcript"]

_WIDTH = 96
_MAX_REPLY = 320
_NESTING = "/"
_STEP = " " * 6


class Transcript:
    """Subscribes to a bus and writes each step as it happens."""

    def __init__(self, out: TextIO, *, show_prompt: bool = True) -> None:
        self._out = out
        self._show_prompt = show_prompt
        self._evaluations = 0
        self._inner: dict[str, list[ToolInvoked]] = {}
        self._shown_calls = 0
        self._shown_inner = 0
        self._renders = 0
        self._last: PromptRendered | None = None

    def attach(self, bus: EventBus) -> None:
        """Start printing the events published on ``bus``."""
        bus.subscribe(PromptRendered, self.on_rendered)
        bus.subscribe(ToolInvoked, self.on_tool)
        bus.subscribe(RequestRetried, self.on_retried)
        bus.subscribe(PromptExecuted, self.on_executed)
        bus.subscribe(PromptFailed, self.on_failed)

    def feed(self, event: object) -> None:
        """Print ``event`` if it is one a transcript shows; ignore any other."""
        match event:
            case PromptRendered():
                self.on_rendered(event)
            case ToolInvoked():
                self.on_tool(event)
            case RequestRetried():
                self.on_retried(event)
            case PromptExecuted():
                self.on_executed(event)
            case PromptFailed():
                self.on_failed(event)
            case _:
                pass

    def line(self, text: str = "") -> None:
        """Write one line."""
        self._out.write(text + "\n")

    def heading(self, text: str) -> None:
        """Write a section heading."""
        self.line()
        self.line(f"== {text} " + "=" * max(0, _WIDTH - len(text) - 4))

    def on_rendered(self, event: PromptRendered) -> None:
        """Show what the model reads and which tools it is offered.

        A second render in the same evaluation follows ``open_sections``: the sections
        that became visible are named before the new render is shown.
        """
        previous, self._last = self._last, event
        if previous is not None and previous.evaluation_id == event.evaluation_id:
            newly = {
                path
                for path, visibility in event.visibility.items()
                if visibility == "full" and previous.visibility.get(path) != "full"
            }
            # Children of an opened section open with it; name only the sections asked for.
            opened = [
                ".".join(path)
                for path in sorted(newly)
                if not any(path[:cut] in newly for cut in range(1, len(path)))
            ]
            self.line(f"  opened sections {', '.join(opened) or '(none)'}; rendering again")
            self._renders += 1
            title = f"Evaluation {self._evaluations}, render {self._renders}"
        else:
            self._evaluations += 1
            self._renders = 1
            self._shown_calls = 0
            self._shown_inner = 0
            title = f"Evaluation {self._evaluations}"
        self.heading(f"{title}: what the model sees")
        if self._show_prompt:
            for line in event.text.splitlines():
                self.line(f"  | {line}")
        summarized = [".".join(p) for p, v in event.visibility.items() if v == "summary"]
        self.line(f"  tools: {', '.join(event.tool_names) or 'none'}")
        if event.hosted_tool_names:
            self.line(f"  hosted tools: {', '.join(event.hosted_tool_names)}")
        if summarized:
            self.line(f"  summarized sections: {', '.join(summarized)}")
        self.heading("Tool calls")

    def on_tool(self, event: ToolInvoked) -> None:
        """Show one tool call the model made, with the calls that ran inside it."""
        outer, _, _ = event.call_id.rpartition(_NESTING)
        if outer:
            self._inner.setdefault(outer, []).append(event)
            return
        self._shown_calls += 1
        self._show(event, depth=0)

    def on_retried(self, event: RequestRetried) -> None:
        """Show a request that failed and is sent again, and why."""
        status = "" if event.status_code is None else f" (HTTP {event.status_code})"
        self.line(
            f"  [retry] round {event.round}, attempt {event.attempt} failed{status}; "
            f"sending again in {event.delay:.2f}s"
        )
        for line in textwrap.wrap(event.cause, _WIDTH - 10) or [""]:
            self.line(f"        -> {line}")

    def on_executed(self, event: PromptExecuted) -> None:
        """Show how the evaluation ended; the counts are those of the lines shown above."""
        self._flush_orphans()
        outcome = "halted to open sections" if event.halted else "answered"
        nested = f" (+{self._shown_inner} run inside them)" if self._shown_inner else ""
        usage = event.usage
        self.line(
            f"  {outcome} after {event.rounds} round(s), {self._shown_calls} tool call(s)"
            f"{nested}; tokens in {usage.input_tokens}, out {usage.output_tokens}"
        )

    def on_failed(self, event: PromptFailed) -> None:
        """Show that the evaluation raised, where (its phase) and why."""
        self._flush_orphans()
        self.line(
            f"  FAILED in phase {event.phase} after {event.rounds} round(s), "
            f"{self._shown_calls} tool call(s): {event.error_type}"
        )
        for line in textwrap.wrap(event.message, _WIDTH - 10) or [""]:
            self.line(f"        -> {line}")

    def _flush_orphans(self) -> None:
        orphans = [inner for calls in self._inner.values() for inner in calls]
        self._inner.clear()
        for orphan in orphans:
            self._shown_calls += 1
            self._show(orphan, depth=0)

    def _show(self, event: ToolInvoked, *, depth: int) -> None:
        indent = "  " + _STEP * depth
        mark = "ok " if event.success else "ERR"
        sent = event.arguments  # read once: a parsed call's arguments decode on each read
        arguments = json.dumps(sent) if not isinstance(sent, str) else sent
        self.line(f"{indent}[{mark}] {event.name}({arguments})")
        reply = event.result.model_content().replace("\n", " ")
        if len(reply) > _MAX_REPLY:
            reply = f"{reply[:_MAX_REPLY]}... ({len(reply)} characters)"
        for line in textwrap.wrap(reply, _WIDTH - 10 - len(_STEP) * depth) or [""]:
            self.line(f"{indent}      -> {line}")
        for inner in self._inner.pop(event.call_id, ()):
            self._shown_inner += 1
            self._show(inner, depth=depth + 1)
