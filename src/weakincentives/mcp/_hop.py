"""Await work on the event loop a connection lives on, from any loop, bounded.

Requests may come from any loop: from the connection's own loop they are awaited
directly; from another they are handed over (``asyncio.run_coroutine_threadsafe``,
awaited through ``asyncio.wrap_future``): one call path, with a hop where needed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from weakincentives.mcp._errors import MCPConnectionError, MCPTimeoutError

__all__ = ["hop", "running_loop"]


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The running event loop, or None outside one."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def hop[T](
    loop: asyncio.AbstractEventLoop,
    coroutine: Coroutine[Any, Any, T],
    *,
    guard: float | None,
    server: str,
) -> T:
    """Await ``coroutine`` on ``loop``, hopping there from any other loop.

    ``guard`` bounds the hop: the work bounds itself, but ``loop`` could stop while
    the caller waits, and then nothing would ever settle the hop.
    """
    if running_loop() is loop:
        return await coroutine
    if loop.is_closed() or not loop.is_running():
        coroutine.close()
        raise MCPConnectionError(
            "the event loop that opened the connection is no longer running; open the "
            "toolbox where it is used (MCPToolbox.open for scripts)",
            server=server,
            operation="call_tool",
        )
    handed = asyncio.run_coroutine_threadsafe(coroutine, loop)
    try:
        async with asyncio.timeout(guard):
            return await asyncio.wrap_future(handed)
    except TimeoutError as exc:
        assert guard is not None  # without a guard the hop never times out
        raise MCPTimeoutError(
            f"no answer within {guard:g} s (the connection's event loop did not respond)",
            server=server,
            operation="call_tool",
            timeout=guard,
        ) from exc
