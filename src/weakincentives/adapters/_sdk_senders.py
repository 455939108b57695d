"""How one attempt's request body reaches an official SDK client.

Two ways, both ending in the SDK's ``post`` (its auth, default headers, idempotency,
error mapping and timeouts) with the reply handed back unread, as
``with_streaming_response`` does:

- :class:`PostedSender` posts the body as built, to the path the endpoint's ``create``
  posts to, with the request options ``create`` adds. The body is already in wire
  shape, so nothing needs the walk ``create`` makes over it against the SDK's type
  definitions (``maybe_transform``), which for a Responses request of a few dozen items
  cost several times the whole rest of the request. For a JSON body that walk changes
  nothing on these endpoints (no field is renamed or reformatted); the tests check that
  the server receives the same body and headers either way.
- :class:`CreateSender` calls ``with_streaming_response.create``, for an endpoint whose
  ``create`` does more than transform: Anthropic's turns some fields into headers,
  checks non-streamed token caps and names its tracing spans, and walks no types.

Keys ``extra_headers``, ``extra_query`` and ``extra_body`` in a request (from
``request_options``) are the SDK's request options, as ``create`` takes them, not
body fields.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Protocol

from weakincentives.serde import JSONValue

__all__ = [
    "CreateSender",
    "PostedSender",
    "RawPost",
    "SendSettings",
    "Sender",
    "named_parameters",
]

type Body = dict[str, JSONValue]

_RETRY_HEADER = "x-stainless-retry-count"
_UNREAD_REPLY = {"X-Stainless-Raw-Response": "stream"}
"""The header ``with_streaming_response`` adds: the SDK returns its response object
with the body not yet read, so the caller reads (or streams) it."""
_OPTION_KEYS = frozenset({"extra_headers", "extra_query", "extra_body"})


@dataclass(frozen=True, slots=True, kw_only=True)
class RawPost:
    """Where an endpoint's ``create`` posts its body, and the options it adds."""

    path: str
    """Relative to the client's ``base_url``, e.g. ``/responses``."""
    options: Mapping[str, JSONValue] = field(default_factory=dict)
    """Request options ``create`` passes besides the caller's (``security`` on the
    ``openai`` 3 SDK); an option the installed SDK does not declare is left out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SendSettings:
    """What one attempt adds to its request."""

    attempt: int
    """1 for the first send; the SDK's retry-count header says ``attempt - 1``."""
    timeout: object
    """The timeout for this attempt (a number or the SDK's ``Timeout``); None: the client's."""
    streamed: bool


class Sender(Protocol):
    """Opens the reply to one request; the reply is closed when the block ends."""

    def open_async(
        self, request: Body, settings: SendSettings
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        """The SDK's unread response to ``request``, from an async client."""
        ...

    def open_sync(
        self, request: Body, settings: SendSettings
    ) -> contextlib.AbstractContextManager[Any]:
        """The SDK's unread response to ``request``, from a sync client."""
        ...


def _headers(request: Body, settings: SendSettings) -> dict[str, object]:
    given = request.get("extra_headers")
    return {
        **(given if isinstance(given, dict) else {}),
        _RETRY_HEADER: str(settings.attempt - 1),
    }


class PostedSender:
    """Posts bodies as built, the way the endpoint's ``create`` would, minus its type walk."""

    def __init__(self, *, sdk: ModuleType, client: Any, route: RawPost) -> None:
        self._client = client
        self._path = route.path
        declared = _declared_options(sdk)
        self._route_options = {
            name: value for name, value in route.options.items() if name in declared
        }

    @contextlib.asynccontextmanager
    async def open_async(self, request: Body, settings: SendSettings) -> AsyncIterator[Any]:
        body, options = self._prepared(request, settings)
        reply = await self._client.post(
            self._path, cast_to=object, body=body, options=options, stream=settings.streamed
        )
        try:
            yield reply
        finally:
            await reply.close()

    @contextlib.contextmanager
    def open_sync(self, request: Body, settings: SendSettings) -> Iterator[Any]:
        body, options = self._prepared(request, settings)
        reply = self._client.post(
            self._path, cast_to=object, body=body, options=options, stream=settings.streamed
        )
        try:
            yield reply
        finally:
            reply.close()

    def _prepared(self, request: Body, settings: SendSettings) -> tuple[Body, dict[str, object]]:
        """The JSON body and the SDK request options for one attempt."""
        body = {key: value for key, value in request.items() if key not in _OPTION_KEYS}
        if settings.streamed:
            body["stream"] = True
        options: dict[str, object] = {
            **self._route_options,
            "headers": {**_headers(request, settings), **_UNREAD_REPLY},
            "max_retries": 0,
        }
        if settings.timeout is not None:
            options["timeout"] = settings.timeout
        query = request.get("extra_query")
        if isinstance(query, dict):
            options["params"] = query
        extra = request.get("extra_body")
        if isinstance(extra, dict):
            options["extra_json"] = extra
        return body, options


class CreateSender:
    """Sends through the endpoint's ``with_streaming_response.create``, SDK retries off."""

    def __init__(self, *, client: Any, endpoint: Callable[[Any], Any]) -> None:
        self._create = endpoint(client.with_options(max_retries=0)).with_streaming_response.create
        self._named = named_parameters(self._create)

    def open_async(
        self, request: Body, settings: SendSettings
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        opened: contextlib.AbstractAsyncContextManager[Any] = self._create(
            **self._arguments(request, settings)
        )
        return opened

    def open_sync(
        self, request: Body, settings: SendSettings
    ) -> contextlib.AbstractContextManager[Any]:
        opened: contextlib.AbstractContextManager[Any] = self._create(
            **self._arguments(request, settings)
        )
        return opened

    def _arguments(self, request: Body, settings: SendSettings) -> dict[str, object]:
        """``create`` keyword arguments: the body, the attempt's timeout and retry header."""
        arguments: dict[str, object] = {}
        extra_body: dict[str, object] = {}
        for key, value in request.items():
            if self._named is None or key in self._named:
                arguments[key] = value
            else:
                extra_body[key] = value
        if extra_body:
            # A field this SDK version does not name (a newer API option, or a compatible
            # server's own such as top_k) still goes in the JSON body, as the SDK allows.
            given = request.get("extra_body")
            arguments["extra_body"] = {**(given if isinstance(given, dict) else {}), **extra_body}
        arguments["extra_headers"] = _headers(request, settings)
        if settings.timeout is not None:
            arguments["timeout"] = settings.timeout
        if settings.streamed:
            arguments["stream"] = True
        return arguments


def named_parameters(create: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword arguments ``create`` names, or None when it takes any (``**kwargs``)."""
    try:
        parameters = inspect.signature(create).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return frozenset(parameter.name for parameter in parameters)


@functools.cache
def _declared_options(sdk: ModuleType) -> frozenset[str]:
    """The request options the SDK's ``RequestOptions`` declares (none if it has none)."""
    declared = getattr(sdk, "RequestOptions", None)
    optional: frozenset[str] = getattr(declared, "__optional_keys__", frozenset())
    required: frozenset[str] = getattr(declared, "__required_keys__", frozenset())
    return optional | required
