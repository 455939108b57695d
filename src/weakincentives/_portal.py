"""Run a coroutine to completion from synchronous code: the sync facade's engine.

``evaluate`` and a sync ``execute_tool_call`` reaching an ``async def`` handler both
need to run a coroutine from code that is not async. A fresh ``asyncio.run`` per call
would give every call its own event loop, which breaks async clients (their pooled
connections belong to the loop that opened them). Instead, one long-lived loop runs
on a daemon thread and every synchronous caller submits to it and waits.

From inside that loop's own thread (a handler that opted out of worker threads and
calls ``evaluate``), waiting would deadlock, so the coroutine then runs on a
short-lived helper thread with a loop of its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any

__all__ = ["CALLER_LOOP", "run_on_caller_loop", "run_sync"]

CALLER_LOOP: contextvars.ContextVar[asyncio.AbstractEventLoop | None] = contextvars.ContextVar(
    "weakincentives_caller_loop", default=None
)
"""The event loop running the current evaluation, seen by its tasks and worker threads."""

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
            _loop, _thread = loop, thread
        return _loop


def run_sync[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the shared background loop and return its result.

    The caller's context variables travel with it. If the caller is interrupted
    (``KeyboardInterrupt``), the coroutine is cancelled before the interruption
    propagates.
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
        task = loop.create_task(coroutine, context=context)

        def settle(done: asyncio.Task[T]) -> None:
            # The caller may cancel the future concurrently; then nobody waits for the outcome.
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                if done.cancelled():
                    future.cancel()
                elif (error := done.exception()) is not None:
                    future.set_exception(error)
                else:
                    future.set_result(done.result())

        task.add_done_callback(settle)
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


def _run_on_helper_thread[T](coroutine: Coroutine[Any, Any, T], context: contextvars.Context) -> T:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(context.run, asyncio.run, coroutine).result()


def run_on_caller_loop[T](coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` on the evaluation's own loop from one of its worker threads.

    Sync code running for an evaluation (a sync handler on a worker thread, such as a
    discovery ``call_tool`` running a nested ``async def`` tool) waits while the
    coroutine runs on the loop that runs the evaluation, so it shares that loop's
    clients. Without such a loop, or on its own thread (where waiting would deadlock),
    it falls back to :func:`run_sync`.
    """
    loop = CALLER_LOOP.get()
    if loop is None or not loop.is_running() or _running_loop() is loop:
        return run_sync(coroutine)
    return asyncio.run_coroutine_threadsafe(coroutine, loop).result()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
