"""Sync SDK clients under the async loop: the blocking call runs on a worker thread.

Streamed text produced on that thread is handed back to the loop in order, so the
loop's own callbacks (publishing ``TextDelta``, filling the accumulator) always run on
the loop's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from weakincentives.adapters._provider import TextSink

__all__ = ["run_blocking"]


async def run_blocking[T](call: Callable[[TextSink], T], on_text: TextSink) -> T:
    """Run ``call(forward)`` on a worker thread; text passed to ``forward`` reaches ``on_text``.

    Every piece of text reaches ``on_text`` before the result is returned: both travel
    through the loop's callback queue, in the order the thread produced them.
    """
    loop = asyncio.get_running_loop()

    def forward(text: str) -> None:
        loop.call_soon_threadsafe(on_text, text)

    return await asyncio.to_thread(call, forward)
