"""Which calls of a round wait for a person: the approval gate of a stepped round.

A call needs approval when its tool says so (``Tool.requires_approval``: always, or by
a policy over the call's params). The round asks the step runner for each such call's
decision before anything runs: an approved call runs as usual, a denied one becomes a
failed result that tells the model a person refused it (with their message), and a
call with no decision yet is set aside: the round runs the others and the evaluation
pauses. Arguments that do not parse need no approval: the call fails without running.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from weakincentives.adapters._step_runner import StepRunner
from weakincentives.errors import ParseError
from weakincentives.prompt import Tool
from weakincentives.runtime import ToolCall
from weakincentives.serde import loads, parse

__all__ = ["Approvals", "denial_message"]


class Approvals:
    """The decisions of one round: pending calls and denied ones, by index."""

    __slots__ = ("denied", "pending")

    def __init__(self) -> None:
        self.pending: set[int] = set()
        """Calls with no decision yet; they do not run."""
        self.denied: dict[int, str] = {}
        """Calls a person denied, with the message their failed result carries."""

    async def ask(
        self,
        calls: Sequence[ToolCall],
        runnable: set[int],
        tools: Mapping[str, Tool[Any, Any]],
        steps: StepRunner,
        round_number: int,
    ) -> None:
        """Ask ``steps`` about every runnable call that needs approval, in the model's order.

        Pending calls leave ``runnable``.
        """
        for index in sorted(runnable):
            call = calls[index]
            tool = tools.get(call.name)
            if tool is None or not _needs_approval(tool, call):
                continue
            key = f"round:{round_number}/approval:{call.call_id}"
            decision = await steps.approval(key, call, tool)
            if decision is None:
                self.pending.add(index)
                runnable.discard(index)
            elif not decision.approved:
                self.denied[index] = denial_message(tool.name, decision.message)


def _needs_approval(tool: Tool[Any, Any], call: ToolCall) -> bool:
    policy = tool.requires_approval
    if isinstance(policy, bool):
        return policy
    try:
        arguments = loads(call.arguments) if isinstance(call.arguments, str) else call.arguments
        params = parse(tool.spec.params_type, arguments)
    except ParseError:
        return False  # the call fails on its arguments without running
    return tool.approval_needed(params)


def denial_message(tool_name: str, message: str | None) -> str:
    """What the model reads for a call a person denied."""
    said = f" They said: {message}" if message else ""
    return f"Not run: a person denied this call of tool {tool_name!r}.{said}"
