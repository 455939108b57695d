"""What a tool handler reaches through ``ToolContext``, as small protocols.

``prompt`` sits below ``runtime`` and ``adapters`` (DESIGN.md), so ``ToolContext``
cannot name their classes. It names these protocols instead; the runtime's
``Session`` and event buses and every adapter satisfy them structurally, and the
adapters accept them, so a handler can hand its context's session and bus to a
nested evaluation without a cast.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Protocol
from uuid import UUID

from weakincentives.prompt._prompt import Prompt
from weakincentives.prompt._template import PromptTemplate
from weakincentives.prompt._visibility import VisibilityOverrides

__all__ = [
    "EvaluatingAdapter",
    "EvaluationOutcome",
    "EventPublisher",
    "SessionProtocol",
    "SessionStore",
]


class EventPublisher(Protocol):
    """Somewhere to announce events; ``runtime.EventBus`` is the full bus."""

    def publish(self, event: object, /) -> object:
        """Deliver ``event`` to whoever listens; the return value is the bus's own report."""
        ...


class SessionStore(Protocol):
    """Key/value state a session keeps for tools (``runtime.SessionStorage``)."""

    def get[T](self, key: str, type_: type[T]) -> T | None:
        """The value stored under ``key`` if it is a ``type_``, else None."""
        ...

    def set(self, key: str, value: object) -> None:
        """Store ``value`` under ``key``."""
        ...

    def delete(self, key: str) -> bool:
        """Remove ``key``; True when it was there."""
        ...

    def keys(self) -> tuple[str, ...]:
        """Every stored key."""
        ...


class SessionProtocol(Protocol):
    """What tools and the evaluation loop rely on from a session."""

    @property
    def session_id(self) -> UUID:
        """The session's identity, stamped on the events it records."""
        ...

    @property
    def storage(self) -> SessionStore:
        """Key/value state tools keep in the session."""
        ...

    @property
    def bus(self) -> EventPublisher | None:
        """The bus the session records from, or None when events are applied directly."""
        ...

    def select[S](self, slice_type: type[S]) -> tuple[S, ...]:
        """Every value in the slice of ``slice_type``, oldest first."""
        ...

    def latest[S](self, slice_type: type[S]) -> S | None:
        """The newest value in the slice of ``slice_type``, or None when it is empty."""
        ...

    def apply(self, event: object) -> None:
        """Fold ``event`` into the session through its reducers."""
        ...


class EvaluationOutcome[OutputT](Protocol):
    """The part of an adapter's ``PromptResponse`` a nested evaluation usually reads."""

    @property
    def text(self) -> str:
        """The model's final text."""
        ...

    @property
    def output(self) -> OutputT | None:
        """The parsed structured answer, when the prompt declares one."""
        ...


class EvaluatingAdapter(Protocol):
    """The adapter running the evaluation, as a handler may use it for nested evaluations."""

    @property
    def name(self) -> str:
        """Short adapter name used in events and errors."""
        ...

    def evaluate[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> EvaluationOutcome[OutputT]:
        """Evaluate synchronously (from a sync handler)."""
        ...

    async def evaluate_async[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> EvaluationOutcome[OutputT]:
        """Evaluate on the running event loop (from an async handler)."""
        ...
