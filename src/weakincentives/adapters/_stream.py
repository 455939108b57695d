"""An evaluation as a stream of events: ``async for event in adapter.stream(...)``.

The stream runs the one loop (``evaluate_async``) and listens to the bus for that
evaluation's events (its id, so nested evaluations stay out): text deltas, tool calls
with their results (``ToolInvoked``), retries, rejected answers, and, for a prompt
whose output is a dataclass, :class:`PartialOutput` values as the answer's JSON
arrives; the last item is the ``PromptResponse``. A failed evaluation raises its error
from the iterator, after the events it published.

Backpressure: the provider is wrapped so that each request waits until the consumer
has read all but ``max_buffered`` of the events so far; a stalled consumer thus stops
the evaluation at its next request (the events of one reply are bounded by the reply).
Leaving the loop early (``break``, an exception, ``aclose()``) cancels the evaluation
and waits for it to end: it is recorded as ``PromptFailed`` with phase ``cancelled``.
Iterating with a plain ``for`` runs the same iterator on the library's background
loop, one item at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from weakincentives._portal import run_sync
from weakincentives.adapters._partial import PartialFields
from weakincentives.adapters._provider import Attempt, Provider, TextSink
from weakincentives.adapters._response import PromptResponse
from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import EventPublisher, Prompt, SessionProtocol
from weakincentives.runtime import (
    EventBus,
    InProcessEventBus,
    OutputRejected,
    RequestRetried,
    Session,
    Subscription,
    TextDelta,
    ToolInvoked,
)

__all__ = ["EvaluationStream", "Paced", "PartialOutput", "StreamEvent"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PartialOutput:
    """The fields of a structured answer that are complete so far (while it streams).

    Only fields whose JSON value has closed are present, each parsed into its declared
    type; the final answer, validated as a whole, is the response's ``output``.
    """

    evaluation_id: str
    round: int
    """The request the answer belongs to (a rejected answer's next try starts afresh)."""
    fields: Mapping[str, object] = field(default_factory=dict)


type StreamEvent = (
    TextDelta | ToolInvoked | RequestRetried | OutputRejected | PartialOutput | PromptResponse[Any]
)
"""What an evaluation stream yields; the ``PromptResponse`` comes last."""

_WATCHED: tuple[type[Any], ...] = (TextDelta, ToolInvoked, RequestRetried, OutputRejected)


class _Gate:
    """How far the consumer is behind; requests wait while it is too far."""

    def __init__(self, max_buffered: int) -> None:
        self.max_buffered = max_buffered
        self.unread = 0
        self._caught_up = asyncio.Event()
        self._caught_up.set()

    def added(self) -> None:
        self.unread += 1
        if self.unread > self.max_buffered:
            self._caught_up.clear()

    def read(self) -> None:
        self.unread -= 1
        if self.unread <= self.max_buffered:
            self._caught_up.set()

    async def wait(self) -> None:
        await self._caught_up.wait()


class Paced[RequestT, ReplyT]:
    """A provider whose requests wait for the stream's consumer (backpressure)."""

    def __init__(self, inner: Provider[RequestT, ReplyT], gate: _Gate) -> None:
        self._inner = inner
        self._gate = gate
        self.name = inner.name
        self.model = inner.model
        self.retry_limit = inner.retry_limit
        self.hosted_tool_codecs = inner.hosted_tool_codecs
        self.build_request = inner.build_request
        self.read_turn = inner.read_turn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)  # sdk_client and other provider facts

    async def send(self, request: RequestT, attempt: Attempt, on_text: TextSink) -> ReplyT:
        """Wait until the consumer caught up, then send."""
        await self._gate.wait()
        return await self._inner.send(request, attempt, on_text)

    def close(self) -> None:
        """Nothing: the wrapped provider belongs to the adapter the stream came from."""


type Start = Callable[
    [Paced[Any, Any], EventPublisher, SessionProtocol | None],
    Coroutine[Any, Any, PromptResponse[Any]],
]


class EvaluationStream[OutputT]:
    """One evaluation, iterated as it runs (``async for`` or ``for``); see the module."""

    def __init__(
        self,
        *,
        provider: Provider[Any, Any],
        prompt: Prompt[OutputT],
        evaluation_id: str,
        bus: EventPublisher | None,
        session: SessionProtocol | None,
        start: Start,
        max_buffered: int,
    ) -> None:
        if max_buffered < 0:
            raise ConfigValidationError(
                f"max_buffered must be at least 0, got {max_buffered}",
                field_name="max_buffered",
                value=max_buffered,
            )
        self._provider = provider
        self._evaluation_id = evaluation_id
        self._bus, self._session = _tappable(bus, session)
        self._start = start
        self._max_buffered = max_buffered
        structured = prompt.structured_output
        self._output_type = (
            structured.dataclass_type
            if structured is not None and structured.container == "object"
            else None
        )
        self._started = False
        self._iterator: AsyncIterator[StreamEvent] | None = None
        self.response: PromptResponse[OutputT] | None = None
        """The final response, once the stream has yielded it."""

    @property
    def evaluation_id(self) -> str:
        """The evaluation's id, shared by every event it publishes."""
        return self._evaluation_id

    def __aiter__(self) -> AsyncIterator[StreamEvent]:
        if self._started:
            raise ConfigValidationError(
                "this evaluation stream was already iterated; call adapter.stream(...) again",
                field_name="stream",
            )
        self._started = True
        self._iterator = self._events()
        return self._iterator

    async def aclose(self) -> None:
        """Stop iterating: cancel the evaluation if it still runs, and wait for it to end.

        ``async with contextlib.aclosing(adapter.stream(...)) as stream:`` calls it on
        leaving the block, however the block is left.
        """
        iterator = self._iterator
        if iterator is not None:
            await iterator.aclose()  # type: ignore[attr-defined]  # an async generator; typed as its iterator

    def __iter__(self) -> Iterator[StreamEvent]:
        events = self.__aiter__()
        try:
            while True:
                try:
                    item = run_sync(_next(events))
                except StopAsyncIteration:
                    return
                yield item
        finally:
            run_sync(events.aclose())  # type: ignore[attr-defined]  # __aiter__ is an async generator

    async def _events(self) -> AsyncIterator[StreamEvent]:
        gate = _Gate(self._max_buffered)
        arrived: deque[object] = deque()
        wake = asyncio.Event()

        def heard(event: Any) -> None:
            if getattr(event, "evaluation_id", None) == self._evaluation_id:
                arrived.append(event)
                gate.added()
                wake.set()

        subscriptions = [self._bus.subscribe(kind, heard) for kind in _WATCHED]
        paced = Paced(self._provider, gate)
        task = asyncio.ensure_future(self._start(paced, self._bus, self._session))
        task.add_done_callback(lambda _: wake.set())
        partial: tuple[int, PartialFields] | None = None
        try:
            while True:
                while arrived:
                    event = arrived.popleft()
                    gate.read()
                    yield event  # type: ignore[misc]  # bus events are the StreamEvent union members
                    if isinstance(event, TextDelta) and self._output_type is not None:
                        if partial is None or partial[0] != event.round:
                            partial = (event.round, PartialFields(self._output_type))
                        if partial[1].feed(event.text):
                            yield PartialOutput(
                                evaluation_id=self._evaluation_id,
                                round=event.round,
                                fields=partial[1].fields,
                            )
                if task.done():
                    break
                wake.clear()
                if not arrived and not task.done():
                    await wake.wait()
            response = task.result()
            self.response = response
            yield response
        finally:
            _unsubscribe(self._bus, subscriptions)
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


async def _next(events: AsyncIterator[StreamEvent]) -> StreamEvent:
    return await anext(events)


def _unsubscribe(bus: EventBus, subscriptions: list[Subscription]) -> None:
    for subscription in subscriptions:
        bus.unsubscribe(subscription)


def _tappable(
    bus: EventPublisher | None, session: SessionProtocol | None
) -> tuple[EventBus, SessionProtocol | None]:
    """A bus the stream can subscribe to, with the session to pass along."""
    if bus is None and session is None:
        fresh = InProcessEventBus()
        return fresh, Session(bus=fresh)
    if bus is None:
        assert session is not None
        attached = session.bus
        if attached is None:
            return InProcessEventBus(), session
        return cast(EventBus, attached), session
    if not callable(getattr(bus, "subscribe", None)) or not callable(
        getattr(bus, "unsubscribe", None)
    ):
        raise ConfigValidationError(
            f"a stream listens to the bus it is given, so bus= must be an EventBus (with "
            f"subscribe and unsubscribe), got {type(bus).__name__}",
            field_name="bus",
            value=bus,
        )
    return bus, session  # type: ignore[return-value]  # bus checked above
