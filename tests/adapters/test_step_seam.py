"""The step seam: every send and every tool call of the loop goes through one step runner.

A recording runner shows which steps run, with which keys and data; a replaying runner
fed the first run's results finishes a second evaluation without a provider or a
handler, which is what a durable or Temporal runner builds on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.conftest import FakeClock
from weakincentives.adapters import (
    LoopSettings,
    OfflineModel,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    TurnRequest,
)
from weakincentives.adapters._channels import resolve_channels
from weakincentives.adapters._loop import Evaluation
from weakincentives.adapters._provider import Provider
from weakincentives.adapters._step_runner import (
    IN_PROCESS,
    Decision,
    Progress,
    Sent,
    StepRunner,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, PromptFailed, Session, ToolCall, ToolInvoked

WAIT = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """Params of the test tools."""

    name: str


@dataclass(slots=True)
class Recorder:
    """A step runner that runs every step and writes down what it saw."""

    keys: list[str] = field(default_factory=list)
    requests: list[object] = field(default_factory=list)
    sent: dict[str, Sent[Any]] = field(default_factory=dict)
    calls: dict[str, ToolInvoked] = field(default_factory=dict)
    progress: list[Progress] = field(default_factory=list)

    async def send[ReplyT](
        self, key: str, request: object, run: Callable[[], Awaitable[Sent[ReplyT]]]
    ) -> Sent[ReplyT]:
        self.keys.append(key)
        self.requests.append(request)
        sent = await run()
        self.sent[key] = sent
        return sent

    async def call(
        self,
        key: str,
        call: ToolCall,
        tool: Tool[Any, Any] | None,
        run: Callable[[], Awaitable[ToolInvoked]],
    ) -> ToolInvoked:
        self.keys.append(key)
        event = await run()
        assert event.call_id == call.call_id
        assert tool is None or tool.name == call.name
        self.calls[key] = event
        return event

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision | None:
        raise AssertionError("no tool here requires approval")

    async def checkpoint(self, progress: Progress) -> None:
        self.progress.append(progress)


@dataclass(slots=True)
class Replayer:
    """A step runner that returns recorded results and never runs a step."""

    recorded: Recorder

    async def send[ReplyT](
        self, key: str, request: object, run: Callable[[], Awaitable[Sent[ReplyT]]]
    ) -> Sent[ReplyT]:
        sent: Sent[ReplyT] = self.recorded.sent[key]
        return sent

    async def call(
        self,
        key: str,
        call: ToolCall,
        tool: Tool[Any, Any] | None,
        run: Callable[[], Awaitable[ToolInvoked]],
    ) -> ToolInvoked:
        return self.recorded.calls[key]

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision | None:
        raise AssertionError("no tool here requires approval")

    async def checkpoint(self, progress: Progress) -> None:
        pass


def evaluate(
    provider: Provider[Any, Any],
    prompt: Prompt[Any],
    steps: StepRunner,
    *,
    session: Session | None = None,
) -> PromptResponse[Any]:
    """Run one evaluation on ``steps`` with a fake clock and counted ids."""
    counter = iter(range(1, 1_000))
    settings = LoopSettings(clock=FakeClock(), new_id=lambda: f"id-{next(counter)}")

    async def main() -> PromptResponse[Any]:
        evaluation = Evaluation[Any, Any, Any](
            provider=provider,
            adapter=None,  # type: ignore[arg-type]  # no handler here evaluates nested prompts
            prompt=prompt,
            params=(),
            channels=resolve_channels(None, session),
            settings=settings,
            disclosure=settings.disclosure,
            overrides=None,
            deadline=None,
            earlier=(),
            executor=None,
            steps=steps,
        )
        return await evaluation.run()

    return asyncio.run(main())


def prompt_with(*tools: Tool[Any, Any]) -> Prompt[Any]:
    section = MarkdownSection(title="Task", key="task", template="Do it.", tools=tools)
    return Prompt(ns="tests/seam", key="task", sections=[section])


def counting_tool(name: str, ran: list[str]) -> Tool[Item, str]:
    def handler(params: Item, *, context: ToolContext) -> ToolResult[str]:
        ran.append(params.name)
        return ToolResult(message=f"{name} {params.name}", value=params.name)

    return Tool(name=name, description=f"{name}.", handler=handler)


def script(*turns: ScriptedTurn) -> OfflineModel:
    return OfflineModel(list(turns), stream_chunk_size=3)


TWO_ROUNDS = (
    ScriptedTurn(
        text="looking",
        calls=(
            ScriptedCall(name="look", arguments={"name": "a"}, call_id="a"),
            ScriptedCall(name="look", arguments={"name": "b"}, call_id="b"),
            ScriptedCall(name="look", arguments={"name": "c"}, call_id="a"),
            ScriptedCall(name="nowhere", arguments={"name": "d"}, call_id="d"),
        ),
    ),
    ScriptedTurn(text="all done"),
)


def test_every_send_and_call_is_a_step_with_a_stable_key() -> None:
    """Sends are round:<n>/send, calls round:<n>/call:<id>; a reused id gets its index."""
    ran: list[str] = []
    recorder = Recorder()
    response = evaluate(script(*TWO_ROUNDS), prompt_with(counting_tool("look", ran)), recorder)
    assert response.text == "all done"
    assert sorted(recorder.keys) == sorted(
        [
            "round:1/send",
            "round:1/call:a",
            "round:1/call:b",
            "round:1/call:a#2",
            "round:1/call:d",
            "round:2/send",
        ]
    )
    assert recorder.keys[0] == "round:1/send"
    assert recorder.keys[-1] == "round:2/send"
    assert sorted(ran) == ["a", "b"]
    assert recorder.sent["round:1/send"].deltas == ("loo", "kin", "g")
    assert recorder.sent["round:2/send"].deltas == ("all", " do", "ne")
    first = recorder.requests[0]
    assert isinstance(first, TurnRequest)
    assert first.round == 1
    assert [(p.round, p.status) for p in recorder.progress] == [(1, "running"), (2, "done")]
    assert recorder.progress[-1].response == response


def test_a_replaying_runner_finishes_without_the_provider_or_any_handler() -> None:
    """Given the first run's step results, the loop rebuilds the same response and events."""
    ran: list[str] = []
    recorder = Recorder()
    first_bus = InProcessEventBus()
    first_session = Session(bus=first_bus)
    first = evaluate(
        script(*TWO_ROUNDS),
        prompt_with(counting_tool("look", ran)),
        recorder,
        session=first_session,
    )
    replay_bus = InProcessEventBus()
    replay_session = Session(bus=replay_bus)
    unused = OfflineModel(responder=_never_called)
    second = evaluate(
        unused,
        prompt_with(counting_tool("look", ran)),
        Replayer(recorder),
        session=replay_session,
    )
    assert sorted(ran) == ["a", "b"]  # no handler ran again
    assert unused.requests == ()
    assert second == first
    names = [None if e.tool is None else e.tool.name for e in second.tool_executions]
    assert names == ["look", "look", None, None]  # the reused id and the unknown tool: no tool
    assert [e.tool is None for e in first.tool_executions] == [False, False, True, True]
    assert replay_session.select(ToolInvoked) == first_session.select(ToolInvoked)


def _never_called(request: TurnRequest) -> ScriptedTurn:
    raise AssertionError("a replayed send must not reach the provider")


def test_calls_of_one_turn_still_run_at_the_same_time_through_a_runner() -> None:
    """Two calls that wait for each other finish: the stepped round keeps the concurrency."""
    barrier = asyncio.Barrier(2)

    async def meet(params: Item, *, context: ToolContext) -> ToolResult[None]:
        async with asyncio.timeout(WAIT):
            await barrier.wait()
        return ToolResult(message=f"met {params.name}")

    tool = Tool[Item, None](name="meet", description="Meet.", handler=meet)
    turns = (
        ScriptedTurn(
            calls=(
                ScriptedCall(name="meet", arguments={"name": "x"}, call_id="x"),
                ScriptedCall(name="meet", arguments={"name": "y"}, call_id="y"),
            )
        ),
        ScriptedTurn(text="met"),
    )
    recorder = Recorder()
    response = evaluate(script(*turns), prompt_with(tool), recorder)
    assert [r.message for r in response.tool_results] == ["met x", "met y"]
    assert sorted(recorder.calls) == ["round:1/call:x", "round:1/call:y"]


def test_a_failure_is_reported_to_the_runner_with_its_event() -> None:
    """A failed evaluation ends with a failed checkpoint that carries the PromptFailed event."""
    recorder = Recorder()
    provider = OfflineModel(responder=_fail)
    with pytest.raises(PromptEvaluationError, match="no model today"):
        evaluate(provider, prompt_with(), recorder)
    assert [(p.round, p.status) for p in recorder.progress] == [(1, "failed")]
    failure = recorder.progress[0].failure
    assert isinstance(failure, PromptFailed)
    assert (failure.phase, failure.message) == ("response", "no model today")


def _fail(request: TurnRequest) -> ScriptedTurn:
    raise PromptEvaluationError("no model today", prompt_name=request.prompt_name, phase="response")


def test_the_in_process_runner_refuses_approvals_without_a_store() -> None:
    """Approval is never asked of the in-process runner; if it were, the error says why."""
    tool = counting_tool("look", [])
    call = ToolCall(call_id="a", name="look", arguments="{}")
    with pytest.raises(ConfigValidationError, match="pass store= to evaluate") as caught:
        asyncio.run(IN_PROCESS.approval("round:1/approval:a", call, tool))
    assert caught.value.field_name == "store"


def test_the_in_process_runner_runs_each_step_as_it_comes() -> None:
    """Its send and call only await the step's own closure."""

    async def send() -> Sent[str]:
        return Sent(reply="reply", deltas=("a",))

    async def call() -> ToolInvoked:
        raise LookupError("ran")

    assert asyncio.run(IN_PROCESS.send("round:1/send", {}, send)) == Sent(
        reply="reply", deltas=("a",)
    )
    with pytest.raises(LookupError, match="ran"):
        asyncio.run(
            IN_PROCESS.call(
                "round:1/call:a", ToolCall(call_id="a", name="x", arguments="{}"), None, call
            )
        )
    assert asyncio.run(IN_PROCESS.checkpoint(Progress(round=1, status="running"))) is None
