"""Sync SDK clients under the async loop: the blocking call runs on a worker thread.

Streamed text produced on that thread is handed back to the loop in order, so the
loop's own callbacks (publishing ``TextDelta``, filling the accumulator) always run on
the loop's thread.

A worker thread cannot be cancelled, but the socket it reads from can be cut: when the
awaiting task is cancelled or runs out of time, :class:`ReplyCutter` shuts the reply's
socket down, so the blocked read ends at once (instead of at the client's read timeout)
and the connection is not reused. Text the thread produces after that is dropped, so
nothing reaches the caller after the attempt ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Callable

from weakincentives.adapters._provider import TextSink

__all__ = ["ReplyCutter", "run_blocking"]


class ReplyCutter:
    """Cuts the connection of the reply a worker thread is reading, from another thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reply: object = None
        self._cut = False
        self._finished = False

    @property
    def cut(self) -> bool:
        """True once the attempt was cut short: the thread's text and result are discarded."""
        return self._cut

    def reading(self, reply: object) -> None:
        """The worker thread starts reading ``reply`` (an ``httpx`` response)."""
        with self._lock:
            self._reply = reply
            cut = self._cut
        if cut:
            _shut(reply)

    def finished(self) -> None:
        """The worker thread is done with the reply; its connection may be pooled again."""
        with self._lock:
            self._finished = True

    def cut_now(self) -> None:
        """Cut the reply's connection unless the thread already finished with it."""
        with self._lock:
            self._cut = True
            reply = None if self._finished else self._reply
        if reply is not None:
            _shut(reply)


def _shut(reply: object) -> None:
    """Shut the reply's socket down: a read blocked on it in another thread returns at once.

    ``close()`` alone would not wake a thread blocked in ``recv`` on Linux; ``shutdown``
    does. Only HTTP/1.1 connections expose their socket; others are left to time out.
    """
    extensions = getattr(reply, "extensions", None)
    stream = extensions.get("network_stream") if isinstance(extensions, dict) else None
    get_extra_info = getattr(stream, "get_extra_info", None)
    sock = get_extra_info("socket") if callable(get_extra_info) else None
    if isinstance(sock, socket.socket):
        with contextlib.suppress(OSError):  # already closed by the peer or by the thread
            sock.shutdown(socket.SHUT_RDWR)


async def run_blocking[T](
    call: Callable[[TextSink], T], on_text: TextSink, cutter: ReplyCutter
) -> T:
    """Run ``call(forward)`` on a worker thread; text passed to ``forward`` reaches ``on_text``.

    Every piece of text reaches ``on_text`` before the result is returned: both travel
    through the loop's callback queue, in the order the thread produced them. If the
    awaiting task is cancelled (or times out), the reply's connection is cut and no
    later text is delivered.
    """
    loop = asyncio.get_running_loop()

    def deliver(text: str) -> None:
        if not cutter.cut:
            on_text(text)

    def forward(text: str) -> None:
        if not cutter.cut:
            loop.call_soon_threadsafe(deliver, text)

    try:
        return await asyncio.to_thread(call, forward)
    except asyncio.CancelledError:
        cutter.cut_now()
        raise
