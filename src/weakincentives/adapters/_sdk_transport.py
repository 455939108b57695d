"""One attempt through an official SDK client: sync or async, streamed or not.

The ``openai`` and ``anthropic`` SDKs share one generated shape: ``post``,
``with_options``, ``with_streaming_response.create``, ``client.timeout`` /
``client.max_retries`` and the same ``Timeout`` type. Providers built on them hand this
module a request body and get back the reply as raw JSON (streamed replies folded into
the same JSON by a provider-specific :class:`StreamReader`), so each provider reads one
shape whichever way it arrived. The SDK's own models are never used: they are built without
validation, so an item type the SDK does not know yet would come back as the wrong
class, while the raw JSON is exactly what the server said.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any, ClassVar, Protocol

from weakincentives.adapters._blocking import ReplyCutter, run_blocking
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_errors import decode_body, mapped_errors
from weakincentives.adapters._sdk_senders import (
    CreateSender,
    PostedSender,
    RawPost,
    Sender,
    SendSettings,
)
from weakincentives.adapters._sse import EventStreamParser, ServerEvent
from weakincentives.errors import PromptEvaluationError, ProviderError
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
    With ``raw_post`` the body is posted as built (:class:`PostedSender`); without it,
    through the endpoint's ``create`` (:class:`CreateSender`).
    """

    def __init__(
        self,
        *,
        sdk: ModuleType,
        client: Any,
        is_async: bool,
        endpoint: Callable[[Any], Any],
        raw_post: RawPost | None = None,
    ) -> None:
        self._sdk = sdk
        self._client = client
        self._is_async = is_async
        self._sender: Sender = (
            CreateSender(client=client, endpoint=endpoint)
            if raw_post is None
            else PostedSender(sdk=sdk, client=client, route=raw_post)
        )
        self._loops = _LoopBinding(type(client).__name__)

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
        """Send ``request`` once; with ``stream`` the reply is read as server-sent events.

        The whole attempt, body included, is bounded by ``attempt.timeout``: a slow
        trickle of bytes cannot outlive it, with a sync client as with an async one.
        """
        settings = SendSettings(
            attempt=attempt.number,
            timeout=None if attempt.timeout is None else self._bounded_timeout(attempt.timeout),
            streamed=stream is not None,
        )
        name = attempt.prompt_name
        try:
            async with asyncio.timeout(attempt.timeout):
                if self._is_async:
                    fold = _StreamFold.of(stream, on_text, name)
                    return await self._send_async(request, settings, name, fold)
                cutter = ReplyCutter()
                return await run_blocking(
                    lambda forward: self._send_sync(
                        request, settings, name, _StreamFold.of(stream, forward, name), cutter
                    ),
                    on_text,
                    cutter,
                )
        except TimeoutError as exc:
            raise timed_out(name) from exc

    async def _send_async(
        self, request: Body, settings: SendSettings, name: str, fold: _StreamFold | None
    ) -> Body:
        self._loops.check(self._client, name)
        with mapped_errors(self._sdk, prompt_name=name):
            async with self._sender.open_async(request, settings) as reply:
                if fold is None:
                    data: bytes = await reply.read()
                    return _decode(data, reply.status_code, name)
                async for chunk in reply.iter_bytes():
                    fold.feed(chunk)
        return fold.result()

    def _send_sync(
        self,
        request: Body,
        settings: SendSettings,
        name: str,
        fold: _StreamFold | None,
        cutter: ReplyCutter,
    ) -> Body:
        try:
            with (
                mapped_errors(self._sdk, prompt_name=name),
                self._sender.open_sync(request, settings) as reply,
            ):
                cutter.reading(reply.http_response)
                if fold is None:
                    return _decode(reply.read(), reply.status_code, name)
                for chunk in reply.iter_bytes():
                    fold.feed(chunk)
        finally:
            cutter.finished()
        return fold.result()

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


def _decode(data: bytes, status: int, prompt_name: str) -> Body:
    return decode_body(
        data.decode("utf-8", errors="replace"), status=status, prompt_name=prompt_name
    )


class _StreamFold:
    """A streamed reply on its way to a body: the event parser feeding the provider's reader.

    The same for a sync client and an async one; only where the chunks come from differs.
    """

    __slots__ = ("_parser", "_reader")

    def __init__(self, reader: StreamReader) -> None:
        self._reader = reader
        self._parser = EventStreamParser()

    @classmethod
    def of(
        cls, stream: StreamReaderFactory | None, on_text: TextSink, name: str
    ) -> _StreamFold | None:
        """A fold over a new reader from ``stream``; None when the reply is not streamed."""
        return None if stream is None else cls(stream(on_text, name))

    def feed(self, chunk: bytes) -> None:
        """Pass the events completed by ``chunk`` to the reader."""
        for event in self._parser.feed(chunk):
            self._reader.read(event)

    def result(self) -> Body:
        """The reply body, once the stream has ended (a last event may still be pending)."""
        for event in self._parser.close():
            self._reader.read(event)
        return self._reader.result()


class _LoopBinding:
    """Refuses to use an async client on a second event loop, saying what to do instead.

    An async client's pooled connections belong to the event loop that opened them;
    used from another loop (``evaluate_async`` under a second ``asyncio.run``, or
    ``evaluate_async`` and then ``evaluate``, which runs on the library's own loop) the
    HTTP library fails with "Event loop is closed" or "bound to a different event loop".
    The loop an async client first ran on is remembered per client, so a client shared by
    adapters is checked as one.
    """

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _first: ClassVar[weakref.WeakKeyDictionary[object, weakref.ref[asyncio.AbstractEventLoop]]] = (
        weakref.WeakKeyDictionary()
    )

    def __init__(self, client_name: str) -> None:
        self._client_name = client_name

    def check(self, client: object, prompt_name: str) -> None:
        """Remember the running loop for ``client``, or raise if it first ran on another."""
        running = asyncio.get_running_loop()
        with self._lock:
            first = self._first.get(client)
            loop = None if first is None else first()
            if loop is None:
                # Never used, or its first loop is gone with every connection it held.
                self._first[client] = weakref.ref(running)
                return
        if loop is not running:
            raise PromptEvaluationError(
                f"this adapter's {self._client_name} client already ran on another event loop "
                "and cannot be used from this one (its connections belong to that loop). Use "
                "the adapter from one event loop only (await evaluate_async there; evaluate "
                "runs on the library's own loop), create the client inside the loop that "
                "uses it, or pass a sync client, which works from any loop",
                prompt_name=prompt_name,
                phase="request",
            )


def timed_out(prompt_name: str) -> ProviderError:
    """The retryable error for an attempt that ran out of the time the loop granted."""
    return ProviderError(
        "the request did not finish in the time left",
        prompt_name=prompt_name,
        retryable=True,
        provider_payload={"error": "timeout"},
    )
