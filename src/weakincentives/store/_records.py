"""The values a store takes and gives back: events, checkpoints, steps and approvals.

Documents are JSON produced elsewhere (serde dumps them); the store keeps them as JSON
text beside the few columns it needs to order, find and guard them. Every row read back
carries the document format it was written in, so a reader can upgrade older layouts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from weakincentives.serde import JSONValue

__all__ = [
    "FORMAT_VERSION",
    "Approval",
    "ApprovalDecision",
    "Checkpoint",
    "EvaluationStatus",
    "EvaluationSummary",
    "NewEvent",
    "SessionSummary",
    "Step",
    "StoredEvent",
]

FORMAT_VERSION = 1
"""The document format this library writes, and the newest it reads.

Each stored row carries the format it was written in; a store refuses to read a row
of a newer format (:class:`~weakincentives.errors.FormatVersionError`) rather than
misread it. The number rises whenever the layout of a stored document changes.
"""

type EvaluationStatus = Literal["running", "paused", "done", "failed"]
"""Where an evaluation stands: still going, waiting (for a person), finished, given up."""

EVALUATION_STATUSES: tuple[EvaluationStatus, ...] = ("running", "paused", "done", "failed")

type ApprovalDecision = Literal["approved", "denied"]
"""What a person decided about a tool call that waited for approval."""

APPROVAL_DECISIONS: tuple[ApprovalDecision, ...] = ("approved", "denied")


@dataclass(frozen=True, slots=True, kw_only=True)
class NewEvent:
    """One event to append to a session's log."""

    type_name: str
    """The stable name of the event's type, such as ``weakincentives.runtime:ToolInvoked``."""
    document: JSONValue
    """The event as JSON (serde's dump of it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredEvent:
    """One event of a session's log, as the store keeps it."""

    session_id: str
    seq: int
    """Its place in the session: 1, 2, 3 ... with no gaps, assigned by the store."""
    type_name: str
    document: JSONValue
    format_version: int
    created_at: datetime
    """When the store appended its batch (UTC; one reading of the store's clock per batch)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSummary:
    """A session the store holds, without its events."""

    session_id: str
    last_seq: int
    """The sequence number of its newest event, which is also how many it has."""
    created_at: datetime
    updated_at: datetime
    """When its newest batch was appended."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    """The latest saved state of an evaluation: one per evaluation, replaced round by round."""

    evaluation_id: str
    round: int
    """The last completed round; saving never moves it backwards."""
    status: EvaluationStatus
    session_id: str | None
    """The session whose log holds the evaluation's events, if it has one."""
    document: JSONValue
    format_version: int
    saved_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluationSummary:
    """An evaluation's latest checkpoint without its document, for listings."""

    evaluation_id: str
    round: int
    status: EvaluationStatus
    session_id: str | None
    saved_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """The recorded result of one step of an evaluation (a provider reply, a tool call).

    Recorded once: a rerun finds it by its key instead of repeating the step.
    """

    evaluation_id: str
    key: str
    """The step's identity within the evaluation, such as ``round:3/call:call_abc``."""
    document: JSONValue
    format_version: int
    recorded_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Approval:
    """A tool call that waits, or waited, for a person to approve it."""

    evaluation_id: str
    call_id: str
    tool_name: str
    arguments: JSONValue
    """The call's arguments as the model sent them (JSON)."""
    format_version: int
    requested_at: datetime
    decision: ApprovalDecision | None
    """None while pending; a decision is final."""
    message: str | None
    """What the person said with the decision, passed on to the model."""
    decided_at: datetime | None
