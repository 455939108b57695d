"""What breaks while a reply is read, over real loopback HTTP with the official SDK clients.

Every entry here is from issue 26: a connection dropped mid-body (R1), a stream that
stalls past the deadline (R2), an async client used from a second event loop (R3), and a
cancelled evaluation on a sync client (U7). Each must end in a typed error with its
phase, never a raw ``httpx2`` exception, and a cancelled read must not hold its socket.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, Reply
from tests.adapters.wires import WIRES, ClientKind, Turn, WireName, sdk_client, wire
from weakincentives._portal import run_sync
from weakincentives.adapters import LoopSettings
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import InProcessEventBus, PromptFailed, Session, TextDelta

pytest.importorskip("openai")
pytest.importorskip("anthropic")

PROMPT = Prompt(ns="t", key="transport", sections=[MarkdownSection(title="T", template="Go.")])
ANSWER = Turn(text="Hello world")
KINDS: tuple[ClientKind, ...] = ("sync", "async")


async def _no_wait(seconds: float) -> None:
    """Back-offs are recorded by the loop's sleep; these tests never wait them out."""


def _adapter(
    name: WireName,
    loopback: OpenAILoopback,
    kind: ClientKind,
    *,
    stream: bool,
    max_retries: int = 0,
    timeout: float = 10.0,
) -> Any:
    client = sdk_client(name, loopback, kind, timeout=timeout, max_retries=max_retries)
    settings = LoopSettings(sleep=_no_wait)
    return wire(name).adapter(loopback, kind, client=client, stream=stream, settings=settings)


def _after_first_text(raw: bytes) -> int:
    """Where the event carrying the first piece of text ends, in a streamed reply."""
    return raw.index(b"\n\n", raw.index(b"Hello")) + 2


def _evaluate(adapter: Any, kind: ClientKind, **kwargs: Any) -> Any:
    if kind == "sync":
        return adapter.evaluate(PROMPT, **kwargs)
    return asyncio.run(adapter.evaluate_async(PROMPT, **kwargs))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name", WIRES)
class TestDroppedConnection:
    """R1: errors raised while the body is read are mapped, and retried when nothing showed."""

    def test_a_connection_dropped_mid_body_is_a_retryable_response_error(
        self, openai_loopback: OpenAILoopback, name: WireName, stream: bool, kind: ClientKind
    ) -> None:
        """With no retries left the error surfaces typed, phase response, retryable."""
        reply = wire(name).reply(ANSWER, stream=stream)
        assert reply.raw is not None or not stream
        raw = reply.raw if reply.raw is not None else b""
        cut = len(raw) // 3 if stream else 20
        openai_loopback.reply(
            Reply(raw=reply.raw, body=reply.body, headers=reply.headers, cut_after=cut)
        )
        adapter = _adapter(name, openai_loopback, kind, stream=stream)
        with pytest.raises(
            ProviderError, match="the connection broke while the reply was read"
        ) as caught:
            _evaluate(adapter, kind)
        assert (caught.value.phase, caught.value.retryable) == ("response", True)
        assert caught.value.provider_payload == {"error": "connection"}
        assert "RemoteProtocolError" in caught.value.reason

    def test_a_drop_before_any_text_is_retried(
        self, openai_loopback: OpenAILoopback, name: WireName, stream: bool, kind: ClientKind
    ) -> None:
        """Nothing reached the caller, so the loop sends again and the second reply wins."""
        reply = wire(name).reply(ANSWER, stream=stream)
        cut = 10  # inside the first event (or the JSON body): no text was read
        openai_loopback.reply(
            Reply(raw=reply.raw, body=reply.body, headers=reply.headers, cut_after=cut), reply
        )
        adapter = _adapter(name, openai_loopback, kind, stream=stream, max_retries=1)
        response = _evaluate(adapter, kind)
        assert response.text == "Hello world"
        assert len(openai_loopback.requests) == 2


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", WIRES)
def test_a_drop_after_streamed_text_is_not_retried(
    openai_loopback: OpenAILoopback, name: WireName, kind: ClientKind
) -> None:
    """R1: 'Hello' reached subscribers, so a resend would repeat it: the error stands."""
    reply = wire(name).reply(ANSWER, stream=True)
    assert reply.raw is not None
    openai_loopback.reply(
        Reply(raw=reply.raw, headers=reply.headers, cut_after=_after_first_text(reply.raw)), reply
    )
    bus = InProcessEventBus()
    deltas: list[str] = []
    bus.subscribe(TextDelta, lambda event: deltas.append(event.text))
    adapter = _adapter(name, openai_loopback, kind, stream=True, max_retries=3)
    with pytest.raises(ProviderError, match="the connection broke") as caught:
        _evaluate(adapter, kind, bus=bus)
    assert caught.value.phase == "response"
    assert deltas == ["Hello"]
    assert len(openai_loopback.requests) == 1


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", WIRES)
def test_a_stream_stalling_past_the_deadline_is_a_deadline_error(
    openai_loopback: OpenAILoopback, name: WireName, kind: ClientKind
) -> None:
    """R2: the attempt is bounded by the deadline as a whole, sync client included."""
    reply = wire(name).reply(ANSWER, stream=True)
    assert reply.raw is not None
    stall = _after_first_text(reply.raw)
    openai_loopback.reply(Reply(raw=reply.raw, headers=reply.headers, stall_after=stall))
    adapter = _adapter(name, openai_loopback, kind, stream=True, max_retries=2, timeout=60.0)
    deadline = datetime.now(UTC) + timedelta(seconds=0.5)
    with pytest.raises(PromptEvaluationError, match=r"deadline .* passed during round 1") as caught:
        _evaluate(adapter, kind, deadline=deadline)
    assert caught.value.phase == "request"
    assert isinstance(caught.value.__cause__, ProviderError)
    assert len(openai_loopback.requests) == 1


@pytest.mark.parametrize("name", WIRES)
def test_a_sync_read_timeout_mid_stream_is_typed(
    openai_loopback: OpenAILoopback, name: WireName
) -> None:
    """R2 without a deadline: the client's own read timeout is a retryable response error."""
    reply = wire(name).reply(ANSWER, stream=True)
    assert reply.raw is not None
    stall = _after_first_text(reply.raw)
    openai_loopback.reply(Reply(raw=reply.raw, headers=reply.headers, stall_after=stall))
    adapter = _adapter(name, openai_loopback, "sync", stream=True, timeout=0.3)
    with pytest.raises(ProviderError, match="the reply stopped arriving") as caught:
        adapter.evaluate(PROMPT)
    assert (caught.value.phase, caught.value.retryable) == ("response", True)
    assert "ReadTimeout" in caught.value.reason


@pytest.mark.parametrize("name", WIRES)
class TestAsyncClientOnTwoLoops:
    """R3: an async client used from a second event loop gets a typed error saying what to do.

    The server keeps connections alive (HTTP/1.1), so the client pools them, as against a
    real provider; a pooled connection belongs to the loop that opened it.
    """

    def test_a_second_asyncio_run_is_refused_before_sending(
        self, keepalive_loopback: OpenAILoopback, name: WireName
    ) -> None:
        """The client's connection belongs to the first loop: the second run is refused."""
        keepalive_loopback.reply(wire(name).reply(ANSWER))
        adapter = _adapter(name, keepalive_loopback, "async", stream=False)
        with asyncio.Runner() as first:
            assert first.run(adapter.evaluate_async(PROMPT)).text == "Hello world"
            with pytest.raises(
                PromptEvaluationError, match="already ran on another event loop"
            ) as caught:
                asyncio.run(adapter.evaluate_async(PROMPT))
            first.run(adapter.provider.sdk_client.close())
        assert caught.value.phase == "request"
        assert "pass a sync client, which works from any loop" in caught.value.reason
        assert len(keepalive_loopback.requests) == 1

    def test_evaluate_after_evaluate_async_is_refused(
        self, keepalive_loopback: OpenAILoopback, name: WireName
    ) -> None:
        """evaluate runs on the library's own loop, which is not the caller's: refused."""
        keepalive_loopback.reply(wire(name).reply(ANSWER))
        adapter = _adapter(name, keepalive_loopback, "async", stream=False)
        with asyncio.Runner() as first:
            first.run(adapter.evaluate_async(PROMPT))
            with pytest.raises(PromptEvaluationError, match="evaluate runs on the library's own"):
                adapter.evaluate(PROMPT)
            first.run(adapter.provider.sdk_client.close())
        assert len(keepalive_loopback.requests) == 1

    def test_evaluate_async_after_evaluate_is_refused(
        self, keepalive_loopback: OpenAILoopback, name: WireName
    ) -> None:
        """The other way round: the library's loop opened the connection; asyncio.run is refused."""
        keepalive_loopback.reply(wire(name).reply(ANSWER))
        adapter = _adapter(name, keepalive_loopback, "async", stream=False)
        assert adapter.evaluate(PROMPT).text == "Hello world"
        with pytest.raises(PromptEvaluationError, match="already ran on another event loop"):
            asyncio.run(adapter.evaluate_async(PROMPT))
        run_sync(adapter.provider.sdk_client.close())
        assert len(keepalive_loopback.requests) == 1

    def test_one_loop_serves_every_evaluation(
        self, keepalive_loopback: OpenAILoopback, name: WireName
    ) -> None:
        """On one loop the client and its pooled connection are reused freely."""
        keepalive_loopback.reply(wire(name).reply(ANSWER), wire(name).reply(ANSWER))
        adapter = _adapter(name, keepalive_loopback, "async", stream=False)

        async def twice() -> list[str]:
            first = await adapter.evaluate_async(PROMPT)
            second = await adapter.evaluate_async(PROMPT)
            return [first.text, second.text]

        async def twice_and_close() -> list[str]:
            texts = await twice()
            await adapter.provider.sdk_client.close()
            return texts

        assert asyncio.run(twice_and_close()) == ["Hello world", "Hello world"]
        assert len(keepalive_loopback.requests) == 2

    def test_a_sync_client_works_from_any_loop(
        self, keepalive_loopback: OpenAILoopback, name: WireName
    ) -> None:
        """What the error advises: a sync client serves evaluate and two asyncio.run calls."""
        keepalive_loopback.reply(*(wire(name).reply(ANSWER) for _ in range(3)))
        adapter = _adapter(name, keepalive_loopback, "sync", stream=False)
        texts = [
            asyncio.run(adapter.evaluate_async(PROMPT)).text,
            adapter.evaluate(PROMPT).text,
            asyncio.run(adapter.evaluate_async(PROMPT)).text,
        ]
        assert texts == ["Hello world"] * 3
        adapter.provider.sdk_client.close()


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", WIRES)
def test_cancelling_mid_stream_closes_the_connection_at_once(
    openai_loopback: OpenAILoopback, name: WireName, kind: ClientKind
) -> None:
    """U7: the socket is closed when the evaluation is cancelled, not at the read timeout.

    The client's read timeout is a minute; the server sees the connection close within
    seconds of the cancel, and nothing is published after ``PromptFailed``.
    """
    reply = wire(name).reply(ANSWER, stream=True)
    assert reply.raw is not None
    stall = _after_first_text(reply.raw)
    openai_loopback.reply(Reply(raw=reply.raw, headers=reply.headers, stall_after=stall))
    adapter = _adapter(name, openai_loopback, kind, stream=True, timeout=60.0)
    bus = InProcessEventBus()
    session = Session(bus=bus)
    seen: list[str] = []

    async def run() -> None:
        task = asyncio.current_task()
        assert task is not None

        def on_delta(event: TextDelta) -> None:
            seen.append(event.text)
            task.cancel()

        bus.subscribe(TextDelta, on_delta)
        await adapter.evaluate_async(PROMPT, bus=bus, session=session)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(run())
    assert openai_loopback.client_left.wait(timeout=10)
    assert seen == ["Hello"]
    (failed,) = session.select(PromptFailed)
    assert failed.phase == "cancelled"
