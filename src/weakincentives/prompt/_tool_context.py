"""What a tool handler may see: the evaluation's facts (its scope), this tool and this call."""

import concurrent.futures
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Protocol

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
    "ExecutionScope",
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
    """The provider message (response) that requested the call, or for a nested call
    (discovery's ``call_tool`` running a tool) the invocation id of the call that ran it."""


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return f"call_{uuid.uuid4().hex}"


_NO_EXTRAS: Mapping[str, object] = MappingProxyType({})


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionScope:
    """The facts of one evaluation that every tool call in it shares, one name per fact.

    The loop builds one per model turn (the render and the request change between
    turns); every call of the turn gets it as ``context.scope``. A nested call (the
    discovery section's ``call_tool`` running a catalogue tool) runs under its
    handler's scope, so it keeps the evaluation's clock, id source, executor and
    extras. Outside an evaluation, build one to run tools directly with
    ``execute_tool_call``.
    """

    prompt: Prompt[Any]
    """The prompt being evaluated; its section tree can be inspected."""
    session: SessionProtocol
    """The session recording this evaluation's events."""
    event_bus: EventPublisher
    """Where this evaluation's events go; pass it as ``bus=`` to nested evaluations."""
    rendered_prompt: RenderedPrompt[Any] | None = None
    """The render the model is reading, once rendering has happened."""
    adapter: EvaluatingAdapter | None = None
    """The adapter running the evaluation; None when a tool runs outside one."""
    adapter_name: str = "direct"
    """The adapter's name, stamped on events ("direct" outside an evaluation)."""
    evaluation_id: str = ""
    """The evaluation the calls belong to (shared by its events); empty outside one."""
    request: ProviderRequest | None = None
    """The provider request of the current turn, when the adapter built one."""
    response_accumulator: ResponseAccumulator | None = None
    """What the model produced so far, when the adapter tracks it."""
    extras: Mapping[str, object] = _NO_EXTRAS
    """Adapter- or orchestrator-specific extensions; snake_case ASCII keys, kept read-only."""
    clock: Callable[[], datetime] = _now
    """The evaluation's clock: every timestamp of its calls comes from here."""
    new_id: Callable[[], str] = _new_id
    """The evaluation's id source: nested calls get their ids from here."""
    executor: concurrent.futures.Executor | None = None
    """Where sync handlers run (None: the running loop's default executor)."""

    def __post_init__(self) -> None:
        # A caller's dict must not change the record afterwards: keep a read-only copy.
        object.__setattr__(self, "extras", _checked_extras(self.extras))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """The read-only context passed to every handler as ``context=``.

    Built immediately before a handler runs and discarded after; nothing is reused
    across calls. It is the evaluation's :class:`ExecutionScope` plus this call's tool
    and invocation record; the scope's facts read as fields of the context
    (``context.session``, ``context.event_bus``...). Handlers communicate outcomes
    through their ``ToolResult``, and may publish events on ``event_bus`` or keep
    state in ``session.storage``.
    """

    scope: ExecutionScope
    """The evaluation's facts; a nested call runs under it unchanged."""
    tool: Tool[Any, Any]
    """The tool being invoked."""
    invocation: ToolInvocationContext
    """Ids, timing and ancestry of this call."""

    @property
    def prompt(self) -> Prompt[Any]:
        """The prompt being evaluated; its section tree can be inspected."""
        return self.scope.prompt

    @property
    def rendered_prompt(self) -> RenderedPrompt[Any] | None:
        """The render the model is reading, once rendering has happened."""
        return self.scope.rendered_prompt

    @property
    def adapter(self) -> EvaluatingAdapter | None:
        """The adapter running the evaluation; None when a tool runs outside one."""
        return self.scope.adapter

    @property
    def session(self) -> SessionProtocol:
        """The session recording this evaluation's events."""
        return self.scope.session

    @property
    def event_bus(self) -> EventPublisher:
        """Where this evaluation's events go; pass it as ``bus=`` to nested evaluations."""
        return self.scope.event_bus

    @property
    def request(self) -> ProviderRequest | None:
        """The provider request that led to this call, when the adapter built one."""
        return self.scope.request

    @property
    def response_accumulator(self) -> ResponseAccumulator | None:
        """What the model produced so far, when the adapter tracks it."""
        return self.scope.response_accumulator

    @property
    def extras(self) -> Mapping[str, object]:
        """Adapter- or orchestrator-specific extensions; snake_case keys."""
        return self.scope.extras


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
    new_id: Callable[[], str] | None = None,
) -> ToolContext:
    """Assemble a :class:`ToolContext`, creating the invocation record when not given.

    ``clock`` and ``new_id`` become the scope's clock and id source, and make the
    generated invocation deterministic in tests.
    """
    try:
        scope = ExecutionScope(
            prompt=prompt,
            session=session,
            event_bus=event_bus,
            rendered_prompt=rendered_prompt,
            adapter=adapter,
            request=request,
            response_accumulator=response_accumulator,
            extras=extras if extras is not None else _NO_EXTRAS,
            clock=clock or _now,
            new_id=new_id or _new_id,
        )
    except PromptValidationError as exc:
        raise PromptValidationError(exc.message, tool_name=tool.name) from None
    if invocation is None:
        invocation = ToolInvocationContext(invocation_id=scope.new_id(), timestamp=scope.clock())
    return ToolContext(scope=scope, tool=tool, invocation=invocation)


def _checked_extras(extras: Mapping[str, object] | None) -> Mapping[str, object]:
    """``extras`` as a read-only copy; keys must be snake_case ASCII (PromptValidationError)."""
    if not extras:
        return _NO_EXTRAS
    bad = sorted(key for key in extras if not isinstance(key, str) or not _EXTRA_KEY.fullmatch(key))
    if bad:
        raise PromptValidationError(
            "ToolContext extras keys must be snake_case ASCII, got " + ", ".join(map(repr, bad))
        )
    return MappingProxyType(dict(extras))
