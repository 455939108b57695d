"""execute_tool_calls: a batch of calls on few threads, reported as each one finishes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    Session,
    ToolCall,
    ToolExecution,
    execute_tool_calls,
)

WAIT = 5.0


@dataclass(frozen=True)
class Step:
    name: str


class RecordingPool(concurrent.futures.ThreadPoolExecutor):
    """A thread pool that keeps every future, to check how its work items ended."""

    def __init__(self) -> None:
        super().__init__(max_workers=4)
        self.futures: list[concurrent.futures.Future[Any]] = []

    def submit(
        self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.futures.append(future)
        return future


def scope_for(tools: list[Tool[Any, Any]], executor: concurrent.futures.Executor) -> ExecutionScope:
    prompt: Prompt[None] = Prompt(
        ns="tests/batch", key="k", sections=[MarkdownSection(title="T", template="", tools=tools)]
    )
    bus = InProcessEventBus()
    return ExecutionScope(
        prompt=prompt,
        session=Session(bus=bus),
        event_bus=bus,
        rendered_prompt=prompt.render(),
        executor=executor,
    )


def calls(*names: str) -> list[ToolCall]:
    return [
        ToolCall(call_id=f"c{index}", name=name, arguments={"name": f"{name}-{index}"})
        for index, name in enumerate(names)
    ]


def test_a_sync_handler_returning_an_awaitable_has_it_awaited_on_the_loop() -> None:
    """A plain function handing back a coroutine, run on a drain, settles on the loop."""
    loops: list[asyncio.AbstractEventLoop] = []

    async def later(params: Step) -> ToolResult[None]:
        loops.append(asyncio.get_running_loop())
        if params.name == "late-1":
            raise RuntimeError("late failure")
        return ToolResult(message=f"awaited {params.name}")

    def late(params: Step, *, context: ToolContext) -> Awaitable[ToolResult[None]]:
        return later(params)

    tool = Tool(name="late", description="Late.", handler=late)
    assert not tool.is_async
    done: dict[int, ToolExecution] = {}

    async def main() -> asyncio.AbstractEventLoop:
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            await execute_tool_calls(
                calls("late", "late"),
                scope_for([tool], pool),
                tools={"late": tool},
                max_concurrency=2,
                on_done=done.__setitem__,
            )
        return asyncio.get_running_loop()

    loop = asyncio.run(main())
    assert [(done[i].result.success, done[i].result.message) for i in (0, 1)] == [
        (True, "awaited late-0"),
        (False, "Tool 'late' failed: RuntimeError: late failure"),
    ]
    assert loops == [loop, loop]


def test_a_failing_on_done_surfaces_as_an_exception_group() -> None:
    """A bug in the caller's callback is not swallowed."""

    async def step(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=params.name)

    tool = Tool(name="step", description="Step.", handler=step)

    def broken(index: int, execution: ToolExecution) -> None:
        raise LookupError(f"no slot {index}")

    async def main() -> None:
        await execute_tool_calls(
            calls("step", "step"),
            scope_for([tool], concurrent.futures.ThreadPoolExecutor(max_workers=1)),
            tools={"step": tool},
            max_concurrency=2,
            on_done=broken,
        )

    with pytest.raises(ExceptionGroup) as caught:
        asyncio.run(main())
    messages = {str(error) for error in caught.value.exceptions}
    assert "no slot 0" in messages
    assert messages <= {"no slot 0", "no slot 1"}


def test_a_drain_outliving_its_loop_ends_quietly() -> None:
    """Cancelled, its loop closed: the worker finishes its call and reports nothing."""
    started = threading.Event()
    release = threading.Event()
    done: list[int] = []

    def hold(params: Step, *, context: ToolContext) -> ToolResult[None]:
        started.set()
        release.wait(WAIT)
        return ToolResult(message="released")

    tool = Tool(name="hold", description="Hold.", handler=hold)
    pool = RecordingPool()

    async def main() -> None:
        batch = asyncio.create_task(
            execute_tool_calls(
                calls("hold", "hold"),
                scope_for([tool], pool),
                tools={"hold": tool},
                max_concurrency=1,
                on_done=lambda index, execution: done.append(index),
            )
        )
        await asyncio.to_thread(started.wait, WAIT)
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch

    try:
        asyncio.run(main())  # closes the loop while the call is still running
    finally:
        release.set()
        pool.shutdown(wait=True)
    assert done == []
    assert [future.exception() for future in pool.futures] == [None]


def test_a_drain_that_joins_later_runs_calls_in_the_callers_context() -> None:
    """A second drain starts from a loop callback, yet its calls see the caller's context vars.

    The first call blocks until the second runs, so the second can only run on a drain
    that joined later (the trace context of the evaluation travels this way).
    """
    request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
    both_running = threading.Barrier(2, timeout=WAIT)
    seen: dict[str, str] = {}

    def step(params: Step, *, context: ToolContext) -> ToolResult[None]:
        seen[params.name] = request_id.get()
        both_running.wait()
        return ToolResult(message=params.name)

    tool = Tool(name="step", description="Step.", handler=step)

    async def main() -> None:
        request_id.set("r-7")
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            await execute_tool_calls(
                calls("step", "step"),
                scope_for([tool], pool),
                tools={"step": tool},
                max_concurrency=2,
                on_done=lambda index, execution: None,
            )

    asyncio.run(main())
    assert seen == {"step-0": "r-7", "step-1": "r-7"}


def test_an_inline_call_awaiting_its_result_counts_toward_max_concurrency() -> None:
    """A run_in_thread=False handler handing back a coroutine holds a slot while awaited."""
    running: list[str] = []
    overlaps: list[tuple[str, ...]] = []

    async def work(name: str) -> ToolResult[None]:
        running.append(name)
        overlaps.append(tuple(running))
        for _ in range(5):
            await asyncio.sleep(0)  # room for any other call to start meanwhile
        running.remove(name)
        return ToolResult(message=name)

    def inline(params: Step, *, context: ToolContext) -> Awaitable[ToolResult[None]]:
        return work(params.name)

    async def spawned(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return await work(params.name)

    tools = [
        Tool(name="inline", description="Inline.", handler=inline, run_in_thread=False),
        Tool(name="task", description="Task.", handler=spawned),
    ]
    done: dict[int, ToolExecution] = {}

    async def main() -> None:
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            await execute_tool_calls(
                calls("task", "inline", "task"),
                scope_for(tools, pool),
                tools={tool.name: tool for tool in tools},
                max_concurrency=1,
                on_done=done.__setitem__,
            )

    asyncio.run(main())
    assert sorted(done) == [0, 1, 2]
    assert all(len(overlap) == 1 for overlap in overlaps), overlaps
