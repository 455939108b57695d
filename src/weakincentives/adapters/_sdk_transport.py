"""One attempt through an official SDK client: sync or async, streamed or not.

The ``openai`` and ``anthropic`` SDKs share one generated shape: ``with_options``,
``with_streaming_response.create``, ``client.timeout`` / ``client.max_retries`` and the
same ``Timeout`` type. Providers built on them hand this module a request body and get
back the reply as raw JSON (streamed replies folded into the same JSON by a
provider-specific :class:`StreamReader`), so each provider reads one shape whichever
way it arrived. The SDK's own models are never used: they are built without
validation, so an item type the SDK does not know yet would come back as the wrong
class, while the raw JSON is exactly what the server said.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any, Protocol

from weakincentives.adapters._blocking import run_blocking
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_errors import decode_body, mapped_errors
from weakincentives.adapters._sse import EventStreamParser, ServerEvent
from weakincentives.errors import ProviderError
from weakincentives.serde import JSONValue

__all__ = ["SdkTransport", "StreamReader", "StreamReaderFactory", "timed_out"]

type Body = dict[str, JSONValue]


class StreamReader(Protocol):
    """Folds one provider's stream events into text deltas and the final reply body."""

    def read(self, event: ServerEvent) -> None:
        """Handle one event; raise phase ``response`` for an error or unreadable event."""
        ...

    def result(self) -> Body:
        """The reply body as the non-streamed API would send it; phase ``response`` if cut off."""
        ...


type StreamReaderFactory = Callable[[TextSink, str], StreamReader]
"""Builds a reader for one attempt from the text sink and the prompt name."""


class SdkTransport:
    """Sends request bodies to one endpoint of an official SDK client, one attempt at a time.

    Every attempt goes out with the SDK's own retries switched off (the loop retries,
    inside the deadline), an ``x-stainless-retry-count`` header saying which attempt it
    is (as the SDK would send), and a timeout no longer than the time the loop grants.
    """

    def __init__(
        self,
        *,
        sdk: ModuleType,
        client: Any,
        is_async: bool,
        endpoint: Callable[[Any], Any],
    ) -> None:
        self._sdk = sdk
        self._client = client
        self._is_async = is_async
        self._endpoint = endpoint(client.with_options(max_retries=0))
        self._named = _named_parameters(self._endpoint.with_streaming_response.create)

    @property
    def max_retries(self) -> int:
        """The client's ``max_retries``: how often the loop resends a retryable failure."""
        return int(self._client.max_retries)

    async def send(
        self,
        request: Body,
        attempt: Attempt,
        on_text: TextSink,
        stream: StreamReaderFactory | None = None,
    ) -> Body:
        """Send ``request`` once; with ``stream`` the reply is read as server-sent events."""
        arguments = self._arguments(request, attempt, streamed=stream is not None)
        if self._is_async:
            return await self._send_async(arguments, attempt, on_text, stream)
        return await run_blocking(
            lambda forward: self._send_sync(arguments, attempt, forward, stream), on_text
        )

    def _arguments(self, request: Body, attempt: Attempt, *, streamed: bool) -> dict[str, object]:
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
        headers = request.get("extra_headers")
        arguments["extra_headers"] = {
            **(headers if isinstance(headers, dict) else {}),
            "x-stainless-retry-count": str(attempt.number - 1),
        }
        if attempt.timeout is not None:
            arguments["timeout"] = self._bounded_timeout(attempt.timeout)
        if streamed:
            arguments["stream"] = True
        return arguments

    async def _send_async(
        self,
        arguments: dict[str, object],
        attempt: Attempt,
        on_text: TextSink,
        stream: StreamReaderFactory | None,
    ) -> Body:
        name = attempt.prompt_name
        try:
            # The whole attempt is bounded, so a slow trickle of bytes cannot outlive it.
            async with asyncio.timeout(attempt.timeout):
                with mapped_errors(self._sdk, prompt_name=name):
                    async with self._endpoint.with_streaming_response.create(**arguments) as reply:
                        if stream is None:
                            data: bytes = await reply.read()
                            return _decode(data, reply.status_code, name)
                        reader = stream(on_text, name)
                        parser = EventStreamParser()
                        async for chunk in reply.iter_bytes():
                            for event in parser.feed(chunk):
                                reader.read(event)
                    return _finish(parser, reader)
        except TimeoutError as exc:
            raise timed_out(name) from exc

    def _send_sync(
        self,
        arguments: dict[str, object],
        attempt: Attempt,
        on_text: TextSink,
        stream: StreamReaderFactory | None,
    ) -> Body:
        name = attempt.prompt_name
        with (
            mapped_errors(self._sdk, prompt_name=name),
            self._endpoint.with_streaming_response.create(**arguments) as reply,
        ):
            if stream is None:
                return _decode(reply.read(), reply.status_code, name)
            ends = None if attempt.timeout is None else time.monotonic() + attempt.timeout
            reader = stream(on_text, name)
            parser = EventStreamParser()
            for chunk in reply.iter_bytes():
                for event in parser.feed(chunk):
                    reader.read(event)
                # The SDK's read timeout is per chunk; this bounds the stream as a whole.
                if ends is not None and time.monotonic() > ends:
                    raise timed_out(name)
        return _finish(parser, reader)

    def _bounded_timeout(self, remaining: float) -> object:
        """The client's timeout, shortened (never lengthened) to the time the attempt has.

        A per-request timeout replaces the client's, so it must be the sooner of the two.
        """
        remaining = max(remaining, 0.001)
        configured: object = self._client.timeout
        if isinstance(configured, int | float):
            return min(float(configured), remaining)
        if isinstance(configured, self._sdk.Timeout):
            # connect/read/write/pool may each be None (no limit); bound every one of them.
            limits: dict[str, float] = {}
            for phase in ("connect", "read", "write", "pool"):
                limit = getattr(configured, phase)
                limits[phase] = remaining if limit is None else min(limit, remaining)
            return self._sdk.Timeout(**limits)
        return remaining


def _named_parameters(create: Callable[..., Any]) -> frozenset[str] | None:
    """The keyword arguments ``create`` names, or None when it takes any (``**kwargs``)."""
    try:
        parameters = inspect.signature(create).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters):
        return None
    return frozenset(parameter.name for parameter in parameters)


def _decode(data: bytes, status: int, prompt_name: str) -> Body:
    return decode_body(
        data.decode("utf-8", errors="replace"), status=status, prompt_name=prompt_name
    )


def _finish(parser: EventStreamParser, reader: StreamReader) -> Body:
    for event in parser.close():
        reader.read(event)
    return reader.result()


def timed_out(prompt_name: str) -> ProviderError:
    """The retryable error for an attempt that ran out of the time the loop granted."""
    return ProviderError(
        "the request did not finish in the time left",
        prompt_name=prompt_name,
        retryable=True,
        provider_payload={"error": "timeout"},
    )
