"""What every provider's stream reader shares: its sink, its prompt, its failures.

A reader folds one provider's server-sent events into text deltas and the reply body
(``_sdk_transport.StreamReader``). Each event's data must be a JSON object, and any
stream that cannot be read is phase ``response``; both rules are stated once, here.
"""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._sse import ServerEvent
from weakincentives.errors import PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["EventReader"]


class EventReader:
    """Base of the providers' stream readers; the class itself is the reader factory.

    ``on_text`` receives each text delta as it arrives; ``prompt_name`` names the
    prompt in the errors the reader raises.
    """

    def __init__(self, on_text: TextSink, prompt_name: str) -> None:
        self._on_text = on_text
        self._prompt_name = prompt_name
        self._objects = 0
        """Events whose data was read as a JSON object so far."""

    def _event_object(self, event: ServerEvent) -> dict[str, JSONValue]:
        """The event's data as a JSON object; anything else is phase ``response``."""
        self._objects += 1
        data, problem = decode_reply(event.data)
        if problem is not None or not isinstance(data, dict):
            raise self._broken(
                f"a stream event is not a JSON object ({problem or 'not an object'})"
            )
        return data

    def _event_kind(self, data: Mapping[str, JSONValue], event: ServerEvent) -> str | None:
        """The event's ``type`` (its ``event:`` name when the data has none).

        A type that is not a string is phase ``response``: readers look types up in
        sets, where a list or an object would raise a bare ``TypeError``.
        """
        kind = data.get("type", event.event)
        if kind is not None and not isinstance(kind, str):
            raise self._broken(
                f"a stream event's type is {type(kind).__name__}, not a string", payload=data
            )
        return kind

    def _ended_early(self) -> PromptEvaluationError:
        """The failure of a stream that ended before its last event.

        With no event read at all, the reply was probably not an event stream (a JSON
        body from a server that does not stream, say): the message says so.
        """
        if self._objects:
            return self._broken("the stream ended before the response completed")
        return self._broken(
            "the stream ended before the response completed: no event with JSON data "
            "arrived (was the reply an event stream?)"
        )

    def _broken(
        self, reason: str, payload: Mapping[str, JSONValue] | None = None
    ) -> PromptEvaluationError:
        return PromptEvaluationError(
            reason, prompt_name=self._prompt_name, phase="response", provider_payload=payload
        )
