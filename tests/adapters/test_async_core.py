"""The async core on the offline adapter: loops, concurrency, order, streaming, retries."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from weakincentives.adapters import (
    Adapter,
    FeedbackMessage,
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
    OutputRejected,
    PromptExecuted,
    Session,
    TextDelta,
    ToolInvoked,
)
from weakincentives.runtime import _batch as batch

WAIT = 5.0
"""Upper bound for waits that must succeed at once; reaching it fails the test, never hangs it."""


@dataclass(frozen=True)
class Step:
    name: str


@dataclass(frozen=True)
class Verdict:
    ok: bool


def prompt_with(*tools: Tool[Any, Any], output: bool = False) -> Prompt[Any]:
    section = MarkdownSection(title="Task", key="task", template="Do it.", tools=tools)
    if output:
        return Prompt[Verdict](ns="t", key="verdict", sections=[section])
    return Prompt(ns="t", key="task", sections=[section])


def calls(*names: str) -> ScriptedTurn:
    return ScriptedTurn(
        calls=tuple(
            ScriptedCall(name=name, arguments={"name": f"{name}-{index}"}, call_id=f"c{index}")
            for index, name in enumerate(names)
        )
    )


def async_tool(
    name: str,
    body: Callable[[Step], Awaitable[str]],
    *,
    exclusive: bool = False,
    terminal: bool = False,
) -> Tool[Step, None]:
    async def handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=await body(params))

    return Tool(
        name=name,
        description=f"{name}.",
        handler=handler,
        exclusive=exclusive,
        terminal=terminal,
    )


def sync_tool(
    name: str, body: Callable[[Step], str], *, run_in_thread: bool = True
) -> Tool[Step, None]:
    def handler(params: Step, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=body(params))

    return Tool(name=name, description=f"{name}.", handler=handler, run_in_thread=run_in_thread)


class TestOneLoop:
    def test_async_handlers_run_on_the_callers_loop(self) -> None:
        """Under evaluate_async an async handler sees the loop that awaits the evaluation."""
        seen: list[asyncio.AbstractEventLoop] = []

        async def record(params: Step) -> str:
            seen.append(asyncio.get_running_loop())
            return "ok"

        adapter = OfflineAdapter([calls("record"), ScriptedTurn(text="done")])

        async def main() -> asyncio.AbstractEventLoop:
            await adapter.evaluate_async(prompt_with(async_tool("record", record)))
            return asyncio.get_running_loop()

        caller = asyncio.run(main())
        assert seen == [caller]

    def test_sync_evaluate_returns_the_same_response_as_async(self) -> None:
        """evaluate is a facade: same turns, same text, same tool results."""
        tool = sync_tool("echo", lambda params: params.name)
        script = [calls("echo"), ScriptedTurn(text="done")]
        sync = Adapter(OfflineModel(script), settings=LoopSettings(new_id=lambda: "e")).evaluate(
            prompt_with(tool)
        )
        asynchronous = asyncio.run(
            Adapter(OfflineModel(script), settings=LoopSettings(new_id=lambda: "e")).evaluate_async(
                prompt_with(tool)
            )
        )
        assert (sync.text, sync.tool_results, sync.rounds) == (
            asynchronous.text,
            asynchronous.tool_results,
            asynchronous.rounds,
        )
        assert sync.tool_results[0].message == "echo-0"

    def test_evaluate_inside_a_running_loop_does_not_deadlock(self) -> None:
        """Called from async code, evaluate runs the loop elsewhere and returns normally."""
        adapter = OfflineAdapter([ScriptedTurn(text="fine")])

        async def main() -> str:
            return adapter.evaluate(prompt_with()).text

        assert asyncio.run(main()) == "fine"

    def test_nested_evaluate_from_a_handler_on_the_loop_thread_works(self) -> None:
        """A loop-thread sync handler may call evaluate; it runs on a helper thread."""
        inner = OfflineAdapter([ScriptedTurn(text="inner answer")])

        def nested(params: Step) -> str:
            return inner.evaluate(prompt_with()).text

        tool = sync_tool("nested", nested, run_in_thread=False)
        outer = OfflineAdapter([calls("nested"), ScriptedTurn(text="outer")])
        response = outer.evaluate(prompt_with(tool))
        assert response.tool_results[0].message == "inner answer"


class TestConcurrentCalls:
    def test_calls_that_wait_for_each_other_both_finish(self) -> None:
        """Two async handlers of one turn that each wait for the other run at the same time."""
        first, second = asyncio.Event(), asyncio.Event()

        async def left(params: Step) -> str:
            first.set()
            await asyncio.wait_for(second.wait(), WAIT)
            return "left"

        async def right(params: Step) -> str:
            second.set()
            await asyncio.wait_for(first.wait(), WAIT)
            return "right"

        adapter = OfflineAdapter([calls("left", "right"), ScriptedTurn(text="done")])
        response = asyncio.run(
            adapter.evaluate_async(
                prompt_with(async_tool("left", left), async_tool("right", right))
            )
        )
        assert [result.message for result in response.tool_results] == ["left", "right"]

    def test_results_events_and_outputs_keep_the_models_order(self) -> None:
        """The first call finishes last, yet everything stays in call order."""
        last_done = asyncio.Event()

        async def slow(params: Step) -> str:
            await asyncio.wait_for(last_done.wait(), WAIT)
            return "slow"

        async def fast(params: Step) -> str:
            last_done.set()
            return "fast"

        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter([calls("slow", "fast", "fast"), ScriptedTurn(text="done")])
        response = asyncio.run(
            adapter.evaluate_async(
                prompt_with(async_tool("slow", slow), async_tool("fast", fast)),
                bus=bus,
                session=session,
            )
        )
        assert [e.call.call_id for e in response.tool_executions] == ["c0", "c1", "c2"]
        assert [e.call_id for e in session.select(ToolInvoked)] == ["c0", "c1", "c2"]
        outputs = [
            i for i in adapter.provider.requests[1].history if isinstance(i, ToolOutputMessage)
        ]
        assert [(o.call_id, o.content) for o in outputs] == [
            ("c0", "slow"),
            ("c1", "fast"),
            ("c2", "fast"),
        ]

    def test_a_sync_handler_runs_on_a_worker_thread_and_does_not_block_the_loop(self) -> None:
        """A blocking sync handler waits for an async one of the same turn, which still runs."""
        released = threading.Event()
        threads: list[threading.Thread] = []

        def blocking(params: Step) -> str:
            threads.append(threading.current_thread())
            return "released" if released.wait(WAIT) else "timed out"

        async def release(params: Step) -> str:
            released.set()
            return "set"

        async def main() -> tuple[list[str], threading.Thread]:
            adapter = OfflineAdapter([calls("blocking", "release"), ScriptedTurn(text="done")])
            response = await adapter.evaluate_async(
                prompt_with(sync_tool("blocking", blocking), async_tool("release", release))
            )
            return [r.message for r in response.tool_results], threading.current_thread()

        messages, loop_thread = asyncio.run(main())
        assert messages == ["released", "set"]
        assert threads != [loop_thread]

    def test_a_tool_can_opt_out_of_the_worker_thread(self) -> None:
        """run_in_thread=False keeps a quick sync handler on the loop's thread."""
        threads: list[threading.Thread] = []

        def quick(params: Step) -> str:
            threads.append(threading.current_thread())
            return "ok"

        async def main() -> threading.Thread:
            adapter = OfflineAdapter([calls("quick"), ScriptedTurn(text="done")])
            await adapter.evaluate_async(
                prompt_with(sync_tool("quick", quick, run_in_thread=False))
            )
            return threading.current_thread()

        assert threads == [asyncio.run(main())]

    def test_the_concurrency_limit_bounds_calls_in_flight(self) -> None:
        """With max_concurrency=2, five calls never run more than two at a time."""
        active = 0
        peak = 0

        async def track(params: Step) -> str:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            active -= 1
            return "ok"

        adapter = Adapter(
            OfflineModel([calls(*["track"] * 5), ScriptedTurn(text="done")]),
            settings=LoopSettings(max_concurrency=2),
        )
        asyncio.run(adapter.evaluate_async(prompt_with(async_tool("track", track))))
        assert peak == 2

    def test_sync_calls_share_worker_threads_within_the_limit(self) -> None:
        """Many sync calls of one turn run on at most max_concurrency threads, in order."""
        lock = threading.Lock()
        active = 0
        peak = 0
        both_running = threading.Barrier(2, timeout=WAIT)

        def work(params: Step) -> str:
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)
            if params.name in ("work-0", "work-1"):
                both_running.wait()  # the first two calls must overlap
            with lock:
                active -= 1
            return params.name

        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = Adapter(
            OfflineModel([calls(*["work"] * 6), ScriptedTurn(text="done")]),
            settings=LoopSettings(max_concurrency=2),
        )
        response = adapter.evaluate(prompt_with(sync_tool("work", work)), bus=bus, session=session)
        assert [r.message for r in response.tool_results] == [f"work-{n}" for n in range(6)]
        assert [e.call_id for e in session.select(ToolInvoked)] == [f"c{n}" for n in range(6)]
        assert peak == 2

    def test_quick_sync_calls_share_one_worker_thread(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Calls that keep finishing never bring in a second thread: one GIL gains nothing.

        The ramp interval is made long so that a pause of this machine cannot look like
        a stall; the next test shows the ramp itself.
        """
        monkeypatch.setattr(batch, "RAMP_SECONDS", WAIT)
        threads: set[threading.Thread] = set()

        def quick(params: Step) -> str:
            threads.add(threading.current_thread())
            return params.name

        adapter = OfflineAdapter([calls(*["quick"] * 40), ScriptedTurn(text="done")])
        response = adapter.evaluate(prompt_with(sync_tool("quick", quick)))
        assert [r.message for r in response.tool_results] == [f"quick-{n}" for n in range(40)]
        assert len(threads) == 1

    def test_blocking_sync_calls_bring_in_threads_up_to_the_limit(self) -> None:
        """Calls that all block past the ramp interval each get a thread, up to the limit."""
        lock = threading.Lock()
        active = 0
        peak = 0
        all_running = threading.Barrier(3, timeout=WAIT)

        def block(params: Step) -> str:
            nonlocal active, peak
            with lock:
                active += 1
                peak = max(peak, active)
            if params.name in ("block-0", "block-1", "block-2"):
                all_running.wait()  # only three threads at once can pass
            with lock:
                active -= 1
            return params.name

        adapter = Adapter(
            OfflineModel([calls(*["block"] * 5), ScriptedTurn(text="done")]),
            settings=LoopSettings(max_concurrency=3),
        )
        response = adapter.evaluate(prompt_with(sync_tool("block", block)))
        assert [r.message for r in response.tool_results] == [f"block-{n}" for n in range(5)]
        assert peak == 3

    def test_an_exclusive_tool_runs_alone(self) -> None:
        """An exclusive call waits for the calls before it and holds back those after it."""
        log: list[str] = []

        async def step(params: Step) -> str:
            log.append(f"start {params.name}")
            await asyncio.sleep(0)
            log.append(f"end {params.name}")
            return "ok"

        tools = (async_tool("step", step), async_tool("alone", step, exclusive=True))
        adapter = OfflineAdapter([calls("step", "alone", "step"), ScriptedTurn(text="done")])
        asyncio.run(adapter.evaluate_async(prompt_with(*tools)))
        assert log == [
            "start step-0",
            "end step-0",
            "start alone-1",
            "end alone-1",
            "start step-2",
            "end step-2",
        ]

    def test_calls_after_a_terminal_call_are_not_run(self) -> None:
        """A successful terminal call ends the turn even when later calls could run at once."""
        ran: list[str] = []

        async def work(params: Step) -> str:
            ran.append(params.name)
            return "ok"

        tools = (async_tool("work", work), async_tool("stop", work, terminal=True))
        adapter = OfflineAdapter([calls("work", "stop", "work")])
        response = asyncio.run(adapter.evaluate_async(prompt_with(*tools)))
        assert ran == ["work-0", "stop-1"]
        assert response.halt is not None
        assert [call.call_id for call in response.skipped_calls] == ["c2"]


class TestStreaming:
    def test_text_deltas_arrive_in_order_and_join_to_the_final_text(self) -> None:
        """A streamed answer publishes its pieces in order; joined they equal the text."""
        bus = InProcessEventBus()
        deltas: list[TextDelta] = []
        bus.subscribe(TextDelta, deltas.append)
        adapter = OfflineAdapter([ScriptedTurn(text="Hello, streaming world")], stream_chunk_size=5)
        response = adapter.evaluate(prompt_with(), bus=bus)
        assert [d.text for d in deltas] == ["Hello", ", str", "eamin", "g wor", "ld"]
        assert [d.index for d in deltas] == [0, 1, 2, 3, 4]
        assert "".join(d.text for d in deltas) == response.text
        assert {d.evaluation_id for d in deltas} == {response.evaluation_id}

    def test_a_reply_that_does_not_stream_is_one_delta(self) -> None:
        """Without streaming, each round's text is still published, as a single delta."""
        bus = InProcessEventBus()
        deltas: list[TextDelta] = []
        bus.subscribe(TextDelta, deltas.append)
        adapter = OfflineAdapter([ScriptedTurn(text="whole answer")])
        adapter.evaluate(prompt_with(), bus=bus)
        assert [(d.round, d.index, d.text) for d in deltas] == [(1, 0, "whole answer")]

    def test_handlers_read_the_streamed_text_in_the_accumulator(self) -> None:
        """context.response_accumulator holds the text streamed before the call."""
        seen: list[str] = []

        def peek(params: Step, *, context: ToolContext) -> ToolResult[None]:
            assert context.response_accumulator is not None
            seen.append(context.response_accumulator.text())
            return ToolResult(message="ok")

        tool = Tool(name="peek", description="Peek.", handler=peek)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    text="Let me look.",
                    calls=(ScriptedCall(name="peek", arguments={"name": "p"}),),
                ),
                ScriptedTurn(text="done"),
            ],
            stream_chunk_size=3,
        )
        adapter.evaluate(prompt_with(tool))
        assert seen == ["Let me look."]

    def test_sessions_do_not_keep_deltas_by_default(self) -> None:
        """Deltas are for live subscribers; the default retention records none of them."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        OfflineAdapter([ScriptedTurn(text="abc")], stream_chunk_size=1).evaluate(
            prompt_with(), bus=bus, session=session
        )
        assert session.select(TextDelta) == ()
        assert len(session.select(PromptExecuted)) == 1


class TestOutputRetries:
    def test_a_rejected_answer_goes_back_with_its_path_and_the_retry_succeeds(self) -> None:
        """The parse error reaches the model as feedback; the second answer is the output."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter(
            [ScriptedTurn(text='{"ok": "yes"}'), ScriptedTurn(text='{"ok": true}')]
        )
        response = adapter.evaluate(prompt_with(output=True), bus=bus, session=session)
        assert response.output == Verdict(ok=True)
        (rejected,) = session.select(OutputRejected)
        assert (rejected.attempt, rejected.path, rejected.text) == (1, "$.ok", '{"ok": "yes"}')
        feedback = adapter.provider.requests[1].history[-1]
        assert isinstance(feedback, FeedbackMessage)
        assert feedback.text == (
            f"Your answer could not be used: {rejected.message}. Reply again with only the "
            "JSON value the response format asks for (this is your last try)."
        )
        assert "at $.ok" in rejected.message

    def test_retries_run_out_with_a_parse_error(self) -> None:
        """After output_retries rejected answers the evaluation fails with phase parse."""
        adapter = Adapter(
            OfflineModel(
                [ScriptedTurn(text="nope"), ScriptedTurn(text="still nope"), ScriptedTurn(text="x")]
            ),
            settings=LoopSettings(output_retries=2),
        )
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(prompt_with(output=True))
        assert caught.value.phase == "parse"
        assert caught.value.provider_payload == {"text": "x"}
        assert len(adapter.provider.requests) == 3

    def test_a_refusal_is_not_retried(self) -> None:
        """A model that refuses is not asked again: phase parse at once."""
        adapter = OfflineAdapter([ScriptedTurn(refusal="I can't help with that.")])
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(prompt_with(output=True))
        assert caught.value.phase == "parse"
        assert caught.value.reason == "the model refused to answer: I can't help with that."
        assert len(adapter.provider.requests) == 1
