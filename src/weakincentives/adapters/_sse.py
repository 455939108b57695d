"""Server-sent events (``text/event-stream``) parsed incrementally, without I/O.

Every provider that streams (OpenAI's Responses and Chat Completions APIs, Anthropic's
Messages API) sends its events in this format; each provider reads the events' JSON
data in its own stream reader.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EventStreamParser", "ServerEvent"]


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
