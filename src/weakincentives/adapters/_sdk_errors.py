"""Turn official-SDK exceptions and undecodable bodies into typed errors at the boundary.

The ``openai`` and ``anthropic`` SDKs are generated from one template and raise the same
exception classes (``APITimeoutError``, ``APIConnectionError``, ``APIStatusError``), so
one mapping serves every provider built on them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from types import ModuleType

from weakincentives.adapters._http import is_retryable_status, retry_after_seconds
from weakincentives.adapters._json import decode_reply
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.serde import JSONValue

__all__ = ["decode_body", "mapped_errors"]


@contextlib.contextmanager
def mapped_errors(sdk: ModuleType, *, prompt_name: str) -> Iterator[None]:
    """Raise ``ProviderError`` for the SDK's transport and status errors inside the block.

    Timeouts and connection failures are retryable; an error status is retryable by
    the rules the SDKs share (408, 409, 429, 5xx, ``x-should-retry``), with the
    ``Retry-After`` delay when the server gave one. The error body is kept as the
    provider payload.
    """
    try:
        yield
    except sdk.APITimeoutError as exc:
        raise ProviderError(
            "the request timed out",
            prompt_name=prompt_name,
            retryable=True,
            provider_payload={"error": "timeout"},
        ) from exc
    except sdk.APIConnectionError as exc:
        raise ProviderError(
            f"could not reach the provider: {exc}",
            prompt_name=prompt_name,
            retryable=True,
            provider_payload={"error": "connection"},
        ) from exc
    except sdk.APIStatusError as exc:
        status: int = exc.status_code
        headers: Mapping[str, str] = exc.response.headers
        retry_after = retry_after_seconds(headers)
        label = "rate limited" if status == 429 else "the provider answered"
        wait = "" if retry_after is None else f" (retry after {retry_after:g}s)"
        raise ProviderError(
            f"{label} with HTTP {status}{wait}: {exc.message}",
            prompt_name=prompt_name,
            status_code=status,
            retry_after=retry_after,
            retryable=is_retryable_status(status, headers),
            provider_payload={"status": status, "body": _jsonable(exc.body)},
        ) from exc


def decode_body(text: str, *, status: int, prompt_name: str) -> dict[str, JSONValue]:
    """A reply body as a JSON object; anything else is phase ``response``."""
    body, problem = decode_reply(text)
    if problem is not None:
        raise PromptEvaluationError(
            f"the reply is not valid JSON: {problem}",
            prompt_name=prompt_name,
            phase="response",
            provider_payload={"status": status, "body": text[:10_000]},
        )
    if not isinstance(body, dict):
        raise PromptEvaluationError(
            f"the reply is a JSON {type(body).__name__}, not an object",
            prompt_name=prompt_name,
            phase="response",
            provider_payload={"status": status, "body": body},
        )
    return body


def _jsonable(value: object, depth: int = 0) -> JSONValue:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if depth > 32:
        return "..."
    if isinstance(value, dict):
        return {str(key): _jsonable(item, depth + 1) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item, depth + 1) for item in value]
    return str(value)
