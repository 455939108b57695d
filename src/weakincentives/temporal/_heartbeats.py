"""Heartbeats of a running activity, so a worker that dies is noticed in seconds.

Without heartbeats Temporal learns that an attempt is lost only when its
``start_to_close_timeout`` passes (``send_timeout``/``tool_timeout``, minutes for a slow
model). With a ``heartbeat_timeout`` the server expects a heartbeat at least that often
and, when none comes, fails the attempt and lets the retry policy start the next one on
another worker. Heartbeats are also how a running activity learns that its workflow was
cancelled: the SDK cancels the activity's task on the heartbeat that carries the news.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

__all__ = ["BEATS_PER_TIMEOUT", "heartbeating"]

BEATS_PER_TIMEOUT = 3
"""Heartbeats sent per ``heartbeat_timeout``: one lost or late beat does not fail an attempt."""


@contextlib.asynccontextmanager
async def heartbeating() -> AsyncIterator[None]:
    """Heartbeat the current activity while the body runs, if it has a heartbeat timeout.

    The beats come from a task on the worker's event loop: a tool handler that blocks
    that loop (a sync handler with ``run_in_thread=False``) for longer than the timeout
    loses its attempt, as it would stall the worker's polling too.
    """
    timeout = activity.info().heartbeat_timeout
    if timeout is None:
        yield
        return
    beats = asyncio.create_task(_beat(timeout.total_seconds() / BEATS_PER_TIMEOUT))
    try:
        yield
    finally:
        beats.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beats


async def _beat(interval: float) -> None:
    while True:
        activity.heartbeat()
        await asyncio.sleep(interval)
