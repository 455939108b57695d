"""Tool calls a model wrote as text instead of as structured calls, on any provider.

Small local models (llama.cpp, Ollama, vLLM without a tool parser) often answer a
tool-offering request with the call written out as JSON in the message text. With
``LoopSettings(recover_text_tool_calls=True)`` the loop reads such text as calls when,
and only when, all of this holds:

- the turn has no structured calls, and the request let the model call tools;
- the JSON sits in a Markdown code fence (```` ``` ````, ```` ```json ````,
  ```` ```tool_call ````), in ``<tool_call>...</tool_call>`` tags, or is the whole
  reply;
- it is an object ``{"name": ..., "arguments": {...}}`` (``parameters`` is accepted for
  ``arguments``; arguments may also be JSON text), or a list of such objects;
- every ``name`` in it is a tool the request offered.

Anything else stays text. Recovered arguments go through the same validation as
structured calls, so a bad payload becomes a failed tool result the model reads.

While a reply streams, :class:`HeldText` holds back the text that may turn out to be
such a call (from a fence or tag opener on, or the whole reply when it starts like
JSON), so subscribers never see a call's JSON as answer text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._turns import ModelTurn
from weakincentives.runtime import ToolCall

__all__ = [
    "RECOVERED_FORMAT",
    "HeldText",
    "RecoveredCall",
    "RecoveredCalls",
    "holds_only_empty_markup",
    "recover_text_calls",
    "with_recovered_calls",
]

RECOVERED_FORMAT = "text-tool-calls"
"""The ``raw_format`` of a turn whose calls were read from its text.

Its raw items are still the provider's own (they hold the text as the model wrote
it), but no provider replays them: the turn is rebuilt from its text and calls, so the
next request shows the calls as structured calls answered by their results.
"""

_FENCE = re.compile(r"(?>```[ \t]*(?:json|tool_call|tool_code)?[ \t]*)\r?\n(.*?)```", re.DOTALL)
"""A fenced block. The opener is atomic: its two runs of spaces are not re-split when no
line end follows, which made a fence followed by a long run of spaces quadratic."""
_OPEN_TAG = "<tool_call>"
_CLOSE_TAG = "</tool_call>"
_OPENERS = ("```", "<tool_call>")
_LONGEST_OPENER = max(len(opener) for opener in _OPENERS)
_EMPTY_BLOCK = re.compile(
    r"<(tool_call|tools)>\s*+</\1>|```(?:[ \t]*+(?:json|tool_call|tool_code))?\s*+```"
)
"""An empty tool-call block; possessive runs, so no input makes the search backtrack."""
_MAX_TEXT = 100_000
"""Longer replies are not searched (a model does not write a call that long)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveredCall:
    """One tool call read from the text."""

    call_id: str
    name: str
    arguments: str
    """JSON text, as a structured call would carry it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveredCalls:
    """The calls found and the text left once they are taken out."""

    calls: tuple[RecoveredCall, ...]
    text: str
    """The text without the calls' blocks, trailing whitespace removed (empty when
    only whitespace is left); leading text is kept as written, so what was already
    streamed stays a prefix of it."""


def recover_text_calls(text: str, offered: frozenset[str], *, id_prefix: str) -> RecoveredCalls:
    """Read calls to ``offered`` tools from ``text``; ids are ``<id_prefix>_<n>``."""
    none = RecoveredCalls(calls=(), text=text)
    if not offered or len(text) > _MAX_TEXT:
        return none
    found: list[tuple[str, str]] = []
    spans: list[tuple[int, int]] = []
    for start, end, inner in _candidates(text):
        pairs = _calls_in(inner, offered)
        if pairs is not None:
            found.extend(pairs)
            spans.append((start, end))
    if not found:
        return none
    remaining = text
    for start, end in reversed(spans):
        remaining = remaining[:start] + remaining[end:]
    calls = tuple(
        RecoveredCall(call_id=f"{id_prefix}_{index}", name=name, arguments=arguments)
        for index, (name, arguments) in enumerate(found, start=1)
    )
    return RecoveredCalls(calls=calls, text=remaining.rstrip() if remaining.strip() else "")


def with_recovered_calls(
    turn: ModelTurn, offered: frozenset[str], *, round_number: int
) -> ModelTurn:
    """``turn`` with the calls written in its text as its calls, or ``turn`` unchanged.

    Only a turn without structured calls is searched, and not one holding items no
    neutral turn can carry (hosted-tool results): those would be lost when the turn
    is rebuilt for the next request.
    """
    if turn.tool_calls or turn.untranslatable or not turn.text:
        return turn
    recovered = recover_text_calls(turn.text, offered, id_prefix=f"text_call_{round_number}")
    if not recovered.calls:
        return turn
    calls = tuple(
        ToolCall(
            call_id=call.call_id,
            name=call.name,
            arguments=call.arguments,
            parent_message_id=turn.response_id,
        )
        for call in recovered.calls
    )
    return replace(turn, text=recovered.text, tool_calls=calls, raw_format=RECOVERED_FORMAT)


def holds_only_empty_markup(text: str) -> bool:
    """True when ``text`` is empty tool-call blocks and nothing else (``<tools></tools>``).

    Small models write such a block (tags or an empty code fence) when they mean a call
    and make none: a reply with no call and no words, like an empty one.
    """
    if len(text) > _MAX_TEXT:
        return False
    rest, blocks = _EMPTY_BLOCK.subn("", text)
    return blocks > 0 and not rest.strip()


def _candidates(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, inner text)`` of each place a call may be written, in order."""
    found = [(match.start(), match.end(), match.group(1)) for match in _FENCE.finditer(text)]
    found.extend(_tagged(text))
    if not found:
        yield 0, len(text), text
        return
    yield from sorted(found, key=lambda candidate: candidate[0])


def _tagged(text: str) -> Iterator[tuple[int, int, str]]:
    """Each ``<tool_call>`` block: from a tag to the first closing tag after it.

    Found with ``str.find`` from where the last block ended, so each character is read
    once; a tag with no closing tag after it ends the search, as no later tag has one.
    """
    start = text.find(_OPEN_TAG)
    while start >= 0:
        inner = start + len(_OPEN_TAG)
        close = text.find(_CLOSE_TAG, inner)
        if close < 0:
            return
        end = close + len(_CLOSE_TAG)
        yield start, end, text[inner:close]
        start = text.find(_OPEN_TAG, end)


def _calls_in(inner: str, offered: frozenset[str]) -> list[tuple[str, str]] | None:
    """The ``(name, arguments JSON)`` pairs in ``inner``, or None when it is not all calls."""
    value, problem = decode_reply(inner)
    if problem is not None:
        return None
    entries = value if isinstance(value, list) else [value]
    if not entries:
        return None
    calls: list[tuple[str, str]] = []
    for entry in entries:
        call = _call(entry, offered)
        if call is None:
            return None
        calls.append(call)
    return calls


def _call(entry: object, offered: frozenset[str]) -> tuple[str, str] | None:
    if not isinstance(entry, Mapping):
        return None
    name = entry.get("name")
    if not isinstance(name, str) or name not in offered:
        return None
    arguments = entry.get("arguments", entry.get("parameters", {}))
    if isinstance(arguments, str):
        return name, arguments
    if isinstance(arguments, Mapping):
        return name, json.dumps(arguments)
    return None


class HeldText:
    """Passes streamed text on, holding back what may be a tool call written as text.

    With ``hold=False`` every piece goes straight to ``sink``. With ``hold=True`` a
    piece goes on only up to the last character that cannot belong to a call: text
    from the first fence or tag opener on (or a piece of one at the end), the whole
    reply when it starts like JSON, and trailing whitespace wait. Once the turn is
    read, :meth:`finish` sends what the turn's text holds beyond what was shown, so
    the pieces always join to the turn's final text: a recovered call's JSON is never
    shown, and text that turned out not to be a call arrives late but whole.
    """

    def __init__(self, sink: TextSink, *, hold: bool) -> None:
        self._sink = sink
        self._hold = hold
        self._shown = 0
        self._pending = ""
        """Text received but not shown, while something may still be shown."""
        self._latched = False
        """True once nothing more is shown before the turn is read."""

    def feed(self, text: str) -> None:
        """Take one streamed piece; show what is safe to show."""
        if not self._hold:
            self._show(text)
            return
        if self._latched:
            return  # the rest comes from the turn's text in finish()
        pending = self._pending + text
        if self._shown == 0:
            start = pending.lstrip()
            if start[:1] in ("{", "["):
                self._latched = True
                return
        cut = self._safe_end(pending)
        end = len(pending[:cut].rstrip())
        self._show(pending[:end])
        self._pending = pending[end:]

    def finish(self, final_text: str) -> None:
        """Show the rest of ``final_text``: everything after what was already shown."""
        self._latched = True
        self._pending = ""
        self._show(final_text[self._shown :])

    def _safe_end(self, pending: str) -> int:
        """Where text that may open a call starts in ``pending`` (its length if nowhere)."""
        found = [index for opener in _OPENERS if (index := pending.find(opener)) >= 0]
        if found:
            self._latched = True
            return min(found)
        for size in range(min(len(pending), _LONGEST_OPENER - 1), 0, -1):
            tail = pending[-size:]
            if any(opener.startswith(tail) for opener in _OPENERS):
                return len(pending) - size
        return len(pending)

    def _show(self, text: str) -> None:
        if text:
            self._shown += len(text)
            self._sink(text)
