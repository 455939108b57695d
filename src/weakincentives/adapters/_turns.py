"""The provider-neutral turn model: what the loop asks a model and what comes back.

Each provider translates a :class:`TurnRequest` into its wire format and the reply into
a :class:`ModelTurn` (see ``_provider.Provider``). Everything else (executing tools,
feeding results back, halting, parsing output, retries, events) lives once, in the loop.

A conversation is neutral: a turn's text, tool calls and refusal are always enough to
send it again to any provider. ``raw_items`` add what only the provider that wrote them
can replay (item ids, reasoning, hosted-tool results); a provider replays them only when
``raw_format`` is its own, and otherwise rebuilds the turn from the neutral fields, or
refuses with ``HistoryTranslationError`` when ``untranslatable`` names items that would
be lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from weakincentives.adapters._structured import OutputSchema
from weakincentives.prompt import RenderedPrompt
from weakincentives.runtime import TokenUsage, ToolCall
from weakincentives.serde import JSONValue

__all__ = [
    "AssistantMessage",
    "ConversationItem",
    "FeedbackMessage",
    "ModelTurn",
    "PromptMessage",
    "ToolOutputMessage",
    "TurnRequest",
]

type RawItem = Mapping[str, JSONValue]
"""One provider-native output item, as decoded JSON."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelTurn:
    """One model reply: text, tool calls, and the provider's raw items."""

    text: str = ""
    """Assistant text of this turn, in order."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Function calls the model asked for, in order."""
    raw_items: tuple[RawItem, ...] = ()
    """Provider-native output items, replayed on the next round and read by hosted-tool codecs."""
    raw_format: str | None = None
    """The wire format ``raw_items`` are in (``openai-responses``, ``openai-chat``,
    ``anthropic-messages``, ``offline``); only a provider of that format replays them."""
    untranslatable: tuple[str, ...] = ()
    """Types of raw items with no neutral form (hosted-tool calls and results): another
    provider cannot carry this turn on without losing them, so it refuses."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    response_id: str | None = None
    refusal: str | None = None
    """The model's refusal text, when it declined to answer."""
    request: Mapping[str, JSONValue] | None = None
    """The provider-bound request body that produced this turn, shown to handlers."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptMessage:
    """The rendered prompt that opens the conversation."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage:
    """A model turn, kept in the history so providers can replay it."""

    turn: ModelTurn


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutputMessage:
    """A tool result sent back to the model for one call."""

    call_id: str
    name: str
    content: str
    """What the model reads: ``ToolResult.model_content()``."""
    success: bool
    loaded: tuple[str, ...] = ()
    """Catalogue tool ids a search call found (its payload's ``loaded_tool_ids``): a
    provider loading a catalogue natively sends their definitions instead of the text."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedbackMessage:
    """A note from the loop to the model, sent as a user message.

    Used when the final answer did not fit the output type: the model reads what was
    wrong (with its JSON path) and answers again.
    """

    text: str


type ConversationItem = PromptMessage | AssistantMessage | ToolOutputMessage | FeedbackMessage


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRequest:
    """Everything a provider needs to produce the next turn."""

    prompt_name: str
    rendered: RenderedPrompt[Any]
    history: tuple[ConversationItem, ...]
    """The conversation so far, oldest first, starting with the prompt."""
    hosted_tools: tuple[Mapping[str, JSONValue], ...]
    """Hosted tools already serialized by the adapter's codecs."""
    output_schema: OutputSchema | None
    round: int
    """1 for the first request of an evaluation."""
    deadline: datetime | None = None
    evaluation_id: str = ""
    """The evaluation this request belongs to."""
    max_output_tokens: int | None = None
    """The cap on tokens the model may write in this turn (None: the provider's default)."""
    constrain_output: bool = True
    """Send ``output_schema`` in the request's format field. False while the model may
    still call tools (``LoopSettings.answer_schema``): a server that enforces the schema
    as a grammar over the whole reply would leave it no way to call one. The prompt
    text states the answer's shape either way."""
    allow_tool_calls: bool = True
    """False for the loop's tools-free final turn: the tools are still listed (earlier
    turns refer to them) but the request asks for no call (``tool_choice`` none)."""
