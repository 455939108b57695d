"""Running the tool calls of one model turn: concurrently, bounded, in the model's order.

Calls run at the same time (at most ``max_concurrency``), except that an exclusive or
terminal tool is a barrier: the calls before it finish first, it runs alone, and a
terminal call that succeeds ends the turn, so the calls after it never run. Whatever
order calls finish in, their ``ToolInvoked`` events are published, and their outputs
are sent back, in the order the model issued them.

With a step runner (a durable or Temporal evaluation), every call, refusals included,
is a step of its own (``round:<n>/call:<call id>``) that the runner may run, record or
replay, and a call whose tool requires approval first asks the runner for a decision
(``_approvals``): it runs when approved, fails when denied, and waits when there is
none yet. Without a runner (in process), batches take the fast path of
``execute_tool_calls``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from weakincentives._direct import direct_constructor
from weakincentives.adapters._approvals import Approvals
from weakincentives.adapters._response import Halt
from weakincentives.adapters._step_runner import StepRunner
from weakincentives.adapters._turns import ToolOutputMessage
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import ExecutionScope, Tool
from weakincentives.runtime import (
    ToolCall,
    ToolExecution,
    ToolInvoked,
    execute_tool_call,
    execute_tool_calls,
    publish_tool_invoked,
    refuse_tool_call,
)

__all__ = ["CallLedger", "RoundResult", "run_tool_round"]


@dataclass(slots=True)
class CallLedger:
    """Identical calls seen so far in one evaluation, to catch a model repeating itself.

    A call counts once per turn: the same call issued twice in one turn is parallel
    work the model asked for, not a loop.
    """

    limit: int
    counts: dict[tuple[str, str], int] = field(default_factory=dict)
    _turn: set[tuple[str, str]] = field(default_factory=set)

    def new_turn(self) -> None:
        """Start counting the calls of the next turn."""
        self._turn = set()

    def record(self, call: ToolCall, prompt_name: str) -> int:
        """Count ``call``; raise phase ``tool`` once it exceeds the limit. Returns the count."""
        key = (call.name, _argument_key(call.arguments))
        if key in self._turn:
            return self.counts[key]
        self._turn.add(key)
        count = self.counts.get(key, 0) + 1
        self.counts[key] = count
        if count > self.limit:
            raise PromptEvaluationError(
                f"the model called {call.name!r} with the same arguments {count} times; the "
                f"limit is {self.limit} (LoopSettings.max_identical_calls). It is probably "
                "stuck: check that the tool's result tells it what to do next",
                prompt_name=prompt_name,
                phase="tool",
            )
        return count


@dataclass(frozen=True, slots=True)
class RoundResult:
    executions: tuple[ToolExecution, ...]
    """Every call that ran or was refused, in the model's order."""
    outputs: tuple[ToolOutputMessage, ...]
    """What goes back to the model: one output per distinct call id, in order."""
    halt: Halt | None
    skipped: tuple[ToolCall, ...]
    """Calls after a successful terminal call; they did not run."""
    pending: tuple[ToolCall, ...] = ()
    """Calls that wait for a person's approval; they did not run (yet)."""


class _OrderedPublisher:
    """Publishes events in call order, each as soon as every earlier one is out."""

    def __init__(self, scope: ExecutionScope) -> None:
        self._scope = scope
        self._waiting: dict[int, ToolInvoked | None] = {}
        self._next = 0

    def done(self, index: int, event: ToolInvoked | None) -> None:
        """Call ``index`` has its event (None: it has none, it waits for approval)."""
        self._waiting[index] = event
        while self._next in self._waiting:
            ready = self._waiting.pop(self._next)
            if ready is not None:
                publish_tool_invoked(self._scope, ready)
            self._next += 1


async def run_tool_round(
    calls: Sequence[ToolCall],
    scope: ExecutionScope,
    *,
    tools: Mapping[str, Tool[Any, Any]],
    max_concurrency: int,
    ledger: CallLedger,
    steps: StepRunner | None = None,
    round_number: int = 0,
) -> RoundResult:
    """Run ``calls`` (one turn's) and collect what goes back to the model.

    ``steps`` runs each call as a step keyed by ``round_number`` and the call id; None
    runs them here directly.
    """
    running = _Round(calls, scope, tools, max_concurrency, steps=steps, round_number=round_number)
    return await running.run(ledger)


@dataclass(slots=True)
class _Round:
    """One turn's calls while they run: results by index, notes for the model, events."""

    calls: Sequence[ToolCall]
    scope: ExecutionScope
    tools: Mapping[str, Tool[Any, Any]]
    max_concurrency: int
    _: KW_ONLY
    steps: StepRunner | None
    """None runs the calls here directly."""
    round_number: int
    results: list[ToolExecution | None] = field(init=False)
    notes: list[list[str]] = field(init=False)
    """What the model is told about each call besides its result."""
    first_index: dict[str, int] = field(init=False, default_factory=dict)
    publisher: _OrderedPublisher = field(init=False)
    approvals: Approvals = field(init=False)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.calls)
        self.notes = [[] for _ in self.calls]
        self.publisher = _OrderedPublisher(self.scope)
        self.approvals = Approvals() if self.steps is not None else _NO_APPROVALS

    async def run(self, ledger: CallLedger) -> RoundResult:
        calls = self.calls
        ledger.new_turn()
        runnable: set[int] = set()
        for index, call in enumerate(calls):
            if call.call_id in self.first_index:
                continue
            self.first_index[call.call_id] = index
            before = ledger.counts.get((call.name, _argument_key(call.arguments)), 0)
            count = ledger.record(call, self.scope.prompt.name)
            if count > 1 and count > before:
                self.notes[index].append(_repeat_note(count))
            runnable.add(index)
        if self.steps is not None:
            await self.approvals.ask(calls, runnable, self.tools, self.steps, self.round_number)
        halt: Halt | None = None
        skipped: tuple[ToolCall, ...] = ()
        position = 0
        while position < len(calls) and halt is None:
            if position not in runnable:
                await self._set_aside(position)
                position += 1
                continue
            tool = self.tools.get(calls[position].name)
            if tool is not None and (tool.exclusive or tool.terminal):
                execution = await self._run_one(position)
                if tool.terminal and execution.result.success:
                    call = calls[position]
                    halt = Halt(tool_name=tool.name, call_id=call.call_id, result=execution.result)
                    skipped = tuple(calls[position + 1 :])
                position += 1
                continue
            end = self._barrier_after(position)
            batch = [index for index in range(position, end) if index in runnable]
            if len(batch) == 1:  # nothing to overlap with: skip the task group's overhead
                await self._run_one(batch[0])
            else:
                await self._run_batch(batch)
            # Reused call ids in the batch's span are refused in order, after the batch.
            for index in range(position, end):
                if index not in runnable:
                    await self._set_aside(index)
            position = end
        return self._collect(halt, skipped)

    async def _set_aside(self, index: int) -> None:
        """A call that does not run now: it waits for approval, or reuses an id."""
        if index in self.approvals.pending:
            self.publisher.done(index, None)
        else:
            await self._refuse_duplicate(index)

    async def _run_batch(self, batch: list[int]) -> None:
        """Run ``batch`` concurrently; each result is kept and published as it lands."""
        if self.steps is not None:
            limit = asyncio.Semaphore(self.max_concurrency)

            async def one(index: int) -> None:
                async with limit:
                    await self._run_one(index)

            async with asyncio.TaskGroup() as group:
                for index in batch:
                    group.create_task(one(index))
            return
        await execute_tool_calls(
            [self.calls[index] for index in batch],
            self.scope,
            tools=self.tools,
            max_concurrency=self.max_concurrency,
            on_done=lambda position, execution: self._finished(batch[position], execution),
        )

    def _finished(self, index: int, execution: ToolExecution) -> None:
        self.results[index] = execution
        self.publisher.done(index, execution.event)

    async def _run_one(self, index: int) -> ToolExecution:
        call = self.calls[index]
        if self.steps is None:
            execution = await execute_tool_call(call, self.scope, publish=False)
        elif index in self.approvals.denied:
            message = self.approvals.denied[index]

            async def deny() -> ToolExecution:
                return refuse_tool_call(call, self.scope, message)

            # The tool does not run: like any refused call, the step has no tool (so a
            # runner that runs tools elsewhere runs the refusal here).
            execution = await self._stepped(index, deny, None)
        else:

            async def run() -> ToolExecution:
                return await execute_tool_call(call, self.scope, publish=False)

            execution = await self._stepped(index, run, self.tools.get(call.name))
        self._finished(index, execution)
        return execution

    async def _stepped(
        self,
        index: int,
        run: Callable[[], Awaitable[ToolExecution]],
        tool: Tool[Any, Any] | None,
    ) -> ToolExecution:
        """Call ``index`` as a step; a replayed step's execution is rebuilt from its event.

        ``tool`` is the tool the call runs (None for a call refused before it ran).
        """
        assert self.steps is not None
        call = self.calls[index]
        ran: list[ToolExecution] = []

        async def step() -> ToolInvoked:
            execution = await run()
            ran.append(execution)
            return execution.event

        key = f"round:{self.round_number}/call:{call.call_id}"
        if self.first_index.get(call.call_id) != index:
            key = f"{key}#{index}"  # a reused id: the refusal is a step of its own
        event = await self.steps.call(key, call, tool, step)
        if ran and ran[0].event is event:
            return ran[0]
        return ToolExecution(
            call=call,
            tool=tool,
            params=event.params,
            result=event.result,
            event=event,
            exception=event.exception,
        )

    def _barrier_after(self, start: int) -> int:
        """The index of the next exclusive or terminal call after ``start``, or the end."""
        index = start
        while index < len(self.calls):
            tool = self.tools.get(self.calls[index].name)
            if tool is not None and (tool.exclusive or tool.terminal):
                break
            index += 1
        return index

    async def _refuse_duplicate(self, index: int) -> None:
        call = self.calls[index]
        message = (
            f"Not run: call id {call.call_id!r} was already used by an earlier call in this "
            "turn. Give each call its own id."
        )
        if self.steps is None:
            execution = refuse_tool_call(call, self.scope, message)
        else:

            async def refuse() -> ToolExecution:
                return refuse_tool_call(call, self.scope, message)

            execution = await self._stepped(index, refuse, None)
        self.results[index] = execution
        self.notes[self.first_index[call.call_id]].append(
            f"(Another call in this turn reused the id {call.call_id!r}; it was not run.)"
        )
        self.publisher.done(index, execution.event)

    def _collect(self, halt: Halt | None, skipped: tuple[ToolCall, ...]) -> RoundResult:
        executions = tuple(result for result in self.results if result is not None)
        outputs: list[ToolOutputMessage] = []
        seen: set[str] = set()
        for index, execution in enumerate(self.results):
            if execution is None or execution.call.call_id in seen:
                continue
            seen.add(execution.call.call_id)
            content = execution.result.model_content(execution.event.rendered_output)
            if self.notes[index]:
                content = "\n\n".join([content, *self.notes[index]])
            outputs.append(
                _make_output(
                    call_id=execution.call.call_id,
                    name=execution.call.name,
                    content=content,
                    success=execution.result.success,
                    loaded=_loaded(execution.result.value),
                )
            )
        waiting = self.approvals.pending
        pending = tuple(self.calls[index] for index in sorted(waiting)) if waiting else ()
        return RoundResult(executions, tuple(outputs), halt, skipped, pending)


_make_output = direct_constructor(ToolOutputMessage)
_NO_APPROVALS = Approvals()
"""In process no call waits for approval (a prompt that needs one has no runner to wait)."""


def _loaded(value: object) -> tuple[str, ...]:
    """The catalogue tools a search result found, when its payload names them.

    Discovery's ``SearchToolsResponse`` has ``loaded_tool_ids``; a provider that loads a
    catalogue natively turns them into tool definitions (see ``prompt._deferred``).
    """
    ids = getattr(value, "loaded_tool_ids", ())
    return ids if isinstance(ids, tuple) else ()


def _repeat_note(count: int) -> str:
    return (
        f"(You have now made this exact call {count} times in this task; its result will "
        "not change. Use it, or call with different arguments.)"
    )


def _argument_key(arguments: str | Mapping[str, Any]) -> str:
    if isinstance(arguments, str):
        return arguments.strip()
    try:
        return json.dumps(arguments, sort_keys=True)
    except (TypeError, ValueError):
        return repr(sorted(arguments.items(), key=lambda item: item[0]))
