"""Streamed Messages API replies folded into the message a non-streamed call returns.

Events (the ``anthropic`` SDK's ``raw_message_stream_event.py``): ``message_start``
carries the message with empty ``content``; ``content_block_start`` opens block
``index`` (server tool results arrive whole here); ``content_block_delta`` extends it
with ``text_delta``, ``input_json_delta`` (a tool's input as JSON in pieces),
``citations_delta``, ``thinking_delta`` or ``signature_delta``; ``content_block_stop``
closes it; ``message_delta`` sets ``stop_reason``, ``stop_details``, ``container`` and
the cumulative ``usage``; ``message_stop`` ends the message. ``ping`` is ignored and
``error`` ends the stream with the provider's error.

The folded message must be exactly what the events said, and what subscribers saw: a
block index started twice, a delta or stop for a block that is not open, or a block
never closed when the message stops (its ``input_json_delta`` pieces would otherwise be
lost, and a tool would run with its defaults) is phase ``response``. Text a block
starts with is passed on like its deltas. Pieces are joined once, when the block
closes, so many small deltas cost linear time.
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.adapters._event_reader import EventReader
from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._sse import ServerEvent
from weakincentives.serde import JSONValue

__all__ = ["MessagesStreamReader"]

type Body = dict[str, JSONValue]

_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
# Delta type -> (the block field it extends, the delta's key holding the piece).
_PIECE_FIELDS = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "input_json_delta": ("input", "partial_json"),
}


class MessagesStreamReader(EventReader):
    """Reads Messages API stream events into text deltas and the final message body."""

    def __init__(self, on_text: TextSink, prompt_name: str) -> None:
        super().__init__(on_text, prompt_name)
        self._message: Body | None = None
        self._blocks: dict[int, Body] = {}
        self._pieces: dict[int, dict[str, list[str]]] = {}
        """Text, thinking and input JSON pieces of each open block, joined at its stop."""
        self._closed: set[int] = set()
        self._stopped = False

    def read(self, event: ServerEvent) -> None:
        """Handle one event; ``error`` and unreadable events are phase ``response``."""
        if self._stopped:
            return
        data = self._event_object(event)
        kind = self._event_kind(data, event)
        if kind == "error":
            raise self._broken(
                f"the provider reported an error mid-stream: {_error_text(data)}", payload=data
            )
        if kind == "message_start":
            message = data.get("message")
            if not isinstance(message, dict):
                raise self._broken("message_start carries no message object", payload=data)
            self._message = dict(message)
            return
        if kind in {"ping", None}:
            return
        message = self._started(data)
        if kind == "content_block_start":
            self._open_block(data)
        elif kind == "content_block_delta":
            self._delta(data)
        elif kind == "content_block_stop":
            self._close_block(self._index(data), data)
        elif kind == "message_delta":
            _apply_message_delta(message, data)
        elif kind == "message_stop":
            self._stop(data)

    def result(self) -> Body:
        """The message; phase ``response`` when the stream ended before ``message_stop``."""
        if self._message is None or not self._stopped:
            raise self._ended_early()
        return {**self._message, "content": [self._blocks[i] for i in sorted(self._blocks)]}

    def _open_block(self, data: Mapping[str, JSONValue]) -> None:
        index = self._index(data)
        block = data.get("content_block")
        if not isinstance(block, dict):
            raise self._broken("content_block_start carries no content block", payload=data)
        if not isinstance(block.get("type"), str):
            raise self._broken(f"content block {index} has no string type", payload=data)
        if index in self._blocks:
            raise self._broken(f"content block {index} was started twice", payload=data)
        self._blocks[index] = dict(block)
        pieces: dict[str, list[str]] = {}
        self._pieces[index] = pieces
        for field in ("text", "thinking"):
            start = block.get(field)
            if isinstance(start, str) and start:
                pieces[field] = [start]
        if block.get("type") == "text" and "text" in pieces:
            # Text a block starts with is part of the answer: subscribers see it too.
            self._on_text(pieces["text"][0])

    def _stop(self, data: Mapping[str, JSONValue]) -> None:
        unclosed = sorted(self._pieces)
        if unclosed:
            raise self._broken(
                f"the message stopped with content block {unclosed[0]} never closed "
                "(no content_block_stop)",
                payload=data,
            )
        self._stopped = True

    def _started(self, data: Mapping[str, JSONValue]) -> Body:
        if self._message is None:
            raise self._broken("an event arrived before message_start", payload=data)
        return self._message

    def _index(self, data: Mapping[str, JSONValue]) -> int:
        index = data.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise self._broken("a content block event has no integer index", payload=data)
        return index

    def _delta(self, data: Mapping[str, JSONValue]) -> None:
        index = self._index(data)
        pieces = self._pieces.get(index)
        delta = data.get("delta")
        if pieces is None or not isinstance(delta, dict):
            state = "is already closed" if index in self._closed else "was not started"
            raise self._broken(f"a delta for block {index}, which {state}", payload=data)
        block = self._blocks[index]
        kind = delta.get("type")
        if not isinstance(kind, str):
            raise self._broken(f"a delta for block {index} has no string type", payload=data)
        if kind in _PIECE_FIELDS:
            field, key = _PIECE_FIELDS[kind]
            piece = delta.get(key)
            if piece is not None and not isinstance(piece, str):
                # Skipping it would lose what the model wrote (a tool's input would
                # arrive without it and the tool run with its defaults). A delta
                # without its piece adds nothing and is passed over.
                raise self._broken(
                    f"the {key!r} of the {kind} for block {index} is "
                    f"{type(piece).__name__}, not a string",
                    payload=data,
                )
            if piece is not None:
                pieces.setdefault(field, []).append(piece)
                if kind == "text_delta":
                    self._on_text(piece)
        elif kind == "citations_delta":
            citation = delta.get("citation")
            citations = block.get("citations")
            block["citations"] = [*(citations if isinstance(citations, list) else []), citation]
        elif kind == "signature_delta":
            block["signature"] = delta.get("signature")

    def _close_block(self, index: int, data: Mapping[str, JSONValue]) -> None:
        pieces = self._pieces.pop(index, None)
        if pieces is None:
            state = "stopped twice" if index in self._closed else "stopped but never started"
            raise self._broken(f"block {index} was {state}", payload=data)
        self._closed.add(index)
        block = self._blocks[index]
        for field in ("text", "thinking"):
            if field in pieces:
                block[field] = "".join(pieces[field])
        parts = pieces.get("input")
        if block.get("type") in _INPUT_BLOCKS and parts is not None:
            text = "".join(parts)
            value, problem = decode_reply(text) if text else ({}, None)
            if problem is not None or not isinstance(value, dict):
                raise self._broken(
                    f"the input of block {index} is not a JSON object "
                    f"({problem or 'not an object'}): {text[:200]}",
                    payload=data,
                )
            block["input"] = value


def _apply_message_delta(message: Body, data: Mapping[str, JSONValue]) -> None:
    delta = data.get("delta")
    if isinstance(delta, dict):
        for key in ("stop_reason", "stop_sequence", "stop_details"):
            if key in delta:
                message[key] = delta[key]
        if delta.get("container") is not None:
            message["container"] = delta["container"]
    usage = data.get("usage")
    if isinstance(usage, dict):
        # Counts on message_delta are cumulative, so they replace the message_start ones;
        # a count left out keeps its earlier value.
        current = message.get("usage")
        merged = dict(current) if isinstance(current, dict) else {}
        merged.update({key: value for key, value in usage.items() if value is not None})
        message["usage"] = merged


def _error_text(data: Mapping[str, JSONValue]) -> str:
    error = data.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else "no details"
    return f"{text} ({kind})" if isinstance(kind, str) and kind else text
