"""Tool rounds that go wrong (issue 26): interrupts, cancellations, deadlines, nesting, reducers.

Each test names the entry it covers. Nothing here sleeps: handlers block on events that
the test (or its teardown) releases, and waits are bounded by ``WAIT``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor as ThreadPool
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
)
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    ToolInvoked,
)

WAIT = 5.0
"""Upper bound for waits that must succeed at once; reaching it fails the test, never hangs it."""

type Kind = Literal["sync", "async", "inline"]


class OwnSignal(BaseException):
    """A library's own BaseException, as pytest's ``Failed`` or trio's ``Cancelled`` are."""


@dataclass(frozen=True)
class Step:
    name: str


def tool(name: str, run: Callable[[Step], str], kind: Kind = "sync") -> Tool[Step, None]:
    """A tool whose handler is ``run`` as a sync, async or inline (on the loop) handler."""

    def sync_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=run(params))

    async def async_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=run(params))

    if kind == "async":
        return Tool(name=name, description="Step.", handler=async_handler)
    return Tool(name=name, description="Step.", handler=sync_handler, run_in_thread=kind == "sync")


def prompt_with(*tools: Tool[Any, Any]) -> Prompt[None]:
    return Prompt(
        ns="tests/tool-failures",
        key="task",
        sections=[MarkdownSection(title="Task", template="Do it.", tools=tools)],
    )


def turn(*names: str) -> ScriptedTurn:
    return ScriptedTurn(
        calls=tuple(
            ScriptedCall(name=name, arguments={"name": f"{name}-{index}"}, call_id=f"c{index}")
            for index, name in enumerate(names)
        )
    )


def recorded(bus: InProcessEventBus) -> list[object]:
    events: list[object] = []
    bus.subscribe(object, events.append)
    return events


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event blocked handlers wait on; set in teardown so no thread is left waiting."""
    event = threading.Event()
    yield event
    event.set()


class TestInterrupts:
    """H1: KeyboardInterrupt and SystemExit from a handler reach the caller at once."""

    @pytest.mark.parametrize("signal", [KeyboardInterrupt, SystemExit])
    @pytest.mark.parametrize("kind", ["sync", "async", "inline"])
    def test_a_lone_call_interrupts_evaluate_and_publishes_nothing_more(
        self, signal: type[BaseException], kind: Kind
    ) -> None:
        """The signal propagates from evaluate; no ToolInvoked, no PromptFailed."""

        def stop(params: Step) -> str:
            raise signal("stop")

        bus = InProcessEventBus()
        events = recorded(bus)
        adapter = OfflineAdapter([turn("stop"), ScriptedTurn(text="never")])
        with pytest.raises(signal, match="stop"):
            adapter.evaluate(prompt_with(tool("stop", stop, kind)), bus=bus)
        assert [type(event).__name__ for event in events] == ["PromptRendered"]
        # The shared background loop survived: the next evaluation runs.
        again = OfflineAdapter([ScriptedTurn(text="still here")]).evaluate(prompt_with())
        assert again.text == "still here"

    @pytest.mark.parametrize("kind", ["sync", "async"])
    def test_an_interrupt_does_not_wait_for_the_other_calls(
        self, kind: Kind, release: threading.Event
    ) -> None:
        """A call still blocked when another raises KeyboardInterrupt does not hold it back."""
        blocked = threading.Event()

        def sync_stop(params: Step, *, context: ToolContext) -> ToolResult[None]:
            assert blocked.wait(WAIT)  # the other call is running, and stays blocked
            raise KeyboardInterrupt("stop")

        async def async_stop(params: Step, *, context: ToolContext) -> ToolResult[None]:
            assert await asyncio.to_thread(blocked.wait, WAIT)
            raise KeyboardInterrupt("stop")

        def hold(params: Step) -> str:
            blocked.set()
            release.wait(WAIT)
            return "released"

        stopper = Tool(
            name="stop", description="Stop.", handler=sync_stop if kind == "sync" else async_stop
        )
        bus = InProcessEventBus()
        events = recorded(bus)
        adapter = OfflineAdapter([turn("hold", "stop"), ScriptedTurn(text="never")])
        tools = (tool("hold", hold), stopper)
        with pytest.raises(KeyboardInterrupt, match="stop"):
            adapter.evaluate(prompt_with(*tools), bus=bus)
        assert not release.is_set()  # evaluate returned while "hold" was still blocked
        assert not [event for event in events if isinstance(event, ToolInvoked | PromptFailed)]

    def test_evaluate_async_raises_the_interrupt_in_the_callers_task(self) -> None:
        """Under evaluate_async the handler's SystemExit propagates out of the caller's await."""

        def stop(params: Step) -> str:
            raise SystemExit(3)

        adapter = OfflineAdapter([turn("stop", "stop"), ScriptedTurn(text="never")])

        async def main() -> None:
            await adapter.evaluate_async(prompt_with(tool("stop", stop)))

        with pytest.raises(SystemExit) as caught:
            asyncio.run(main())
        assert caught.value.code == 3


class TestCancellation:
    """L1 (a handler's own CancelledError) and L2 (nothing after PromptFailed)."""

    @pytest.mark.parametrize("kind", ["sync", "async", "inline"])
    def test_a_handlers_own_cancellation_is_a_failure_the_model_reads(self, kind: Kind) -> None:
        """Every call of the turn runs, is recorded and answered; the cancelled one failed."""

        def step(params: Step) -> str:
            if params.name == "step-1":
                raise asyncio.CancelledError
            return params.name

        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter([turn("step", "step", "step"), ScriptedTurn(text="done")])
        response = adapter.evaluate(prompt_with(tool("step", step, kind)), session=session)
        assert response.text == "done"
        assert [(r.success, r.message) for r in response.tool_results] == [
            (True, "step-0"),
            (False, "Tool 'step' failed: its work was cancelled before it finished."),
            (True, "step-2"),
        ]
        assert [e.call_id for e in session.select(ToolInvoked)] == ["c0", "c1", "c2"]
        outputs = [
            item.call_id
            for item in adapter.provider.requests[1].history
            if isinstance(item, ToolOutputMessage)
        ]
        assert outputs == ["c0", "c1", "c2"]

    @pytest.mark.parametrize("signal", [GeneratorExit, OwnSignal])
    @pytest.mark.parametrize("kind", ["sync", "async", "inline"])
    @pytest.mark.parametrize("calls", [1, 3])
    def test_a_handlers_other_base_exception_is_a_failure_the_model_reads(
        self, signal: type[BaseException], kind: Kind, calls: int
    ) -> None:
        """GeneratorExit or a library's BaseException fails its call; the evaluation goes on."""

        def step(params: Step) -> str:
            if params.name == "step-0":
                raise signal("stop")
            return params.name

        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter([turn(*["step"] * calls), ScriptedTurn(text="done")])
        response = adapter.evaluate(prompt_with(tool("step", step, kind)), session=session)
        assert response.text == "done"
        results = [(r.success, r.message) for r in response.tool_results]
        assert results[0] == (False, f"Tool 'step' failed: {signal.__name__}: stop")
        assert results[1:] == [(True, f"step-{index}") for index in range(1, calls)]
        assert [e.call_id for e in session.select(ToolInvoked)] == [f"c{i}" for i in range(calls)]
        assert len(session.select(PromptExecuted)) == 1

    @pytest.mark.parametrize("kind", ["sync", "async"])
    def test_cancelling_the_evaluation_is_prompt_failed_and_then_silence(
        self, kind: Kind, release: threading.Event
    ) -> None:
        """Cancelled mid-round: PromptFailed(cancelled) is the last event, even once calls end."""
        started = threading.Barrier(4, timeout=WAIT)
        executors: list[object] = []

        def hold(params: Step) -> str:
            started.wait()
            release.wait(WAIT)
            return params.name

        def sync_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
            executors.append(context.scope.executor)
            return ToolResult(message=hold(params))

        async def async_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
            await asyncio.to_thread(started.wait)
            await asyncio.Event().wait()  # until cancelled
            return ToolResult(message="never")

        handler = sync_handler if kind == "sync" else async_handler
        held = Tool(name="hold", description="Hold.", handler=handler)
        bus = InProcessEventBus()
        events = recorded(bus)
        adapter = OfflineAdapter([turn("hold", "hold", "hold"), ScriptedTurn(text="never")])

        async def main() -> None:
            task = asyncio.create_task(adapter.evaluate_async(prompt_with(held), bus=bus))
            await asyncio.to_thread(started.wait)  # all three calls are running
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            release.set()
            for executor in {id(e): e for e in executors}.values():
                assert isinstance(executor, ThreadPool)
                await asyncio.to_thread(executor.shutdown, True)  # the workers are done
            for _ in range(3):
                await asyncio.sleep(0)  # whatever they handed to the loop has run

        asyncio.run(main())
        failed = events[-1]
        assert isinstance(failed, PromptFailed)
        assert failed.phase == "cancelled"
        assert not [event for event in events if isinstance(event, ToolInvoked)]


@settings(max_examples=40)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["sync", "async", "inline"]),
            st.sampled_from(["ok", "raises", "cancels"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_every_call_of_a_turn_is_run_recorded_and_answered(
    plan: list[tuple[Kind, Literal["ok", "raises", "cancels"]]],
) -> None:
    """L1 as a property: whichever calls raise or cancel themselves, none is lost."""
    tools: list[Tool[Any, Any]] = []
    for index, (kind, outcome) in enumerate(plan):

        def run(params: Step, outcome: str = outcome) -> str:
            if outcome == "raises":
                raise ValueError("bad")
            if outcome == "cancels":
                raise asyncio.CancelledError
            return params.name

        tools.append(tool(f"t{index}", run, kind))
    session = Session()
    adapter = Adapter(
        OfflineModel([turn(*(t.name for t in tools)), ScriptedTurn(text="done")]),
        settings=LoopSettings(max_concurrency=3),
    )
    response = adapter.evaluate(prompt_with(*tools), session=session)
    assert response.text == "done"
    assert [r.success for r in response.tool_results] == [o == "ok" for _, o in plan]
    call_ids = [f"c{index}" for index in range(len(plan))]
    assert [e.call_id for e in session.select(ToolInvoked)] == call_ids
    assert [
        item.call_id
        for item in adapter.provider.requests[1].history
        if isinstance(item, ToolOutputMessage)
    ] == call_ids


class TestDeadline:
    """The deadline bounds the tool round too; H2: nested evaluations never deadlock."""

    @pytest.mark.parametrize("kind", ["sync", "async"])
    def test_a_blocked_call_ends_at_the_deadline_with_phase_tool(
        self, kind: Kind, release: threading.Event
    ) -> None:
        """The evaluation fails at the deadline; the blocked call is never recorded."""
        executors: list[object] = []

        def sync_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
            executors.append(context.scope.executor)
            release.wait(WAIT)
            return ToolResult(message="late")

        async def async_handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
            await asyncio.to_thread(release.wait, WAIT)
            return ToolResult(message="late")

        handler = sync_handler if kind == "sync" else async_handler
        slow = Tool(name="slow", description="Slow.", handler=handler)
        bus = InProcessEventBus()
        events = recorded(bus)
        adapter = OfflineAdapter([turn("slow"), ScriptedTurn(text="never")])
        deadline = datetime.now(UTC) + timedelta(seconds=0.3)
        with pytest.raises(PromptEvaluationError, match=r"passed during the tool calls of round 1"):
            adapter.evaluate(prompt_with(slow), bus=bus, deadline=deadline)
        assert not release.is_set()  # it ended while the call was still blocked
        release.set()
        for executor in executors:
            assert isinstance(executor, ThreadPool)
            executor.shutdown(wait=True)
        failed = events[-1]
        assert isinstance(failed, PromptFailed)
        assert (failed.phase, failed.rounds) == ("tool", 1)
        assert not [event for event in events if isinstance(event, ToolInvoked)]

    @pytest.mark.parametrize("depth", [2, 3])
    def test_nested_evaluations_run_at_max_concurrency_one(self, depth: int) -> None:
        """A sync handler evaluating a prompt of its own finds a worker thread (H2)."""
        inner = Prompt(
            ns="tests/tool-failures",
            key="inner",
            sections=[MarkdownSection(title="Inner", template="Go deeper.")],
        )

        def nest(params: Step, *, context: ToolContext) -> ToolResult[None]:
            assert context.adapter is not None
            nested_prompt = prompt_with(nesting) if params.name != "last" else inner
            nested = context.adapter.evaluate(
                nested_prompt, bus=context.event_bus, session=context.session
            )
            return ToolResult(message=f"nested said {nested.text}")

        nesting = Tool(name="nest", description="Nest.", handler=nest)
        script: list[ScriptedTurn] = []
        for level in range(depth):
            name = "last" if level == depth - 1 else "more"
            script.append(
                ScriptedTurn(calls=(ScriptedCall(name="nest", arguments={"name": name}),))
            )
        script.append(ScriptedTurn(text="bottom"))
        script.extend(ScriptedTurn(text=f"level {level}") for level in reversed(range(depth)))
        adapter = Adapter(OfflineModel(script), settings=LoopSettings(max_concurrency=1))
        session = Session()
        deadline = datetime.now(UTC) + timedelta(seconds=WAIT)
        response = adapter.evaluate(prompt_with(nesting), session=session, deadline=deadline)
        assert response.text == "level 0"
        assert len(session.select(PromptExecuted)) == depth + 1


class TestSessionWithoutBus:
    """R7: a bus-less session's failing reducer never aborts the evaluation."""

    @pytest.mark.parametrize("event_type", [ToolInvoked, PromptExecuted])
    def test_a_raising_reducer_is_reported_and_the_answer_kept(
        self, event_type: type[object], caplog: pytest.LogCaptureFixture
    ) -> None:
        """The evaluation returns the model's answer; the session skips the event it refused."""

        def refuse(slice_: tuple[object, ...], event: object) -> tuple[object, ...]:
            raise ValueError("reducer bug")

        session = Session()
        session.register_reducer(event_type, refuse)
        adapter = OfflineAdapter([turn("step"), ScriptedTurn(text="the answer")])
        response = adapter.evaluate(
            prompt_with(tool("step", lambda params: params.name)), session=session
        )
        assert response.text == "the answer"
        assert session.select(event_type) == ()
        assert "reducer bug" in caplog.text
        kept = ToolInvoked if event_type is PromptExecuted else PromptExecuted
        assert len(session.select(kept)) == 1
