"""Streamed Responses API replies: server-sent events folded into text and a final body.

Sans-IO: :class:`ResponsesStreamReader` reads the Responses API's events (parsed by
the shared ``EventStreamParser``), passing each ``response.output_text.delta`` on and
keeping the response object of the closing ``response.completed`` (or ``incomplete`` /
``failed``) event.

The closing body is the record (it is what the next round replays and codecs read),
and the deltas are what subscribers already saw; the two must tell one story. When
deltas came and their joined text is not the closing body's ``output_text``, the stream
contradicts itself and is phase ``response``, rather than an answer recorded as one
text after the caller was shown another. A stream with no deltas at all is read from
the body alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.adapters._event_reader import EventReader
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._sse import EventStreamParser, ServerEvent
from weakincentives.serde import JSONValue

__all__ = ["EventStreamParser", "ResponsesStreamReader", "ServerEvent"]

_CLOSING = frozenset({"response.completed", "response.incomplete", "response.failed"})


class ResponsesStreamReader(EventReader):
    """Reads Responses API stream events into text deltas and the final response body."""

    def __init__(self, on_text: TextSink, prompt_name: str) -> None:
        super().__init__(on_text, prompt_name)
        self._final: dict[str, JSONValue] | None = None
        self._deltas: list[str] | None = None
        """Text passed on so far; None until the first delta."""

    def read(self, event: ServerEvent) -> None:
        """Handle one event; an ``error`` event or an unreadable one is phase ``response``."""
        if self._final is not None or event.data.strip() == "[DONE]":
            return
        data = self._event_object(event)
        kind = self._event_kind(data, event)
        if kind == "response.output_text.delta":
            delta = data.get("delta")
            if isinstance(delta, str):
                if self._deltas is None:
                    self._deltas = []
                self._deltas.append(delta)
                self._on_text(delta)
        elif kind == "error":
            raise self._broken(
                f"the provider reported an error mid-stream: {_error_text(data)}", payload=data
            )
        elif kind in _CLOSING:
            response = data.get("response")
            if not isinstance(response, dict):
                raise self._broken(f"a {kind} event carries no response object", payload=data)
            self._check_agreement(response, data)
            self._final = response

    def result(self) -> dict[str, JSONValue]:
        """The final response body; phase ``response`` when the stream ended before it."""
        if self._final is None:
            raise self._ended_early()
        return self._final

    def _check_agreement(
        self, response: Mapping[str, JSONValue], data: Mapping[str, JSONValue]
    ) -> None:
        """Refuse a closing body whose text is not the text the deltas streamed."""
        if self._deltas is None:
            return
        streamed = "".join(self._deltas)
        recorded = _output_text(response)
        if streamed != recorded:
            raise self._broken(
                f"the streamed text ({len(streamed)} characters) differs from the text of "
                f"the completed response ({len(recorded)} characters); the stream "
                "contradicts itself",
                payload=data,
            )


def _output_text(response: Mapping[str, JSONValue]) -> str:
    """The ``output_text`` parts of the body's messages, joined as the reply is read."""
    output = response.get("output")
    parts: list[str] = []
    for item in output if isinstance(output, list) else []:
        content = item.get("content") if isinstance(item, dict) else None
        if not (isinstance(item, dict) and item.get("type") == "message"):
            continue
        for part in content if isinstance(content, list) else []:
            text = part.get("text") if isinstance(part, dict) else None
            if (
                isinstance(part, dict)
                and part.get("type") == "output_text"
                and isinstance(text, str)
            ):
                parts.append(text)
    return "".join(parts)


def _error_text(data: Mapping[str, JSONValue]) -> str:
    message = data.get("message")
    nested = data.get("error")
    if not isinstance(message, str) and isinstance(nested, dict):
        message = nested.get("message")
    code = data.get("code")
    text = message if isinstance(message, str) and message else "no details"
    return f"{text} ({code})" if isinstance(code, str) and code else text
