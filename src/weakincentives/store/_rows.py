"""Rows read back into records, and the write rules both backends apply alike.

The two backends select the same columns in the same order; they differ only in how a
timestamp comes back (ISO text from SQLite, a ``datetime`` from PostgreSQL), so each
reader takes the backend's ``Stamp``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, NoReturn

from weakincentives.errors import (
    ApprovalConflictError,
    CheckpointConflictError,
    StoredRowError,
    UnknownApprovalError,
)
from weakincentives.store._checks import check_format, decode
from weakincentives.store._records import (
    Approval,
    Checkpoint,
    EvaluationSummary,
    SessionSummary,
    Step,
    StoredEvent,
)
from weakincentives.store._writes import CheckpointWrite, Verdict

__all__ = [
    "Row",
    "Stamp",
    "approval",
    "checkpoint",
    "decide",
    "evaluation_summary",
    "event",
    "refuse_checkpoint",
    "saved_checkpoint",
    "session_summary",
    "step",
]

type Row = tuple[Any, ...]
type Stamp = Callable[[Any], datetime]
"""A stored timestamp as an aware UTC datetime."""


def event(session_id: str, row: Row, supported: int, stamp: Stamp) -> StoredEvent:
    """``seq, type_name, format_version, document, created_at`` of ``session_id``."""
    seq, type_name, format_version, document, created_at = row
    record = f"event {seq} of session {session_id!r}"
    format_version = _whole(format_version, record, "format_version")
    check_format(format_version, supported, record=record)
    return StoredEvent(
        session_id=session_id,
        seq=_whole(seq, record, "seq"),
        type_name=type_name,
        document=decode(document, record=record),
        format_version=format_version,
        created_at=_time(stamp, created_at, record, "created_at"),
    )


def session_summary(row: Row, stamp: Stamp) -> SessionSummary:
    """``session_id, last_seq, created_at, updated_at``."""
    session_id, last_seq, created_at, updated_at = row
    record = f"session {session_id!r}"
    return SessionSummary(
        session_id=session_id,
        last_seq=_whole(last_seq, record, "last_seq"),
        created_at=_time(stamp, created_at, record, "created_at"),
        updated_at=_time(stamp, updated_at, record, "updated_at"),
    )


def checkpoint(evaluation_id: str, row: Row, supported: int, stamp: Stamp) -> Checkpoint:
    """``round, status, session_id, format_version, document, saved_at``."""
    round_, status, session_id, format_version, document, saved_at = row
    record = f"the checkpoint of evaluation {evaluation_id!r}"
    format_version = _whole(format_version, record, "format_version")
    check_format(format_version, supported, record=record)
    return Checkpoint(
        evaluation_id=evaluation_id,
        round=_whole(round_, record, "round"),
        status=status,
        session_id=session_id,
        document=decode(document, record=record),
        format_version=format_version,
        saved_at=_time(stamp, saved_at, record, "saved_at"),
    )


def saved_checkpoint(write: CheckpointWrite, format_version: int, now: datetime) -> Checkpoint:
    """The checkpoint ``write`` saved at ``now``."""
    return Checkpoint(
        evaluation_id=write.evaluation_id,
        round=write.round,
        status=write.status,
        session_id=write.session_id,
        document=decode(
            write.document, record=f"the checkpoint of evaluation {write.evaluation_id!r}"
        ),
        format_version=format_version,
        saved_at=now,
    )


def refuse_checkpoint(write: CheckpointWrite, stored: Row, supported: int) -> NoReturn:
    """Why a save was refused: the stored ``(round, format_version)`` is ahead of it."""
    stored_round, stored_format = stored
    record = f"the checkpoint of evaluation {write.evaluation_id!r}"
    check_format(_whole(stored_format, record, "format_version"), supported, record=record)
    raise CheckpointConflictError(
        evaluation_id=write.evaluation_id,
        round=write.round,
        stored_round=_whole(stored_round, record, "round"),
    )


def evaluation_summary(row: Row, stamp: Stamp) -> EvaluationSummary:
    """``evaluation_id, round, status, session_id, saved_at``."""
    evaluation_id, round_, status, session_id, saved_at = row
    record = f"the checkpoint of evaluation {evaluation_id!r}"
    return EvaluationSummary(
        evaluation_id=evaluation_id,
        round=_whole(round_, record, "round"),
        status=status,
        session_id=session_id,
        saved_at=_time(stamp, saved_at, record, "saved_at"),
    )


def step(evaluation_id: str, row: Row, supported: int, stamp: Stamp) -> Step:
    """``step_key, format_version, document, recorded_at`` of ``evaluation_id``."""
    key, format_version, document, recorded_at = row
    record = f"step {key!r} of evaluation {evaluation_id!r}"
    format_version = _whole(format_version, record, "format_version")
    check_format(format_version, supported, record=record)
    return Step(
        evaluation_id=evaluation_id,
        key=key,
        document=decode(document, record=record),
        format_version=format_version,
        recorded_at=_time(stamp, recorded_at, record, "recorded_at"),
    )


def approval(row: Row, supported: int, stamp: Stamp) -> Approval:
    """The approval columns, in the order both backends select them."""
    evaluation_id, call_id, tool_name, format_version, arguments, requested_at = row[:6]
    decision, message, decided_at = row[6:]
    record = f"the approval of call {call_id!r} of evaluation {evaluation_id!r}"
    format_version = _whole(format_version, record, "format_version")
    check_format(format_version, supported, record=record)
    return Approval(
        evaluation_id=evaluation_id,
        call_id=call_id,
        tool_name=tool_name,
        arguments=decode(arguments, record=record),
        format_version=format_version,
        requested_at=_time(stamp, requested_at, record, "requested_at"),
        decision=decision,
        message=message,
        decided_at=None if decided_at is None else _time(stamp, decided_at, record, "decided_at"),
    )


def _whole(value: object, record: str, column: str) -> int:
    """A count column as read; SQLite keeps any value a hand edit wrote, so it is checked."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise StoredRowError(record=record, reason=f"its {column} is {value!r}, not a count")


def _time(stamp: Stamp, value: object, record: str, column: str) -> datetime:
    """A timestamp column as an aware datetime; a hand-edited one is refused, not guessed."""
    try:
        moment = stamp(value)
    except (TypeError, ValueError):
        moment = None
    if moment is None or moment.tzinfo is None:
        raise StoredRowError(
            record=record, reason=f"its {column} is {value!r}, not a time with its UTC offset"
        )
    return moment


def decide(verdict: Verdict, row: Row | None, now: object) -> tuple[Row, bool]:
    """The approval ``row`` once ``verdict`` is applied at ``now``, and whether it changed.

    Unchanged when it already holds the same decision; raises when there is no such
    approval, or when it was decided otherwise.
    """
    if row is None:
        raise UnknownApprovalError(evaluation_id=verdict.evaluation_id, call_id=verdict.call_id)
    stored_decision, stored_message = row[6], row[7]
    if stored_decision is None:
        return (*row[:6], verdict.decision, verdict.message, now), True
    if (stored_decision, stored_message) != (verdict.decision, verdict.message):
        raise ApprovalConflictError(
            evaluation_id=verdict.evaluation_id,
            call_id=verdict.call_id,
            decision=verdict.decision,
            stored_decision=stored_decision,
        )
    return row, False
