"""Streamed Responses API replies: server-sent events folded into text and a final body.

Sans-IO: :class:`EventStreamParser` turns bytes into events as the HTML standard's
``text/event-stream`` rules say, and :class:`ResponsesStreamReader` reads the Responses
API's events, passing each ``response.output_text.delta`` on and keeping the response
object of the closing ``response.completed`` (or ``incomplete`` / ``failed``) event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._provider import TextSink
from weakincentives.errors import PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["EventStreamParser", "ResponsesStreamReader", "ServerEvent"]

_CLOSING = frozenset({"response.completed", "response.incomplete", "response.failed"})


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One dispatched server-sent event."""

    event: str | None
    data: str


class EventStreamParser:
    """Incremental ``text/event-stream`` parser: feed bytes, get the events completed so far."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        """Parse ``chunk``; lines split across chunks wait for their end."""
        self._buffer += chunk
        events: list[ServerEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                return events
            end, after = cut
            line = self._buffer[:end].decode("utf-8", errors="replace")
            self._buffer = self._buffer[after:]
            event = self._line(line)
            if event is not None:
                events.append(event)

    def close(self) -> list[ServerEvent]:
        """The last event, when the stream ended without a blank line after it."""
        events = self.feed(b"\n") if self._buffer else []
        if self._data:
            events.append(self._dispatch())
        return events

    def _line(self, line: str) -> ServerEvent | None:
        if not line:
            return self._dispatch() if self._data or self._event is not None else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None

    def _dispatch(self) -> ServerEvent:
        event = ServerEvent(event=self._event, data="\n".join(self._data))
        self._event, self._data = None, []
        return event


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """Where the first line of ``buffer`` ends, and where the next begins (CR, LF or CRLF)."""
    newline = buffer.find(b"\n")
    carriage = buffer.find(b"\r")
    if carriage == -1 and newline == -1:
        return None
    if carriage == -1 or (newline != -1 and newline < carriage):
        return newline, newline + 1
    if carriage + 1 == len(buffer):
        return None  # a CR at the end may be the first half of a CRLF
    return carriage, carriage + (2 if buffer[carriage + 1 : carriage + 2] == b"\n" else 1)


class ResponsesStreamReader:
    """Reads Responses API stream events into text deltas and the final response body."""

    def __init__(self, on_text: TextSink, *, prompt_name: str) -> None:
        self._on_text = on_text
        self._prompt_name = prompt_name
        self._final: dict[str, JSONValue] | None = None

    def read(self, event: ServerEvent) -> None:
        """Handle one event; an ``error`` event or an unreadable one is phase ``response``."""
        if self._final is not None or event.data.strip() == "[DONE]":
            return
        data, problem = decode_reply(event.data)
        if problem is not None or not isinstance(data, dict):
            raise self._broken(
                f"a stream event is not a JSON object ({problem or 'not an object'})"
            )
        kind = data.get("type", event.event)
        if kind == "response.output_text.delta":
            delta = data.get("delta")
            if isinstance(delta, str):
                self._on_text(delta)
        elif kind == "error":
            raise self._broken(
                f"the provider reported an error mid-stream: {_error_text(data)}", payload=data
            )
        elif kind in _CLOSING:
            response = data.get("response")
            if not isinstance(response, dict):
                raise self._broken(f"a {kind} event carries no response object", payload=data)
            self._final = response

    def result(self) -> dict[str, JSONValue]:
        """The final response body; phase ``response`` when the stream ended before it."""
        if self._final is None:
            raise self._broken("the stream ended before the response completed")
        return self._final

    def _broken(
        self, reason: str, payload: Mapping[str, JSONValue] | None = None
    ) -> PromptEvaluationError:
        return PromptEvaluationError(
            reason, prompt_name=self._prompt_name, phase="response", provider_payload=payload
        )


def _error_text(data: Mapping[str, JSONValue]) -> str:
    message = data.get("message")
    nested = data.get("error")
    if not isinstance(message, str) and isinstance(nested, dict):
        message = nested.get("message")
    code = data.get("code")
    text = message if isinstance(message, str) and message else "no details"
    return f"{text} ({code})" if isinstance(code, str) and code else text
