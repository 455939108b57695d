"""What the checked front hands a backend to write: arguments checked, documents encoded.

One value per kind of write keeps the front, both backends and their SQL in agreement
about what a write carries, instead of each repeating the same list of keywords.
"""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.store._records import ApprovalDecision, EvaluationStatus

__all__ = ["ApprovalRequest", "CheckpointWrite", "EventRows", "StepWrite", "Verdict"]

type EventRows = list[tuple[str, str]]
"""Encoded events as (type name, document) pairs, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointWrite:
    """A checkpoint to save, with the events to append if (and only if) it saves."""

    evaluation_id: str
    round: int
    status: EvaluationStatus
    session_id: str | None
    """The log ``events`` go to; set whenever ``events`` is not empty."""
    document: str
    events: EventRows


@dataclass(frozen=True, slots=True, kw_only=True)
class StepWrite:
    """A step to record once, with the events to append if this call records it."""

    evaluation_id: str
    key: str
    document: str
    session_id: str | None
    """The log ``events`` go to; set whenever ``events`` is not empty."""
    events: EventRows


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalRequest:
    """A call to store as waiting for approval."""

    evaluation_id: str
    call_id: str
    tool_name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The decision on a waiting call."""

    evaluation_id: str
    call_id: str
    decision: ApprovalDecision
    message: str | None
