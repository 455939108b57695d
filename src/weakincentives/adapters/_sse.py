"""Server-sent events (``text/event-stream``) parsed incrementally, without I/O.

Every provider that streams (OpenAI's Responses and Chat Completions APIs, Anthropic's
Messages API) sends its events in this format; each provider reads the events' JSON
data in its own stream reader.

The parser is linear in the bytes fed, however they are chunked: each byte is scanned
for a line end once (a chunk is searched only from where the previous search stopped),
and the buffer is trimmed once per ``feed``, not once per line. A 50 MB event arriving
in thousands of small chunks therefore costs what one 50 MB chunk costs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EventStreamParser", "ServerEvent"]

_LF = 0x0A


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One dispatched server-sent event."""

    event: str | None
    data: str


class EventStreamParser:
    """Incremental ``text/event-stream`` parser: feed bytes, get the events completed so far."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0
        """How much of the buffer's start is known to hold no line end."""
        self._event: str | None = None
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[ServerEvent]:
        """Parse ``chunk``; lines split across chunks wait for their end."""
        buffer = self._buffer
        buffer += chunk
        events: list[ServerEvent] = []
        start = 0
        while True:
            cut = _line_end(buffer, start, max(start, self._scanned))
            if cut is None:
                break
            end, after = cut
            event = self._line(buffer[start:end].decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
            start = after
        if start:
            del buffer[:start]
        # Everything left but a trailing CR (which may be half of a CRLF) holds no line end.
        self._scanned = len(buffer) - (1 if buffer.endswith(b"\r") else 0)
        return events

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


def _line_end(buffer: bytearray, start: int, search: int) -> tuple[int, int] | None:
    """Where the line starting at ``start`` ends and the next begins (CR, LF or CRLF).

    ``search`` is where to look from: the bytes between ``start`` and it are known to
    hold no line end.
    """
    newline = buffer.find(b"\n", search)
    carriage = buffer.find(b"\r", search, newline if newline != -1 else len(buffer))
    if carriage == -1:
        return None if newline == -1 else (newline, newline + 1)
    if carriage + 1 == len(buffer):
        return None  # a CR at the end may be the first half of a CRLF
    return carriage, carriage + (2 if buffer[carriage + 1] == _LF else 1)
