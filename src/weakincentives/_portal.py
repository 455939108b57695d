"""Run a coroutine to completion from synchronous code: the sync facades' engine.

``evaluate``, discovery's ``call_tool`` and ``MCPToolbox.open`` are sync facades over
coroutines. A fresh ``asyncio.run`` per call would give every call its own event
loop, which breaks async clients (their pooled connections belong to the loop that
opened them). Instead, one long-lived loop runs on a daemon thread and every
synchronous caller submits to it and waits.

From inside that loop's own thread (a handler that opted out of worker threads and
calls ``evaluate``), waiting would deadlock, so the coroutine then runs on a
short-lived helper thread with a loop of its own.

The loop's thread is a daemon, so it never keeps a process alive; at interpreter exit
the work still running on it (an evaluation whose caller was interrupted and gave up)
is cancelled and given ``EXIT_GRACE`` seconds to finish its cleanup, instead of being
destroyed mid-flight.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any

__all__ = ["EXIT_GRACE", "run_sync"]

EXIT_GRACE = 2.0
"""Seconds the shared loop's cancelled tasks get to finish at interpreter exit."""

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _portal_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def serve() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            thread = threading.Thread(target=serve, name="weakincentives-loop", daemon=True)
            thread.start()
            ready.wait()
            if _loop is None:  # the first loop of this process: drain at exit from now on
                atexit.register(_drain_at_exit)
            _loop, _thread = loop, thread
        return _loop


def _drain_at_exit() -> None:
    """Cancel the tasks still on the shared loop and wait (bounded) until they end."""
    loop, thread = _loop, _thread
    if loop is None or thread is None or not thread.is_alive():
        return
    drained = asyncio.run_coroutine_threadsafe(_cancel_all(), loop)
    with contextlib.suppress(concurrent.futures.TimeoutError):
        drained.result(timeout=EXIT_GRACE)


async def _cancel_all() -> None:
    current = asyncio.current_task()
    pending = [task for task in asyncio.all_tasks() if task is not current]
    for task in pending:
        if not task.cancelling():  # one already cancelled is running its cleanup: let it
            task.cancel()
    if pending:
        await asyncio.wait(pending)


def run_sync[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the shared background loop and return its result.

    The caller's context variables travel with it. If the caller is interrupted
    (``KeyboardInterrupt`` in the waiting thread), the coroutine is cancelled before
    the interruption propagates. A ``KeyboardInterrupt`` or ``SystemExit`` raised by
    the coroutine itself reaches the caller as itself, and the shared loop runs on.
    """
    loop = _portal_loop()
    context = contextvars.copy_context()
    if threading.current_thread() is _thread:
        return _run_on_helper_thread(coroutine, context)
    future: concurrent.futures.Future[T] = concurrent.futures.Future()

    def start() -> None:
        if future.cancelled():  # the caller gave up before the loop got to it
            coroutine.close()
            return
        task = loop.create_task(_guarded(coroutine, future), context=context)
        future.add_done_callback(
            lambda settled: loop.call_soon_threadsafe(task.cancel) if settled.cancelled() else None
        )

    loop.call_soon_threadsafe(start)
    try:
        return future.result()
    except concurrent.futures.CancelledError as exc:
        raise asyncio.CancelledError() from exc
    except BaseException:
        # Interrupted while waiting: stop the work we started, then let the signal through.
        future.cancel()
        raise


async def _guarded[T](
    coroutine: Coroutine[Any, Any, T], future: concurrent.futures.Future[T]
) -> None:
    """Settle ``future`` with the coroutine's outcome, whatever it is.

    asyncio re-raises ``KeyboardInterrupt`` and ``SystemExit`` out of the loop from any
    task, which would stop the shared loop for every caller and leave this one waiting
    forever; caught here, they travel to the waiting thread instead. Any other
    ``BaseException`` (``GeneratorExit``, a library's own signal) travels the same way:
    left to end the task, it would settle nothing and the caller would wait forever.
    """
    # The caller may cancel the future concurrently; then nobody waits for the outcome.
    with contextlib.suppress(concurrent.futures.InvalidStateError):
        try:
            result = await coroutine
        except asyncio.CancelledError:
            future.cancel()
        except BaseException as exc:  # GeneratorExit or another signal too, not only errors
            future.set_exception(exc)
        else:
            future.set_result(result)


def _run_on_helper_thread[T](coroutine: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()
