"""Turn official-SDK exceptions and undecodable bodies into typed errors at the boundary.

The ``openai`` and ``anthropic`` SDKs are generated from one template and raise the same
exception classes (``APITimeoutError``, ``APIConnectionError``, ``APIStatusError``), so
one mapping serves every provider built on them.

The SDKs map only what goes wrong while a request is sent and its headers arrive. Once
the caller reads the body (a JSON reply, or a stream event by event), errors come
straight from the HTTP library the SDK runs on (``httpx2`` for the current SDKs,
``httpx`` for older ones): a connection dropped mid-body, a read that times out, a body
whose encoding is corrupt. :func:`mapped_errors` maps those too, as phase ``response``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import Any

from weakincentives.adapters._http import is_retryable_status, retry_after_seconds
from weakincentives.adapters._json import decode_reply
from weakincentives.adapters._where import (
    TIMEOUT_HINT,
    connection_failure,
    describe_endpoint,
    status_hint,
)
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.serde import JSONValue

__all__ = ["decode_body", "mapped_errors"]

_HTTP_LIBRARIES = ("httpx2", "httpx")


@functools.cache
def _body_errors() -> tuple[
    tuple[type[Exception], ...], tuple[type[Exception], ...], tuple[type[Exception], ...]
]:
    """The HTTP libraries' timeout, transport and decoding errors, for each one installed."""
    timeouts: list[type[Exception]] = []
    transport: list[type[Exception]] = []
    decoding: list[type[Exception]] = []
    for name in _HTTP_LIBRARIES:
        try:
            library = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(library.TimeoutException)
        transport.append(library.TransportError)
        decoding.append(library.DecodingError)
    return tuple(timeouts), tuple(transport), tuple(decoding)


@contextlib.contextmanager
def mapped_errors(sdk: ModuleType, *, prompt_name: str) -> Iterator[None]:
    """Raise typed errors for what the SDK or its HTTP library raises inside the block.

    Timeouts and connection failures are retryable ``ProviderError``s: phase ``request``
    while the request is sent, phase ``response`` once the body is being read. An error
    status is retryable by the rules the SDKs share (408, 409, 429, 5xx,
    ``x-should-retry``), with the ``Retry-After`` delay when the server gave one; the
    error body is kept as the provider payload. A body whose content encoding is corrupt
    is phase ``response``. Anything else passes through unchanged.
    """
    try:
        yield
    except Exception as exc:
        typed = _sdk_error(sdk, exc, prompt_name) or _body_error(exc, prompt_name)
        if typed is None:
            raise
        raise typed from exc


def _sdk_error(sdk: ModuleType, exc: Exception, prompt_name: str) -> PromptEvaluationError | None:
    """The typed error for an exception the SDK raised while sending, or None."""
    endpoint = describe_endpoint(_request_of(exc))
    if isinstance(exc, sdk.APITimeoutError):
        return ProviderError(
            "the request timed out",
            prompt_name=prompt_name,
            retryable=True,
            provider_payload={"error": "timeout"},
            endpoint=endpoint,
            hint=TIMEOUT_HINT,
        )
    if isinstance(exc, sdk.APIConnectionError):
        detail, hint = connection_failure(exc, endpoint)
        return ProviderError(
            f"could not reach the provider: {detail}",
            prompt_name=prompt_name,
            retryable=True,
            provider_payload={"error": "connection"},
            endpoint=endpoint,
            hint=hint,
        )
    if not isinstance(exc, sdk.APIStatusError):
        return None
    status: int = exc.status_code
    headers: Mapping[str, str] = exc.response.headers
    retry_after = retry_after_seconds(headers)
    label = "rate limited" if status == 429 else "the provider answered"
    wait = "" if retry_after is None else f" (retry after {retry_after:g}s)"
    # The SDK's message repeats the status ("Error code: 401 - ..."); the error names it once.
    text = _status_message(exc).removeprefix(f"Error code: {status} - ")
    return ProviderError(
        f"{label} with HTTP {status}{wait}: {text}",
        prompt_name=prompt_name,
        status_code=status,
        retry_after=retry_after,
        retryable=is_retryable_status(status, headers),
        provider_payload={"status": status, "body": _jsonable(exc.body)},
        endpoint=endpoint,
        hint=status_hint(status, endpoint, sdk.__name__),
    )


def _status_message(exc: Any) -> str:
    """The error's own message from its body, else the SDK's text.

    The SDKs build their text differently: ``openai`` quotes the body's message,
    ``anthropic`` appends the whole decoded body as a Python ``repr``. The body's
    ``error.message`` (or top-level ``message``) is what the server meant to say.
    """
    body = exc.body
    error = body.get("error", body) if isinstance(body, Mapping) else None
    message = error.get("message") if isinstance(error, Mapping) else None
    if isinstance(message, str) and message.strip():
        return message.strip()
    text: str = exc.message
    return text


def _body_error(exc: Exception, prompt_name: str) -> PromptEvaluationError | None:
    """The typed error for an HTTP-library exception raised while the body was read, or None."""
    timeouts, transport, decoding = _body_errors()
    if not isinstance(exc, timeouts + transport + decoding):
        return None
    if isinstance(exc, decoding):
        return PromptEvaluationError(
            f"the reply's content encoding could not be decoded: {exc}",
            prompt_name=prompt_name,
            phase="response",
            provider_payload={"error": "decoding"},
        )
    if isinstance(exc, timeouts):
        failure = f"the reply stopped arriving before it was complete ({type(exc).__name__})"
        error = "timeout"
    else:
        failure = f"the connection broke while the reply was read ({type(exc).__name__}: {exc})"
        error = "connection"
    return ProviderError(
        failure,
        prompt_name=prompt_name,
        retryable=True,
        phase="response",
        provider_payload={"error": error},
        endpoint=describe_endpoint(_request_of(exc)),
    )


def _request_of(exc: Exception) -> object:
    """The request an HTTP-library error belongs to (its ``request`` property may raise)."""
    try:
        return getattr(exc, "request", None)
    except RuntimeError:  # httpx raises when the error was built without a request
        return None


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
