"""Turn SDK exceptions into ``PromptEvaluationError`` at the adapter boundary."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Protocol

from weakincentives.errors import EvaluationPhase, PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["RawReply", "call_with_error_mapping"]


class RawReply(Protocol):
    """What ``client.responses.with_raw_response.create`` returns, as far as we read it."""

    @property
    def status_code(self) -> int:
        """The HTTP status of the successful reply."""
        ...

    @property
    def text(self) -> str:
        """The reply body, decoded."""
        ...


def call_with_error_mapping(
    sdk: ModuleType, send: Callable[[], RawReply], *, prompt_name: str
) -> dict[str, JSONValue]:
    """Call the SDK and return the reply body as JSON; SDK failures become typed errors.

    Transport and HTTP failures are phase ``request`` (with status and body when the
    server answered); a reply body that is not a JSON object is phase ``response``.

    The body is decoded here rather than through the SDK's models on purpose: the SDK
    builds models without validation, so an item type it does not know yet comes back
    as the wrong class, and dumping it again emits serializer warnings and adds fields
    the server never sent. The raw JSON is exactly what the provider said, which is what
    codecs parse, what the next round replays and what errors carry.
    """
    try:
        reply = send()
    except sdk.APITimeoutError as exc:
        raise _error("the request timed out", "request", {"error": "timeout"}, prompt_name) from exc
    except sdk.APIConnectionError as exc:
        raise _error(
            f"could not reach the provider: {exc}", "request", {"error": "connection"}, prompt_name
        ) from exc
    except sdk.APIStatusError as exc:
        status = exc.status_code
        label = "rate limited" if status == 429 else "the provider answered"
        raise _error(
            f"{label} with HTTP {status}: {exc.message}",
            "request",
            {"status": status, "body": _jsonable(exc.body)},
            prompt_name,
        ) from exc
    text = reply.text
    try:
        body: object = json.loads(text)
    except ValueError as exc:
        raise _error(
            f"the reply is not valid JSON: {exc}",
            "response",
            {"status": reply.status_code, "body": text},
            prompt_name,
        ) from exc
    if not isinstance(body, dict):
        raise _error(
            f"the reply is a JSON {type(body).__name__}, not an object",
            "response",
            {"status": reply.status_code, "body": _jsonable(body)},
            prompt_name,
        )
    return body


def _error(
    message: str,
    phase: EvaluationPhase,
    payload: dict[str, JSONValue],
    prompt_name: str,
) -> PromptEvaluationError:
    return PromptEvaluationError(
        message, prompt_name=prompt_name, phase=phase, provider_payload=payload
    )


def _jsonable(value: object) -> JSONValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    return str(value)
