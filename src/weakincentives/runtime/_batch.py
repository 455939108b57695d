"""Running several tool calls at once: async calls as tasks, sync calls on few threads.

Handing every sync call to a worker thread of its own costs a thread hop per call,
and quick calls gain nothing from more threads (they share one GIL). So a batch's
threaded calls wait in a queue that one worker thread (a drain) works through, whole
calls at a time, and another drain joins (up to ``max_concurrency``) only when the
running ones block. Nothing polls while calls run: a drain that starts a call while
others wait asks the loop to look after :data:`RAMP_SECONDS` whether any call finished
meanwhile; the loop looks again at that pace only while calls still wait and another
drain may join, and finished calls reach it in one wake-up per burst.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from weakincentives.prompt import ExecutionScope, Tool
from weakincentives.runtime._steps import (
    ToolCall,
    ToolExecution,
    _Interrupted,
    finish,
    invoke,
    prepare,
    run_here,
)

__all__ = ["RAMP_SECONDS", "execute_tool_calls"]

RAMP_SECONDS = 0.001
"""How long the running drains may all make no progress, while calls wait for a
worker thread, before another drain joins."""

type Finished = Callable[[int, ToolExecution], None]


async def execute_tool_calls(
    calls: Sequence[ToolCall],
    scope: ExecutionScope,
    *,
    tools: Mapping[str, Tool[Any, Any]],
    max_concurrency: int,
    on_done: Finished,
) -> None:
    """Run ``calls`` concurrently, at most ``max_concurrency`` at a time; publish nothing.

    ``on_done(index, execution)`` runs on the loop's thread as each call finishes, in
    whatever order they finish; it is never called once the batch has ended (by
    cancellation or an interrupt), so nothing of a cancelled batch reaches observers
    late. Tool-level problems are failed results, as for ``execute_tool_call``. A
    handler's ``KeyboardInterrupt`` or ``SystemExit`` ends the batch at once and
    propagates; the other calls' worker threads finish their current call unobserved.
    """
    try:
        await _Batch(calls, scope, tools, max_concurrency, on_done).run()
    except BaseExceptionGroup as group:
        # The task group reports an interrupt (a BaseException) in a group of its own.
        carried = next((e for e in group.exceptions if isinstance(e, _Interrupted)), None)
        if carried is None:
            raise
        raise carried.signal from None


@dataclass(eq=False, slots=True)
class _Batch:
    """One batch while it runs; the drains' side is marked "worker thread"."""

    calls: Sequence[ToolCall]
    scope: ExecutionScope
    tools: Mapping[str, Tool[Any, Any]]
    max_concurrency: int
    on_done: Finished
    _limit: asyncio.Semaphore = field(init=False)
    _loop: asyncio.AbstractEventLoop = field(init=False)
    _context: contextvars.Context = field(init=False)
    """The caller's context: every threaded call runs in a copy of it, whichever drain
    runs it (a drain that joins later starts from a loop callback, whose own context
    is a worker thread's, without the caller's variables or its trace span)."""
    _group: asyncio.TaskGroup | None = field(default=None, init=False)
    _closed: bool = field(default=False, init=False)
    """No outcome is reported once set (the batch ended, or was interrupted)."""
    _finished: int = field(default=0, init=False)
    # The threaded calls: queue, arrivals and the ramp's state.
    _queue: deque[int] = field(default_factory=deque, init=False)
    _arrived: deque[tuple[int, ToolExecution | _Interrupted]] = field(
        default_factory=deque, init=False
    )
    _wake_pending: bool = field(default=False, init=False)
    _stopped: bool = field(default=False, init=False)
    """No threaded call starts, and no threaded outcome is taken, once set."""
    _waiting: int = field(default=0, init=False)
    _all_arrived: asyncio.Future[None] | None = field(default=None, init=False)
    _drains: int = field(default=0, init=False)
    _watching: bool = field(default=False, init=False)
    _mark: int = field(default=0, init=False)
    _timer: asyncio.TimerHandle | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._limit = asyncio.Semaphore(self.max_concurrency)
        self._loop = asyncio.get_running_loop()
        self._context = contextvars.copy_context()

    async def run(self) -> None:
        threaded: list[int] = []
        inline: list[int] = []
        try:
            async with asyncio.TaskGroup() as group:
                self._group = group
                for index, call in enumerate(self.calls):
                    where = self._where_it_runs(call)
                    if where == "task":
                        group.create_task(self._run_task(index))
                    else:
                        (threaded if where == "thread" else inline).append(index)
                if threaded:
                    group.create_task(self._run_threaded(threaded))
                # Calls that would not leave the loop's thread anyway (sync handlers with
                # run_in_thread=False, unknown tools) run here, without a task each. Each
                # holds a slot: one handing back an awaitable lets the tasks run meanwhile.
                for index in inline:
                    async with self._limit:
                        execution = await self._run_inline(index)
                    self._done(index, execution)
        finally:
            self._close()

    def _where_it_runs(self, call: ToolCall) -> Literal["task", "thread", "inline"]:
        tool = self.tools.get(call.name)
        if tool is None or tool.handler is None:
            return "inline"
        if tool.is_async:
            return "task"
        return "thread" if tool.run_in_thread else "inline"

    async def _run_inline(self, index: int) -> ToolExecution:
        call = self.calls[index]
        state = prepare(call, self.scope, self.tools)
        if state.result is None:
            try:
                await invoke(state, self.scope)
            except _Interrupted:
                self._close()
                raise
        return finish(call, state, self.scope)

    async def _run_task(self, index: int) -> None:
        async with self._limit:
            execution = await self._run_inline(index)
        self._done(index, execution)

    def _done(self, index: int, execution: ToolExecution) -> None:
        if self._closed:
            return
        self._finished += 1
        self.on_done(index, execution)

    def _close(self) -> None:
        """End the batch: no call starts and no outcome is reported from now on."""
        self._closed = True
        self._stop_threads()

    def _stop_threads(self) -> None:
        self._stopped = True
        self._queue.clear()
        self._watching = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    # --- threaded calls -------------------------------------------------------------

    async def _run_threaded(self, indices: list[int]) -> None:
        self._queue.extend(indices)
        self._waiting = len(indices)
        self._all_arrived = self._loop.create_future()
        try:
            self._start_drain()
            await self._all_arrived
        finally:
            # Done, failed or cancelled: calls still on worker threads go unobserved.
            self._stop_threads()

    def _start_drain(self) -> None:
        assert self._group is not None
        self._drains += 1
        self._group.create_task(self._drain())

    async def _drain(self) -> None:
        async with self._limit:
            if self._queue and not self._stopped:
                await self._loop.run_in_executor(self.scope.executor, self._work, self._context)

    def _work(self, context: contextvars.Context) -> None:
        """Worker thread: run queued calls, whole, until the queue is empty or closed."""
        calls, scope, tools, loop = self.calls, self.scope, self.tools, self._loop
        while not self._stopped:
            try:
                index = self._queue.popleft()
            except IndexError:
                return
            if self._queue and not self._watching and self._drains < self.max_concurrency:
                self._watching = True  # calls wait behind this one: ask the loop to watch
                self._signal(self._watch)
            # Each call gets its own copy of the caller's context, as a task would.
            outcome = context.copy().run(_run_whole, calls[index], scope, tools, loop)
            self._arrived.append((index, outcome))
            if not self._wake_pending:  # one wake-up carries every outcome since
                self._wake_pending = True
                self._signal(self._take_arrived)
            if isinstance(outcome, _Interrupted):
                return

    def _signal(self, callback: Callable[[], None]) -> None:
        """Worker thread: schedule ``callback`` on the loop, unless the loop is gone."""
        try:
            self._loop.call_soon_threadsafe(callback)
        except RuntimeError:  # the loop closed: nobody waits for this batch any more
            self._stopped = True

    def _take_arrived(self) -> None:
        self._wake_pending = False
        while self._arrived and not self._stopped:
            index, outcome = self._arrived.popleft()
            if isinstance(outcome, _Interrupted):
                self._close()
                if self._all_arrived is not None and not self._all_arrived.done():
                    self._all_arrived.set_exception(outcome)
                return
            self._waiting -= 1
            self._done(index, outcome)
        if self._waiting == 0 and self._all_arrived is not None and not self._all_arrived.done():
            self._all_arrived.set_result(None)

    def _watch(self) -> None:
        """Check once, after the ramp delay, whether the running drains are blocked."""
        if self._stopped:
            return
        self._mark = self._finished
        self._timer = self._loop.call_later(RAMP_SECONDS, self._check)

    def _check(self) -> None:
        self._timer = None
        if self._stopped or not self._queue or self._drains >= self.max_concurrency:
            self._watching = False  # nothing waits, or no room: the next start asks again
            return
        if self._finished == self._mark:  # no call finished: the running ones block
            self._start_drain()
        self._watch()


def _run_whole(
    call: ToolCall,
    scope: ExecutionScope,
    tools: Mapping[str, Tool[Any, Any]],
    loop: asyncio.AbstractEventLoop,
) -> ToolExecution | _Interrupted:
    """Worker thread: prepare, run and finish one sync call without a hop to the loop."""
    state = prepare(call, scope, tools)
    if state.result is None:
        interrupted = run_here(state, loop)
        if interrupted is not None:
            return interrupted
    return finish(call, state, scope)
