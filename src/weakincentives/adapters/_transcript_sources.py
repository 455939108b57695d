"""``render_transcript``: the demo's transcript, from what an evaluation left behind.

Three records of an evaluation feed the one printer (:class:`Transcript`):

- a ``PromptResponse``: its last render (the prompt message it sent, the tools it
  offered), every tool execution, and its totals;
- a ``Session`` that recorded the evaluation: its events, put back in the order they
  were published (each slice keeps its own order; renders, calls and endings are
  placed by their timestamps, retries before the ending of their evaluation);
- a session's stored log (``store.read(session_id)``, or any iterable of events or
  ``StoredEvent`` rows), already in order.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from weakincentives.adapters._response import PromptResponse
from weakincentives.adapters._transcript import Transcript
from weakincentives.adapters._turns import PromptMessage
from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import SessionProtocol
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    ToolInvoked,
)
from weakincentives.serde import load_document
from weakincentives.store import StoredEvent

__all__ = ["render_transcript"]

_UNTIMED = datetime.fromtimestamp(0, UTC)
"""The time of events rebuilt from a response, which keeps no publication times."""

type TranscriptSource = PromptResponse[Any] | SessionProtocol | Iterable[object]


def render_transcript(source: TranscriptSource, *, show_prompt: bool = True) -> str:
    """The transcript of the evaluations in ``source``, as the demo prints it.

    ``source`` is a ``PromptResponse``, a ``Session`` (any ``SessionProtocol``), or an
    iterable of events in publication order, such as a stored session's log
    (``StoredEvent`` rows are loaded as they come). ``show_prompt=False`` leaves out
    the prompt text. Events a transcript does not show are skipped.
    """
    out = io.StringIO()
    printer = Transcript(out, show_prompt=show_prompt)
    for event in _events(source):
        printer.feed(event)
    return out.getvalue()


def _events(source: object) -> Iterator[object]:
    if isinstance(source, PromptResponse):
        return _response_events(source)
    if callable(getattr(source, "select", None)) and hasattr(source, "session_id"):
        return iter(_session_events(source))  # type: ignore[arg-type]  # a Session, by duck type
    if isinstance(source, Iterable) and not isinstance(source, str | bytes):
        # A durable evaluation writes a call's events with its step and the others with
        # the next step, so a stored log is put in publication order the same way.
        return iter(_in_order([_loaded(item) for item in source]))
    raise ConfigValidationError(
        "render_transcript needs a PromptResponse, a Session or an iterable of events "
        f"(such as store.read(session_id)), got {type(source).__name__}",
        field_name="source",
        value=source,
    )


def _loaded(item: object) -> object:
    if isinstance(item, StoredEvent):
        document = item.document
        if not isinstance(document, dict):
            return None
        return load_document(EVENT_DOCUMENT, document)
    return item


def _response_events(response: PromptResponse[Any]) -> Iterator[object]:
    rendered = response.rendered
    first = response.conversation[0] if response.conversation else None
    text = first.text if isinstance(first, PromptMessage) else ""
    if rendered is not None:
        tools = tuple(tool.name for tool in rendered.tools)
        hosted = tuple(tool.name for tool in rendered.hosted_tools)
        visibility = rendered.visibility
        text = text or rendered.text
    else:  # a response loaded from JSON keeps no render: name the tools it called
        tools = tuple(dict.fromkeys(execution.call.name for execution in response.tool_executions))
        hosted, visibility = (), {}
    yield PromptRendered(
        evaluation_id=response.evaluation_id,
        prompt_ns=response.prompt_ns,
        prompt_key=response.prompt_key,
        prompt_name=response.prompt_name,
        adapter="",
        session_id=None,
        text=text,
        tool_names=tools,
        hosted_tool_names=hosted,
        visibility=visibility,
        created_at=_UNTIMED,
    )
    for execution in response.tool_executions:
        yield execution.event
    yield PromptExecuted(
        evaluation_id=response.evaluation_id,
        prompt_name=response.prompt_name,
        adapter="",
        session_id=None,
        text=response.text,
        output=response.output,
        tool_call_count=len(response.tool_executions),
        rounds=response.rounds,
        halted=response.halt is not None,
        usage=response.usage,
        started_at=_UNTIMED,
        finished_at=_UNTIMED,
        model=response.model,
    )


def _session_events(session: SessionProtocol) -> list[object]:
    """The session's transcript events, evaluation by evaluation, in publication order."""
    return _grouped(
        session.select(PromptRendered),
        session.select(ToolInvoked),
        session.select(RequestRetried),
        (*session.select(PromptExecuted), *session.select(PromptFailed)),
    )


def _in_order(events: list[object]) -> list[object]:
    """Logged events put back in publication order (see :func:`_grouped`)."""
    return _grouped(
        [event for event in events if isinstance(event, PromptRendered)],
        [event for event in events if isinstance(event, ToolInvoked)],
        [event for event in events if isinstance(event, RequestRetried)],
        [event for event in events if isinstance(event, PromptExecuted | PromptFailed)],
    )


def _grouped(
    renders: Sequence[PromptRendered],
    calls: Sequence[ToolInvoked],
    retries: Sequence[RequestRetried],
    endings: Sequence[PromptExecuted | PromptFailed],
) -> list[object]:
    """Evaluation by evaluation: each render with the calls made under it, then the end.

    Renders and calls keep their order within their kind (the order they were
    published in); a call goes after the last render made before it started, retries
    before the evaluation's ending.
    """
    ordered: list[object] = []
    for evaluation in dict.fromkeys(render.evaluation_id for render in renders):
        own = [render for render in renders if render.evaluation_id == evaluation]
        # Each call goes after the last render made before it started; the calls keep
        # the slice's order, which is the order they were published in.
        after: list[list[ToolInvoked]] = [[] for _ in own]
        for call in calls:
            if call.evaluation_id == evaluation:
                index = max(
                    (at for at, render in enumerate(own) if render.created_at <= call.started_at),
                    default=0,
                )
                after[index].append(call)
        for render, its_calls in zip(own, after, strict=True):
            ordered += [render, *its_calls]
        ordered += [retry for retry in retries if retry.evaluation_id == evaluation]
        ordered += [end for end in endings if end.evaluation_id == evaluation][:1]
    return ordered
