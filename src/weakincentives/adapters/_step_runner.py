"""The step seam: every effect of an evaluation goes through one :class:`StepRunner`.

An evaluation has three kinds of effects, called steps: a **send** (one provider
exchange, retries included), a **call** (one tool call) and an **approval** (a person's
decision on a call whose tool requires one). Everything else the loop does (render,
build the request, read the reply, parse, reduce, publish) is pure given the step
results and the injected clock and id source, so a runner that returns a step's
recorded result instead of running it replays the evaluation exactly.

The loop hands each step to the runner twice over: as data (the key, the request, the
call), so a runner can run it elsewhere, and as a local ``run`` closure, so the
in-process runner only awaits it. A step's key is stable across reruns
(``round:3/send``, ``round:3/call:<call id>``), because call ids come from the model's
reply, itself a recorded step.

- :data:`IN_PROCESS` (the default) runs every step as it comes and records nothing.
- ``DurableSteps`` (``adapters/_durable.py``, ``evaluate(store=...)``) records steps in
  a store and replays them on resume.
- ``weakincentives.temporal`` runs sends and calls as activities and waits on a signal
  for approvals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import Tool
from weakincentives.runtime import PromptFailed, ToolCall, ToolInvoked

if TYPE_CHECKING:
    from weakincentives.adapters._response import PromptResponse

__all__ = [
    "IN_PROCESS",
    "CallStep",
    "Decision",
    "InProcessSteps",
    "Progress",
    "ProgressStatus",
    "SendStep",
    "Sent",
    "StepRunner",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Sent[ReplyT]:
    """The result of a send step: the provider's reply and the text streamed on the way."""

    reply: ReplyT
    deltas: tuple[str, ...] = ()
    """The text pieces streamed during the exchange, in order (empty when it did not
    stream); a replayed send hands them to the accumulator again."""
    unpublished: bool = False
    """True when the exchange ran elsewhere (a Temporal activity) and nothing published
    its deltas yet: the loop publishes them as ``TextDelta`` events when the step
    returns. False (a replayed durable send) means they are in the session log already."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """A person's decision on a call that waited for approval."""

    approved: bool
    message: str | None = None
    """What the person said; a denied call's failed result passes it to the model."""


type ProgressStatus = Literal["running", "paused", "done", "failed"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress:
    """Where the evaluation stands after a round, a pause, or at its end."""

    round: int
    """Requests sent so far (the round just completed)."""
    status: ProgressStatus
    response: PromptResponse[Any] | None = None
    """Set when ``done`` (the final response) or ``paused`` (the pending one)."""
    failure: PromptFailed | None = None
    """Set when ``failed``: the event published for the failure."""


type SendStep[ReplyT] = Callable[[], Awaitable[Sent[ReplyT]]]
"""A send step as the loop runs it: the exchange with the provider and the text it streamed."""

type CallStep = Callable[[], Awaitable[ToolInvoked]]
"""A call step as the loop runs it: runs the tool and returns its unpublished event."""


class StepRunner(Protocol):
    """Runs (or replays) the steps of one evaluation."""

    async def send[ReplyT](self, key: str, request: object, run: SendStep[ReplyT]) -> Sent[ReplyT]:
        """The result of the send step ``key`` for the provider ``request``."""
        ...

    async def call(
        self, key: str, call: ToolCall, tool: Tool[Any, Any] | None, run: CallStep
    ) -> ToolInvoked:
        """The outcome of the call step ``key``: its (unpublished) ``ToolInvoked`` event."""
        ...

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision | None:
        """The decision on ``call``, or None while it waits for one (the loop then pauses)."""
        ...

    async def checkpoint(self, progress: Progress) -> None:
        """Note the evaluation's progress (after every round, and when it ends or pauses)."""
        ...


class InProcessSteps:
    """Runs every step as it comes, in this process, and records nothing."""

    __slots__ = ()

    async def send[ReplyT](self, key: str, request: object, run: SendStep[ReplyT]) -> Sent[ReplyT]:
        """Run the exchange."""
        return await run()

    async def call(
        self, key: str, call: ToolCall, tool: Tool[Any, Any] | None, run: CallStep
    ) -> ToolInvoked:
        """Run the call."""
        return await run()

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision | None:
        """Never reached: a tool that requires approval needs a store (checked up front)."""
        raise ConfigValidationError(
            f"tool {tool.name!r} requires approval, which needs a store to wait in: "
            "pass store= to evaluate",
            field_name="store",
        )

    async def checkpoint(self, progress: Progress) -> None:
        """Nothing to keep."""


IN_PROCESS = InProcessSteps()
"""The default runner: the loop as it always ran, one extra await per step."""
