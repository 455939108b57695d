"""The step runner of a workflow: sends and calls as activities, approvals as signals.

The loop runs inside the workflow, unchanged; this runner is the only part that knows
Temporal. A send step is the prompt's send activity (one attempt each; Temporal's retry
policy retries), and its streamed text comes back with the reply, to be published as
``TextDelta`` events when the step returns. A call step runs the tool's activity,
unless the tool is pure (or the call is refused before running: an unknown tool, a
reused call id), in which case it runs right here in the workflow. An approval waits
for the ``decide`` signal. On a replay, Temporal hands back each activity's recorded
result, so the loop rebuilds the same state and publishes the same events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Literal

from temporalio import workflow
from temporalio.exceptions import ActivityError, CancelledError
from temporalio.exceptions import TimeoutError as ActivityTimeoutError

from weakincentives.adapters import Decision, Progress, Sent
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import Tool
from weakincentives.runtime import ToolCall, ToolInvoked
from weakincentives.serde import dump_typed, parse_typed
from weakincentives.temporal._documents import Document, Start, request_document
from weakincentives.temporal._failures import step_failure
from weakincentives.temporal._payloads import check_size
from weakincentives.temporal._registry import ActivityOptions, PromptEntry

__all__ = ["WorkflowSteps"]

_SHORTEST = timedelta(milliseconds=1)


@dataclass(eq=False, slots=True, kw_only=True)
class WorkflowSteps:
    """Runs one evaluation's steps from its workflow."""

    entry: PromptEntry
    options: ActivityOptions
    start: Start
    evaluation_id: str
    publish: Callable[[object], object]
    decisions: dict[str, Decision] = field(default_factory=dict, init=False)
    """Decisions received by signal, by call id; the first for a call stands."""
    waiting: dict[str, ToolCall] = field(default_factory=dict, init=False)
    """Calls waiting for a decision now, in the order they were asked about."""

    async def send[ReplyT](
        self, key: str, request: object, run: Callable[[], Awaitable[Sent[ReplyT]]]
    ) -> Sent[ReplyT]:
        """The provider exchange, as the prompt's send activity."""
        round_number = int(key.split("/", maxsplit=1)[0].removeprefix("round:"))
        step = f"the request of round {round_number}"
        document: Document = {
            "evaluation_id": self.evaluation_id,
            "round": round_number,
            "request": request_document(request),
            "params": self.start.params_document,
        }
        result = await self._activity(
            self.entry.send_activity,
            document,
            key=key,
            step=step,
            phase="request",
            timeout=self.options.send_timeout,
        )
        reply: Any = parse_typed(object, result["reply"])
        return Sent(reply=reply, deltas=tuple(result["deltas"]), unpublished=True)

    async def call(
        self,
        key: str,
        call: ToolCall,
        tool: Tool[Any, Any] | None,
        run: Callable[[], Awaitable[ToolInvoked]],
    ) -> ToolInvoked:
        """The call, as its tool's activity; pure tools and refusals run here."""
        name = None if tool is None else self.entry.tool_activities.get(tool.name)
        if tool is None or name is None:
            return await run()
        step = f"the call {call.call_id!r} of tool {call.name!r}"
        document: Document = {
            "evaluation_id": self.evaluation_id,
            "session_id": str(self.start.session_id),
            "params": self.start.params_document,
            "extras": self.start.extras_document,
            "call": dump_typed(call, ToolCall),
        }
        result = await self._activity(
            name, document, key=key, step=step, phase="tool", timeout=self.options.tool_timeout
        )
        for published in result["published"]:
            self.publish(parse_typed(object, published))
        return parse_typed(ToolInvoked, result["event"])

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision:
        """The decision signalled for ``call``, waiting for it if none came yet."""
        decision = self.decisions.get(call.call_id)
        if decision is not None:
            return decision
        self.waiting[call.call_id] = call
        await workflow.wait_condition(lambda: call.call_id in self.decisions)
        del self.waiting[call.call_id]
        return self.decisions[call.call_id]

    async def checkpoint(self, progress: Progress) -> None:
        """Nothing to save: the workflow's history is the record of every step."""

    def _bounded(self, timeout: timedelta) -> timedelta:
        """``timeout``, cut to the time left before the evaluation's deadline."""
        left = self._left()
        return timeout if left is None else min(timeout, left)

    def _left(self) -> timedelta | None:
        """The time left before the evaluation's deadline (None without one)."""
        deadline = self.start.deadline
        return None if deadline is None else max(deadline - workflow.now(), _SHORTEST)

    async def _activity(
        self,
        name: str,
        document: Document,
        *,
        key: str,
        step: str,
        phase: Literal["request", "tool"],
        timeout: timedelta,
    ) -> Document:
        """Run the activity ``name`` for ``step`` (its payload checked first); its result."""
        check_size(
            document,
            limit=self.options.payload_limit,
            prompt_name=self.entry.prompt.name,
            payload=step,
        )
        try:
            result: Document = await workflow.execute_activity(
                name,
                document,
                start_to_close_timeout=self._bounded(timeout),
                # every attempt, retries included, ends by the deadline
                schedule_to_close_timeout=self._left(),
                heartbeat_timeout=self.options.heartbeat_timeout,
                retry_policy=self.options.retry_policy,
                summary=key,
            )
        except ActivityError as error:
            if isinstance(error.cause, CancelledError):
                # The workflow's cancellation took the activity with it: the step was
                # cancelled, as a step running in process would be (phase "cancelled").
                raise asyncio.CancelledError from error
            deadline = self.start.deadline
            if (
                isinstance(error.cause, ActivityTimeoutError)
                and deadline is not None
                and workflow.now() >= deadline
            ):  # the loop's own words for its deadline
                raise PromptEvaluationError(
                    f"deadline {deadline.isoformat()} passed during {step}",
                    prompt_name=self.entry.prompt.name,
                    phase=phase,
                ) from error
            raise step_failure(
                error, prompt_name=self.entry.prompt.name, step=step, phase=phase
            ) from error
        return result
