"""Streamed Responses API replies: server-sent events folded into text and a final body.

Sans-IO: :class:`ResponsesStreamReader` reads the Responses API's events (parsed by
the shared ``EventStreamParser``), passing each ``response.output_text.delta`` on and
keeping the response object of the closing ``response.completed`` (or ``incomplete`` /
``failed``) event.
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._sse import EventStreamParser, ServerEvent
from weakincentives.errors import PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["EventStreamParser", "ResponsesStreamReader", "ServerEvent"]

_CLOSING = frozenset({"response.completed", "response.incomplete", "response.failed"})


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
