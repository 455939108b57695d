"""Requests read but not answered yet, so the end of stdin does not drop them.

A client may write its requests and close stdin at once (a file as stdin, or
``printf ... | wink mcp serve``). The SDK's serving loop ends when its input ends and
cancels the handlers still running, so those requests would never be answered. The
reader records each request's id; the writer crosses it off when the answer goes
out; at the end of input the reader waits (bounded) until nothing is pending.
"""

from __future__ import annotations

from typing import Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from mcp import types
from mcp.shared.message import SessionMessage

__all__ = ["DRAIN_SECONDS", "Outbound", "PendingRequests"]

DRAIN_SECONDS = 60.0
"""How long the end of input waits for the answers still due."""

type RequestId = str | int


class Outbound(Protocol):
    """Where the server's messages go (the SDK's write stream)."""

    async def send(self, item: SessionMessage, /) -> None:
        """Queue ``item`` for the client."""
        ...

    async def aclose(self) -> None:
        """Say that nothing more will be sent."""
        ...


class PendingRequests:
    """The ids of requests handed to the server and not answered yet."""

    def __init__(self) -> None:
        self._ids: set[RequestId] = set()
        self._idle = anyio.Event()
        self._idle.set()

    def sent(self, message: SessionMessage) -> None:
        """Note ``message`` going to the server: a request waits for its answer."""
        if isinstance(message.message, types.JSONRPCRequest):
            self._ids.add(message.message.id)
            if self._idle.is_set():
                self._idle = anyio.Event()

    def answered(self, message: SessionMessage) -> None:
        """Note ``message`` going to the client: an answer crosses its request off."""
        root = message.message
        if isinstance(root, types.JSONRPCResponse | types.JSONRPCError) and root.id is not None:
            self._ids.discard(root.id)
            if not self._ids:
                self._idle.set()

    async def drained(self, seconds: float = DRAIN_SECONDS) -> bool:
        """Wait until every request is answered; False when ``seconds`` pass first."""
        with anyio.move_on_after(seconds):
            await self._idle.wait()
            return True
        return False

    async def forward(
        self, from_server: MemoryObjectReceiveStream[SessionMessage], outbound: Outbound
    ) -> None:
        """Pass the server's messages to ``outbound``, crossing off each answer.

        ``outbound`` is closed once the server has closed its side.
        """
        async with from_server:
            async for message in from_server:
                await outbound.send(message)
                self.answered(message)
        await outbound.aclose()
