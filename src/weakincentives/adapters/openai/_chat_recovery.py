"""Opt-in recovery of tool calls a model wrote as text instead of as structured calls.

Small local models served by llama.cpp, Ollama and similar servers often answer a
tool-offering request with the call written out as JSON in the message text. With
``ChatCompletionsAdapter(recover_text_tool_calls=True)`` such text is read as calls when,
and only when, all of this holds:

- the reply has no structured ``tool_calls``;
- the JSON sits in a Markdown code fence (```` ``` ````, ```` ```json ````,
  ```` ```tool_call ````), in ``<tool_call>...</tool_call>`` tags, or is the whole
  reply;
- it is an object ``{"name": ..., "arguments": {...}}`` (``parameters`` is accepted for
  ``arguments``; arguments may also be JSON text), or a list of such objects;
- every ``name`` in it is a tool the request offered.

Anything else stays text. Recovered arguments go through the same validation as
structured calls, so a bad payload becomes a failed tool result the model reads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from weakincentives.adapters._json import decode_reply
from weakincentives.serde import JSONValue

__all__ = ["RecoveredCall", "RecoveredCalls", "recover_text_calls"]

_FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\r?\n(.*?)```", re.DOTALL)
_TAGS = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_MAX_TEXT = 100_000
"""Longer replies are not searched (a model does not write a call that long)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveredCall:
    """One tool call read from the text."""

    call_id: str
    name: str
    arguments: str
    """JSON text, as a structured call would carry it."""

    def wire(self) -> dict[str, JSONValue]:
        """The call as a Chat Completions ``tool_calls`` entry, for replaying the turn."""
        return {
            "id": self.call_id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RecoveredCalls:
    """The calls found and the text left once they are taken out."""

    calls: tuple[RecoveredCall, ...]
    text: str


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
    return RecoveredCalls(calls=calls, text=remaining.strip())


def _candidates(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, inner text)`` of each place a call may be written, in order."""
    matches = [*_FENCE.finditer(text), *_TAGS.finditer(text)]
    if not matches:
        yield 0, len(text), text
        return
    for match in sorted(matches, key=lambda m: m.start()):
        yield match.start(), match.end(), match.group(1)


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
