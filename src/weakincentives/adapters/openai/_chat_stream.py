"""Streamed Chat Completions replies folded into the body a non-streamed call returns.

Each event's data is a ``chat.completion.chunk`` (the ``openai`` SDK's
``chat_completion_chunk.py``): ``choices[0].delta`` carries ``content`` and ``refusal``
pieces and ``tool_calls`` fragments keyed by ``index`` (the first fragment of a call
has its ``id`` and ``function.name``; ``function.arguments`` arrives in pieces), the
last choice chunk carries ``finish_reason``, and with ``stream_options.include_usage``
a final chunk with no choices carries ``usage``. ``data: [DONE]`` ends the stream.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from weakincentives.adapters._event_reader import EventReader
from weakincentives.adapters._provider import TextSink
from weakincentives.adapters._sse import ServerEvent
from weakincentives.serde import JSONValue

__all__ = ["ChatStreamReader"]

type Body = dict[str, JSONValue]


@dataclass(slots=True)
class _CallParts:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChatStreamReader(EventReader):
    """Reads ``chat.completion.chunk`` events into text deltas and a ``chat.completion`` body."""

    def __init__(self, on_text: TextSink, prompt_name: str) -> None:
        super().__init__(on_text, prompt_name)
        self._id: JSONValue = None
        self._model: JSONValue = None
        self._content: list[str] = []
        self._refusal: list[str] = []
        self._calls: dict[int, _CallParts] = {}
        self._finish: JSONValue = None
        self._usage: JSONValue = None
        self._done = False

    def read(self, event: ServerEvent) -> None:
        """Handle one chunk; an error payload or an unreadable chunk is phase ``response``."""
        if self._done:
            return
        if event.data.strip() == "[DONE]":
            self._done = True
            return
        data = self._event_object(event)
        error = data.get("error")
        if isinstance(error, dict) or (isinstance(error, str) and error):
            # Compatible servers send {"error": {"message": ...}} or {"error": "text"}.
            message = error.get("message") if isinstance(error, dict) else error
            detail = message if isinstance(message, str) and message else "no details"
            raise self._broken(f"the provider reported an error mid-stream: {detail}", payload=data)
        self._id = data.get("id", self._id)
        self._model = data.get("model", self._model)
        if data.get("usage") is not None:
            self._usage = data.get("usage")
        choices = data.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            self._choice(choices[0], data)

    def _choice(self, choice: Mapping[str, JSONValue], data: Mapping[str, JSONValue]) -> None:
        delta = choice.get("delta")
        if isinstance(delta, dict):
            content = self._text_field(delta, "content", data)
            if content:
                self._content.append(content)
                self._on_text(content)
            refusal = self._text_field(delta, "refusal", data)
            if refusal is not None:
                self._refusal.append(refusal)
            calls = delta.get("tool_calls")
            if calls is not None and not isinstance(calls, list):
                raise self._broken("choices[0].delta.tool_calls is not a list", payload=data)
            for fragment in calls or []:
                self._call_fragment(fragment, data)
        if choice.get("finish_reason") is not None:
            self._finish = choice.get("finish_reason")

    def _call_fragment(self, fragment: JSONValue, data: Mapping[str, JSONValue]) -> None:
        index = fragment.get("index") if isinstance(fragment, dict) else None
        if not isinstance(fragment, dict) or not isinstance(index, int) or isinstance(index, bool):
            raise self._broken("a tool call fragment has no integer index", payload=data)
        parts = self._calls.setdefault(index, _CallParts())
        call_id = fragment.get("id")
        if isinstance(call_id, str) and call_id:
            parts.call_id = call_id
        function = fragment.get("function")
        if isinstance(function, dict):
            name = function.get("name")
            if isinstance(name, str) and name:
                parts.name = name
            arguments = function.get("arguments")
            if isinstance(arguments, dict):
                # Decoded arguments, as some compatible servers send them (read like a body's).
                arguments = json.dumps(arguments)
            if isinstance(arguments, str):
                parts.arguments.append(arguments)
            elif arguments is not None:
                raise self._broken(
                    f"the arguments of tool call fragment {index} are not a string", payload=data
                )

    def _text_field(
        self, delta: Mapping[str, JSONValue], key: str, data: Mapping[str, JSONValue]
    ) -> str | None:
        """``delta[key]``: a string or null, as in a non-streamed message; else phase response.

        Dropping a piece of another type would lose what the model said (a tool call
        whose arguments never arrive runs with its defaults).
        """
        value = delta.get(key)
        if value is not None and not isinstance(value, str):
            raise self._broken(f"choices[0].delta.{key} is not a string or null", payload=data)
        return value

    def result(self) -> Body:
        """The ``chat.completion`` body; phase ``response`` when no choice finished."""
        if self._finish is None:
            raise self._ended_early()
        message: Body = {
            "role": "assistant",
            "content": "".join(self._content) if self._content else None,
        }
        if self._refusal:
            message["refusal"] = "".join(self._refusal)
        if self._calls:
            message["tool_calls"] = [
                {
                    "id": parts.call_id,
                    "type": "function",
                    "function": {"name": parts.name, "arguments": "".join(parts.arguments)},
                }
                for _, parts in sorted(self._calls.items())
            ]
        return {
            "id": self._id,
            "object": "chat.completion",
            "model": self._model,
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
            "usage": self._usage,
        }
