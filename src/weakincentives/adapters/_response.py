"""What ``evaluate`` returns, and its stored form (a ``weakincentives.prompt_response``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from weakincentives.adapters._turns import ConversationItem
from weakincentives.prompt import HostedToolOutput, RenderedPrompt, ToolResult
from weakincentives.runtime import TokenUsage, ToolCall, ToolExecution
from weakincentives.serde import DocumentKind, dump_document, load_document

__all__ = ["RESPONSE_DOCUMENT", "Halt", "PromptResponse"]


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
    prompt_ns: str = ""
    """The prompt's namespace: with ``prompt_key``, how a stored response finds its
    prompt (and the prompt its tools) again."""
    prompt_key: str = ""
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
    rendered: RenderedPrompt[OutputT] | None = field(
        default=None, compare=False, metadata={"stored": False}
    )
    """The render the model read. In-process only (it holds the tools and their
    handlers): a stored response loads with None here; its text is the conversation's
    first item, and ``prompt_ns``/``prompt_key`` name the prompt."""
    conversation: tuple[ConversationItem, ...] = ()
    """Everything exchanged, oldest first: the prompt, model turns and tool outputs.
    Pass the response as ``continue_from`` to carry the conversation on."""
    pending_approvals: tuple[ToolCall, ...] = ()
    """Calls waiting for a person's decision (their tools require approval): when not
    empty, the evaluation is paused, ``output`` is None, and ``adapter.resume`` carries
    it on once every call is decided (see ``specs/PERSISTENCE.md``)."""

    @property
    def tool_results(self) -> tuple[ToolResult[Any], ...]:
        """The results of ``tool_executions``, in order."""
        return tuple(execution.result for execution in self.tool_executions)

    def to_json(self) -> str:
        """This response as a stored document: JSON text that ``from_json`` reads back equal.

        Tools are never stored: a tool execution keeps its call (with the tool's name),
        params and result, and ``rendered`` is left out. User types (params, results,
        outputs) are written with their type names (see ``specs/SERDE.md``).
        """
        return dump_document(RESPONSE_DOCUMENT, self)

    @classmethod
    def from_json(cls, document: str | bytes) -> PromptResponse[Any]:
        """Read a response ``to_json`` wrote, in this process or another.

        Raises ParseError for text that is not a response document, UnreadableDocumentError
        for another kind or a format version this library cannot read, and
        UnknownTypeError for a recorded type that cannot be found.
        """
        return load_document(RESPONSE_DOCUMENT, document)


RESPONSE_DOCUMENT: DocumentKind[PromptResponse[Any]] = DocumentKind(
    name="weakincentives.prompt_response", value_type=PromptResponse, version=1
)
"""The stored form of a :class:`PromptResponse`; its versions and upgrades live here."""
