"""What a tool handler may see: an immutable snapshot of the call's surroundings."""

import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Protocol

from weakincentives._direct import direct_constructor
from weakincentives.errors import PromptValidationError
from weakincentives.prompt._collaborators import (
    EvaluatingAdapter,
    EventPublisher,
    SessionProtocol,
)
from weakincentives.prompt._prompt import Prompt
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._tool import Tool
from weakincentives.serde import JSONValue

__all__ = [
    "ProviderRequest",
    "ResponseAccumulator",
    "ToolContext",
    "ToolInvocationContext",
    "build_tool_context",
]

type ProviderRequest = Mapping[str, JSONValue]
"""The provider-bound request body, as JSON, when the adapter built one."""

_EXTRA_KEY = re.compile(r"^[a-z][a-z0-9_]*$")


class ResponseAccumulator(Protocol):
    """Read access to what the model has produced so far in the current evaluation."""

    def text(self) -> str:
        """Assistant text produced so far, across rounds, in order."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolInvocationContext:
    """Metadata about one specific tool call."""

    invocation_id: str
    """The provider's call id (or a generated one), unique within the evaluation."""
    timestamp: datetime
    """When the call started, timezone-aware."""
    retry_count: int = 0
    """How many times this call was retried before this attempt."""
    parent_message_id: str | None = None
    """The provider message (response) that requested the call, when known."""
    evaluation_id: str = ""
    """The evaluation the call belongs to (shared by its events); empty outside one."""
    adapter_name: str = ""
    """The name of the adapter running the evaluation; empty outside one."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """The read-only context passed to every handler as ``context=``.

    Built immediately before a handler runs and discarded after; nothing is reused
    across calls. Handlers communicate outcomes through their ``ToolResult``, and
    may publish events on ``event_bus`` or keep state in ``session.storage``.
    """

    prompt: Prompt[Any]
    """The prompt being evaluated; its section tree can be inspected."""
    rendered_prompt: RenderedPrompt[Any] | None
    """The render the model is reading, once rendering has happened."""
    adapter: EvaluatingAdapter | None
    """The adapter running the evaluation; None when a tool runs outside one."""
    session: SessionProtocol
    """The session recording this evaluation's events."""
    event_bus: EventPublisher
    """Where this evaluation's events go; pass it as ``bus=`` to nested evaluations."""
    tool: Tool[Any, Any]
    """The tool being invoked."""
    invocation: ToolInvocationContext
    """Ids, timing and ancestry of this call."""
    request: ProviderRequest | None = None
    """The provider request that led to this call, when the adapter built one."""
    response_accumulator: ResponseAccumulator | None = None
    """What the model produced so far, when the adapter tracks it."""
    extras: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    """Adapter- or orchestrator-specific extensions; snake_case keys."""


def build_tool_context(
    *,
    prompt: Prompt[Any],
    tool: Tool[Any, Any],
    session: SessionProtocol,
    event_bus: EventPublisher,
    invocation: ToolInvocationContext | None = None,
    rendered_prompt: RenderedPrompt[Any] | None = None,
    adapter: EvaluatingAdapter | None = None,
    request: ProviderRequest | None = None,
    response_accumulator: ResponseAccumulator | None = None,
    extras: Mapping[str, object] | None = None,
    clock: Callable[[], datetime] | None = None,
    id_factory: Callable[[], str] | None = None,
) -> ToolContext:
    """Assemble a :class:`ToolContext`, creating the invocation record when not given.

    ``clock`` and ``id_factory`` make the generated invocation deterministic in tests.
    """
    if invocation is None:
        invocation = ToolInvocationContext(
            invocation_id=(id_factory or _new_id)(),
            timestamp=(clock or _now)(),
        )
    frozen_extras = _checked_extras(extras, tool_name=tool.name)
    return _make_context(
        prompt=prompt,
        rendered_prompt=rendered_prompt,
        adapter=adapter,
        session=session,
        event_bus=event_bus,
        tool=tool,
        invocation=invocation,
        request=request,
        response_accumulator=response_accumulator,
        extras=frozen_extras,
    )


_NO_EXTRAS: Mapping[str, object] = MappingProxyType({})
# Every tool call builds a context from checked values: skip the frozen __init__.
_make_context = direct_constructor(ToolContext)


def _checked_extras(
    extras: Mapping[str, object] | None, *, tool_name: str | None = None
) -> Mapping[str, object]:
    """``extras`` as a read-only copy; keys must be snake_case ASCII (PromptValidationError)."""
    if not extras:
        return _NO_EXTRAS
    bad = sorted(key for key in extras if not isinstance(key, str) or not _EXTRA_KEY.fullmatch(key))
    if bad:
        raise PromptValidationError(
            "ToolContext extras keys must be snake_case ASCII, got " + ", ".join(map(repr, bad)),
            tool_name=tool_name,
        )
    return MappingProxyType(dict(extras))


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex}"


def _now() -> datetime:
    return datetime.now(UTC)
