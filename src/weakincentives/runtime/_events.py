"""The library's own telemetry events: rendered, tool invoked, executed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType, MemberDescriptorType
from typing import Any, Literal, Protocol, cast, runtime_checkable
from uuid import UUID

from weakincentives._direct import direct_constructor
from weakincentives.errors import EvaluationPhase
from weakincentives.prompt import SectionPath, SectionVisibility, ToolResult
from weakincentives.runtime._fieldwise import FieldwiseSum
from weakincentives.serde import DocumentKind, JSONValue

__all__ = [
    "EVENT_DOCUMENT",
    "ArgumentsText",
    "FailurePhase",
    "OutputRejected",
    "PromptExecuted",
    "PromptFailed",
    "PromptRendered",
    "RequestRetried",
    "TextDelta",
    "TokenUsage",
    "ToolInvoked",
    "ToolTelemetry",
    "make_tool_invoked",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})


@runtime_checkable
class ToolTelemetry(Protocol):
    """A result payload that adds its own fields to the ``ToolInvoked`` event."""

    def telemetry(self) -> Mapping[str, JSONValue]:
        """Return extra, JSON-shaped facts about the call for observers."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsage(FieldwiseSum):
    """Token counts reported by the provider for one evaluation (summed over rounds)."""

    input_tokens: int = 0
    """Every input token, cached or not (for Anthropic: input + cache reads + cache writes)."""
    output_tokens: int = 0
    """Every output token, reasoning included."""
    cached_input_tokens: int = 0
    """Input tokens read from the provider's prompt cache (part of ``input_tokens``)."""
    reasoning_tokens: int = 0
    """Output tokens spent on reasoning (part of ``output_tokens``)."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache (part of ``input_tokens``);
    providers that cache implicitly (OpenAI) report none."""

    @property
    def total_tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptRendered:
    """A prompt was rendered for an evaluation round."""

    evaluation_id: str
    """Links every event of one ``evaluate`` call."""
    prompt_ns: str
    prompt_key: str
    prompt_name: str
    adapter: str
    session_id: UUID | None
    text: str
    """The markdown the model reads."""
    tool_names: tuple[str, ...]
    hosted_tool_names: tuple[str, ...]
    visibility: Mapping[SectionPath, SectionVisibility]
    """Effective visibility of every rendered section."""
    created_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvoked:
    """A tool call finished, successfully or not; fired for every call the loop runs."""

    evaluation_id: str
    prompt_name: str
    adapter: str
    session_id: UUID | None
    name: str
    """The tool name the model called (which may not exist)."""
    call_id: str
    arguments: JSONValue
    """The arguments as the model sent them (decoded JSON, or the raw text if undecodable).

    A call whose JSON text parsed keeps only that text (the very string its ``ToolCall``
    holds) and decodes it on every read, so each read is a new value nothing else
    holds; equality, ``repr``, ``dataclasses.replace`` and stored documents all see the
    decoded JSON (see :class:`ArgumentsText`)."""
    params: object
    """The parsed params dataclass; None when the arguments did not parse."""
    result: ToolResult[Any]
    rendered_output: str
    """``result.render()``, or ``""`` when there is no value: what observers compare with
    the provider-visible tool message."""
    started_at: datetime
    finished_at: datetime
    telemetry: Mapping[str, JSONValue] = field(default=_EMPTY)
    """Extra facts from payloads implementing :class:`ToolTelemetry`."""
    exception: BaseException | None = field(default=None, compare=False)
    """The original exception behind a failure, for observability. A stored event keeps
    only its type name and message: loaded, this is a ``RecordedError`` carrying them."""

    @property
    def duration_ms(self) -> float:
        """Wall time of the call in milliseconds."""
        return (self.finished_at - self.started_at).total_seconds() * 1000

    @property
    def success(self) -> bool:
        """Whether the tool reported success."""
        return self.result.success


class ArgumentsText:
    """JSON text a call's params were parsed from, stored as its ``ToolInvoked.arguments``.

    The runtime keeps the text instead of a second, decoded copy of it (the parsed params
    are the first): the event's ``arguments`` decodes it on each read. Only text that
    :func:`~weakincentives.serde.loads` accepts is ever wrapped, so reading never fails,
    and the C decoder alone gives the same value.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


make_tool_invoked = direct_constructor(ToolInvoked)
"""Builds an event from checked values, without the frozen ``__init__`` (``_direct.py``);
``arguments`` may be an :class:`ArgumentsText`. Made before ``arguments`` becomes the
property below: it stores through the slot itself."""

_ARGUMENTS_SLOT = cast(MemberDescriptorType, ToolInvoked.__dict__["arguments"])


def _read_arguments(event: ToolInvoked) -> JSONValue:
    stored = _ARGUMENTS_SLOT.__get__(event, ToolInvoked)
    if stored.__class__ is ArgumentsText:
        decoded: JSONValue = json.loads(stored.text)
        return decoded
    return cast(JSONValue, stored)


_ARGUMENTS_DOC = (
    "The arguments as the model sent them (decoded JSON, or the raw text if undecodable)."
)

# The field stays a dataclass field (constructor keyword, fields(), replace, eq, repr,
# pickling, stored documents): only reading it goes through the text. Writing still
# stores into the slot, so the frozen __init__ and object.__setattr__ work unchanged.
setattr(  # noqa: B010  # a property over the slot, installed after the class is built
    ToolInvoked,
    "arguments",
    property(_read_arguments, _ARGUMENTS_SLOT.__set__, doc=_ARGUMENTS_DOC),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptExecuted:
    """An evaluation finished and produced a response."""

    evaluation_id: str
    prompt_name: str
    adapter: str
    session_id: UUID | None
    text: str
    """The model's final text (may be empty when it answered with structured output)."""
    output: object
    """The parsed structured output, or None for text-only prompts and halted turns."""
    tool_call_count: int
    """How many tool calls ran (the response's ``tool_executions``)."""
    rounds: int
    halted: bool
    """True when a terminal tool ended the evaluation before a final answer."""
    usage: TokenUsage
    """Summed over every request of the evaluation, re-renders after ``open_sections``
    and output retries included."""
    started_at: datetime
    finished_at: datetime
    model: str | None = None
    """The model the adapter asked for, as the adapter names it; None when the adapter
    does not say. Prices are looked up by this name (see ``Pricing``)."""

    @property
    def duration_ms(self) -> float:
        """Wall time of the evaluation in milliseconds."""
        return (self.finished_at - self.started_at).total_seconds() * 1000


type FailurePhase = EvaluationPhase | Literal["cancelled", "internal"]
"""Where an evaluation stopped: an evaluation phase, ``cancelled`` (the task was
cancelled or interrupted) or ``internal`` (an unexpected exception, a bug)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptFailed:
    """An evaluation raised instead of producing a response.

    Every evaluation ends with exactly one ``PromptExecuted`` or ``PromptFailed``, so a
    session never holds an evaluation that looks as if it were still running.
    """

    evaluation_id: str
    prompt_name: str
    adapter: str
    session_id: UUID | None
    phase: FailurePhase
    """``PromptEvaluationError.phase`` of the error, or ``cancelled`` / ``internal``."""
    message: str
    """The error's message."""
    error_type: str
    """The exception's class name, e.g. ``ProviderError``."""
    usage: TokenUsage
    """Tokens spent before the failure."""
    rounds: int
    """Requests sent before the failure."""
    started_at: datetime
    failed_at: datetime
    model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """A piece of the model's text, published as it arrives.

    Deltas of one round arrive in order and, joined, equal that round's text. A
    provider that does not stream yields its whole text as one delta.
    """

    evaluation_id: str
    prompt_name: str
    round: int
    """The request the text belongs to (1 for the first of the evaluation)."""
    index: int
    """Position of this delta within its round, from 0."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputRejected:
    """The final answer did not fit the output type; the model was told why and asked again."""

    evaluation_id: str
    prompt_name: str
    attempt: int
    """1 for the first rejected answer of the evaluation."""
    message: str
    """The parse problem as the model was told it (with its JSON path)."""
    path: str | None
    """JSON path of the offending value, when the answer was JSON."""
    text: str
    """The rejected answer."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestRetried:
    """A request to the provider failed in a way worth retrying; the loop sends it again.

    Published before the back-off starts, once per retry, so a transcript or a trace
    shows every attempt that did not count. The failure that ends an exchange is not
    a retry: it is the evaluation's error (``PromptFailed``).
    """

    evaluation_id: str
    prompt_name: str
    round: int
    """The round whose request is sent again (1 for the first of the evaluation)."""
    attempt: int
    """The attempt that failed: 1 for the first send of the round."""
    delay: float
    """Seconds the loop waits before the next attempt."""
    cause: str
    """The failure, as the error would say it (endpoint, status and hint included)."""
    status_code: int | None = None
    """The HTTP status of the failed attempt, when the provider answered."""
    error_type: str = "ProviderError"
    """The class name of the failure."""


EVENT_DOCUMENT: DocumentKind[object] = DocumentKind(
    name="weakincentives.event", value_type=object, version=1
)
"""The stored form of one event, the library's or the user's: the event with its type name.

``dump_document(EVENT_DOCUMENT, event)`` writes it; ``load_document`` reads it back equal.
When a library event's stored shape changes, this kind gets a new version and an upgrade.
"""
