"""Requests read before the end of stdin are answered before the server stops."""

from __future__ import annotations

import anyio
from mcp import types
from mcp.shared.message import SessionMessage

from weakincentives.mcp._pending import PendingRequests


def _request(request_id: int) -> SessionMessage:
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/list"))


def _answer(request_id: int | None) -> SessionMessage:
    if request_id is None:
        error = types.ErrorData(code=types.PARSE_ERROR, message="Parse error")
        return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=error))
    return SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result={}))


class _Collected:
    def __init__(self) -> None:
        self.sent: list[SessionMessage] = []
        self.closed = False

    async def send(self, item: SessionMessage, /) -> None:
        self.sent.append(item)

    async def aclose(self) -> None:
        self.closed = True


def test_nothing_pending_is_drained_at_once() -> None:
    async def run() -> bool:
        return await PendingRequests().drained(seconds=0.01)

    assert anyio.run(run) is True


def test_the_drain_waits_for_every_answer_and_only_answers_count() -> None:
    """Notifications and id-less errors cross nothing off; the last answer ends the wait."""
    order: list[str] = []

    async def run() -> None:
        pending = PendingRequests()
        pending.sent(_request(1))
        pending.sent(_request(2))
        notification = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/x")
        pending.sent(SessionMessage(notification))  # not a request: nothing to wait for

        async def answer() -> None:
            pending.answered(_answer(1))
            pending.answered(_answer(None))
            pending.answered(SessionMessage(notification))
            order.append("answered 1")
            await anyio.sleep(0)
            order.append("answering 2")
            pending.answered(_answer(2))

        async with anyio.create_task_group() as group:
            group.start_soon(answer)
            assert await pending.drained(seconds=5) is True
            order.append("drained")

    anyio.run(run)
    assert order == ["answered 1", "answering 2", "drained"]


def test_a_request_never_answered_ends_the_drain_at_its_bound() -> None:
    async def run() -> bool:
        pending = PendingRequests()
        pending.sent(_request(7))
        return await pending.drained(seconds=0.01)

    assert anyio.run(run) is False


def test_forward_passes_everything_on_crosses_answers_off_and_closes() -> None:
    async def run() -> tuple[_Collected, bool]:
        pending = PendingRequests()
        pending.sent(_request(3))
        outbound = _Collected()
        to_writer, from_server = anyio.create_memory_object_stream[SessionMessage](4)
        async with to_writer:
            await to_writer.send(_answer(3))
        await pending.forward(from_server, outbound)
        return outbound, await pending.drained(seconds=0.01)

    outbound, drained = anyio.run(run)
    assert [message.message for message in outbound.sent] == [_answer(3).message]
    assert outbound.closed is True
    assert drained is True
