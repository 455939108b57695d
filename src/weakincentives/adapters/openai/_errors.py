"""Turn SDK exceptions into ``PromptEvaluationError`` at the adapter boundary."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

from weakincentives.errors import EvaluationPhase, PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["call_with_error_mapping"]


def call_with_error_mapping(
    sdk: ModuleType, send: Callable[[], Any], *, prompt_name: str
) -> dict[str, JSONValue]:
    """Call the SDK and return the response as JSON; SDK failures become typed errors.

    Transport and HTTP failures are phase ``request`` (with status and body when the
    server answered); a reply the SDK cannot read is phase ``response``.
    """
    try:
        response = send()
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
    except sdk.APIResponseValidationError as exc:
        raise _error(
            f"the reply does not match the Responses API: {exc}",
            "response",
            {"body": _jsonable(exc.body)},
            prompt_name,
        ) from exc
    except ValueError as exc:
        raise _error(
            f"the reply is not valid JSON: {exc}", "response", {"error": str(exc)}, prompt_name
        ) from exc
    dump = getattr(response, "model_dump", None)
    if not callable(dump):
        raise _error(
            f"the SDK returned {type(response).__name__}, not a response model",
            "response",
            {"body": str(response)[:2000]},
            prompt_name,
        )
    body: object = dump(mode="json")
    if not isinstance(body, dict):
        raise _error("the reply is not a JSON object", "response", {"body": str(body)}, prompt_name)
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
