"""What ``evaluate`` returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from weakincentives.adapters._turns import ConversationItem
from weakincentives.prompt import HostedToolOutput, RenderedPrompt, ToolResult
from weakincentives.runtime import TokenUsage, ToolCall, ToolExecution

__all__ = ["Halt", "PromptResponse"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Halt:
    """A terminal tool ended the turn; the caller decides what happens next."""

    tool_name: str
    call_id: str
    result: ToolResult[Any]

    @property
    def value(self) -> object:
        """The terminal tool's payload (``OpenSectionsResult`` for ``open_sections``)."""
        return self.result.value


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptResponse[OutputT]:
    """The outcome of one evaluation."""

    prompt_name: str
    evaluation_id: str
    """Shared by every event this evaluation published."""
    text: str
    """The model's final text; empty when a terminal tool halted the turn."""
    output: OutputT | None
    """The parsed structured answer; None for text-only prompts and halted turns."""
    tool_executions: tuple[ToolExecution, ...] = ()
    """Every executed tool call with its params and result, in order."""
    skipped_calls: tuple[ToolCall, ...] = ()
    """Calls of the halting turn that came after the terminal tool and never ran."""
    hosted_outputs: Mapping[str, HostedToolOutput] = field(
        default_factory=lambda: MappingProxyType({})
    )
    """Parsed outputs of provider-executed tools, by tool name."""
    halt: Halt | None = None
    """Set when a terminal tool (such as ``open_sections``) ended the turn."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """Tokens of every request of the evaluation, re-renders and output retries included."""
    rounds: int = 0
    """How many requests were sent to the provider (retries after errors not counted)."""
    model: str | None = None
    """The model the adapter asked for, when it names one."""
    rendered: RenderedPrompt[OutputT] | None = None
    """The render the model read."""
    conversation: tuple[ConversationItem, ...] = ()
    """Everything exchanged, oldest first: the prompt, model turns and tool outputs.
    Pass the response as ``continue_from`` to carry the conversation on."""

    @property
    def tool_results(self) -> tuple[ToolResult[Any], ...]:
        """The results of ``tool_executions``, in order."""
        return tuple(execution.result for execution in self.tool_executions)
