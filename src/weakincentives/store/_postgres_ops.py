"""The store's operations in PostgreSQL's idiom, each on one pooled connection.

Writes are explicit transactions on autocommit connections. An append first upserts
the session's row, ``last_seq = last_seq + n``: the row lock it takes makes concurrent
appenders to the same session (from any process or machine) wait their turn until the
first commits, and the primary key on ``(session_id, seq)`` is the backstop. Its events
go in with one ``INSERT ... SELECT FROM unnest(...)`` in the same statement, so a batch
costs one statement between ``BEGIN`` and ``COMMIT``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from weakincentives.errors import (
    ApprovalConflictError,
    CheckpointConflictError,
    FormatVersionError,
    UnknownApprovalError,
)
from weakincentives.store._checks import check_format, decode
from weakincentives.store._records import (
    Approval,
    ApprovalDecision,
    Checkpoint,
    EvaluationStatus,
    EvaluationSummary,
    SessionSummary,
    Step,
    StoredEvent,
)

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "append",
    "decide_approval",
    "delete_evaluation",
    "delete_session",
    "list_evaluations",
    "list_sessions",
    "load_checkpoint",
    "pending_approvals",
    "read",
    "read_approvals",
    "read_steps",
    "record_step",
    "request_approval",
    "save_checkpoint",
]

type Connection = psycopg.AsyncConnection[Any]
type Row = tuple[Any, ...]

# One statement: the session row's upsert takes its row lock and yields the new last seq,
# and the data-modifying CTE inserts the batch numbered up to it (such a CTE always runs
# to completion, read or not).
_APPEND = """
WITH session AS (
    INSERT INTO wink_sessions AS s (session_id, last_seq, created_at, updated_at)
    VALUES (%(session_id)s, %(count)s, %(now)s, %(now)s)
    ON CONFLICT (session_id) DO UPDATE
    SET last_seq = s.last_seq + excluded.last_seq, updated_at = excluded.updated_at
    RETURNING last_seq
), inserted AS (
    INSERT INTO wink_events (session_id, seq, type_name, format_version, document, created_at)
    SELECT %(session_id)s, session.last_seq - %(count)s + batch.ordinality, batch.type_name,
        %(format_version)s, batch.document::json, %(now)s
    FROM session, unnest(%(type_names)s::text[], %(documents)s::text[])
        WITH ORDINALITY AS batch (type_name, document, ordinality)
)
SELECT last_seq FROM session
"""
_SAVE_CHECKPOINT = """
INSERT INTO wink_checkpoints AS c
    (evaluation_id, round, status, session_id, format_version, document, saved_at)
VALUES (%s, %s, %s, %s, %s, %s::json, %s)
ON CONFLICT (evaluation_id) DO UPDATE
SET round = excluded.round, status = excluded.status, session_id = excluded.session_id,
    format_version = excluded.format_version, document = excluded.document,
    saved_at = excluded.saved_at
WHERE c.round <= excluded.round AND c.format_version <= excluded.format_version
RETURNING round
"""
_APPROVAL_COLUMNS = (
    "evaluation_id, call_id, tool_name, format_version, arguments::text, requested_at,"
    " decision, message, decided_at"
)


async def _rows(connection: Connection, query: str, params: tuple[Any, ...] = ()) -> list[Row]:
    cursor = await connection.execute(query, params)
    return await cursor.fetchall()


async def _row(connection: Connection, query: str, params: tuple[Any, ...]) -> Row | None:
    cursor = await connection.execute(query, params)
    return await cursor.fetchone()


# -- sessions -------------------------------------------------------------------------


async def append(
    connection: Connection,
    session_id: str,
    rows: list[tuple[str, str]],
    *,
    format_version: int,
    now: datetime,
) -> tuple[int, int]:
    """Append encoded (type name, document) rows in one transaction."""
    async with connection.transaction():
        return await _append_rows(
            connection, session_id, rows, format_version=format_version, now=now
        )


async def _append_rows(
    connection: Connection,
    session_id: str,
    rows: list[tuple[str, str]],
    *,
    format_version: int,
    now: datetime,
) -> tuple[int, int]:
    """The append itself, inside the caller's transaction."""
    count = len(rows)
    cursor = await connection.execute(
        _APPEND,
        {
            "session_id": session_id,
            "count": count,
            "now": now,
            "format_version": format_version,
            "type_names": [type_name for type_name, _ in rows],
            "documents": [document for _, document in rows],
        },
    )
    saved = await cursor.fetchone()
    assert saved is not None  # the upsert returns the session's row
    last = int(saved[0])
    return last - count + 1, last


async def read(
    connection: Connection,
    session_id: str,
    after: int,
    limit: int | None,
    *,
    format_version: int,
) -> tuple[StoredEvent, ...]:
    """A session's events after ``after``, in order."""
    rows = await _rows(
        connection,
        "SELECT seq, type_name, format_version, document::text, created_at FROM wink_events"
        " WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
        (session_id, after, limit),
    )
    events: list[StoredEvent] = []
    for seq, type_name, row_format, document, created_at in rows:
        if row_format > format_version:
            raise FormatVersionError(
                record=f"event {seq} of session {session_id!r}",
                found=row_format,
                supported=format_version,
            )
        events.append(
            StoredEvent(
                session_id=session_id,
                seq=seq,
                type_name=type_name,
                document=decode(document),
                format_version=row_format,
                created_at=created_at.astimezone(UTC),
            )
        )
    return tuple(events)


async def list_sessions(connection: Connection) -> tuple[SessionSummary, ...]:
    """Every session, by id."""
    rows = await _rows(
        connection,
        "SELECT session_id, last_seq, created_at, updated_at FROM wink_sessions"
        " ORDER BY session_id",
    )
    return tuple(
        SessionSummary(
            session_id=session_id,
            last_seq=last_seq,
            created_at=created_at.astimezone(UTC),
            updated_at=updated_at.astimezone(UTC),
        )
        for session_id, last_seq, created_at, updated_at in rows
    )


async def delete_session(connection: Connection, session_id: str) -> bool:
    """Delete a session row (locking out appenders) and then its events."""
    async with connection.transaction():
        cursor = await connection.execute(
            "DELETE FROM wink_sessions WHERE session_id = %s", (session_id,)
        )
        deleted = cursor.rowcount
        await connection.execute("DELETE FROM wink_events WHERE session_id = %s", (session_id,))
    return deleted > 0


# -- checkpoints ----------------------------------------------------------------------


async def save_checkpoint(
    connection: Connection,
    evaluation_id: str,
    *,
    round: int,
    status: EvaluationStatus,
    session_id: str | None,
    document: str,
    events: list[tuple[str, str]],
    format_version: int,
    now: datetime,
) -> Checkpoint:
    """Replace the checkpoint unless the stored one is of a later round or format.

    ``events`` go to the session's log in the same transaction, only if it saves.
    """
    async with connection.transaction():
        saved = await _row(
            connection,
            _SAVE_CHECKPOINT,
            (evaluation_id, round, status, session_id, format_version, document, now),
        )
        if saved is None:
            stored = await _row(
                connection,
                "SELECT round, format_version FROM wink_checkpoints WHERE evaluation_id = %s",
                (evaluation_id,),
            )
            assert stored is not None  # the upsert found it and locked it
            check_format(
                stored[1], format_version, record=f"the checkpoint of evaluation {evaluation_id!r}"
            )
            raise CheckpointConflictError(
                evaluation_id=evaluation_id, round=round, stored_round=stored[0]
            )
        if events:
            assert session_id is not None  # checked in front
            await _append_rows(
                connection, session_id, events, format_version=format_version, now=now
            )
    return Checkpoint(
        evaluation_id=evaluation_id,
        round=round,
        status=status,
        session_id=session_id,
        document=decode(document),
        format_version=format_version,
        saved_at=now,
    )


async def load_checkpoint(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> Checkpoint | None:
    """The latest checkpoint of an evaluation."""
    row = await _row(
        connection,
        "SELECT round, status, session_id, format_version, document::text, saved_at"
        " FROM wink_checkpoints WHERE evaluation_id = %s",
        (evaluation_id,),
    )
    if row is None:
        return None
    round_, status, session_id, row_format, document, saved_at = row
    check_format(
        row_format, format_version, record=f"the checkpoint of evaluation {evaluation_id!r}"
    )
    return Checkpoint(
        evaluation_id=evaluation_id,
        round=round_,
        status=status,
        session_id=session_id,
        document=decode(document),
        format_version=row_format,
        saved_at=saved_at.astimezone(UTC),
    )


async def list_evaluations(
    connection: Connection, status: EvaluationStatus | None
) -> tuple[EvaluationSummary, ...]:
    """Evaluations with a checkpoint, by id."""
    rows = await _rows(
        connection,
        "SELECT evaluation_id, round, status, session_id, saved_at FROM wink_checkpoints"
        " WHERE %s::text IS NULL OR status = %s ORDER BY evaluation_id",
        (status, status),
    )
    return tuple(
        EvaluationSummary(
            evaluation_id=evaluation_id,
            round=round_,
            status=row_status,
            session_id=session_id,
            saved_at=saved_at.astimezone(UTC),
        )
        for evaluation_id, round_, row_status, session_id, saved_at in rows
    )


async def delete_evaluation(connection: Connection, evaluation_id: str) -> bool:
    """Delete an evaluation's checkpoint, steps and approvals."""
    deleted = 0
    async with connection.transaction():
        for query in (
            "DELETE FROM wink_checkpoints WHERE evaluation_id = %s",
            "DELETE FROM wink_steps WHERE evaluation_id = %s",
            "DELETE FROM wink_approvals WHERE evaluation_id = %s",
        ):
            cursor = await connection.execute(query, (evaluation_id,))
            deleted += cursor.rowcount
    return deleted > 0


# -- steps ----------------------------------------------------------------------------


async def record_step(
    connection: Connection,
    evaluation_id: str,
    key: str,
    document: str,
    *,
    session_id: str | None,
    events: list[tuple[str, str]],
    format_version: int,
    now: datetime,
) -> Step:
    """Insert a step unless it exists, and then its events; return the stored step.

    Under READ COMMITTED the insert waits for a concurrent writer of the same key; if
    that one commits, the insert does nothing (so neither do the events) and the next
    statement sees its row.
    """
    async with connection.transaction():
        cursor = await connection.execute(
            "INSERT INTO wink_steps (evaluation_id, step_key, format_version, document,"
            " recorded_at) VALUES (%s, %s, %s, %s::json, %s)"
            " ON CONFLICT (evaluation_id, step_key) DO NOTHING",
            (evaluation_id, key, format_version, document, now),
        )
        if cursor.rowcount and events:
            assert session_id is not None  # checked in front
            await _append_rows(
                connection, session_id, events, format_version=format_version, now=now
            )
        row = await _row(
            connection,
            "SELECT step_key, format_version, document::text, recorded_at FROM wink_steps"
            " WHERE evaluation_id = %s AND step_key = %s",
            (evaluation_id, key),
        )
    assert row is not None  # inserted, or found, inside this transaction
    return _step(evaluation_id, row, format_version)


async def read_steps(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> tuple[Step, ...]:
    """An evaluation's steps in recording order."""
    rows = await _rows(
        connection,
        "SELECT step_key, format_version, document::text, recorded_at FROM wink_steps"
        " WHERE evaluation_id = %s ORDER BY id",
        (evaluation_id,),
    )
    return tuple(_step(evaluation_id, row, format_version) for row in rows)


def _step(evaluation_id: str, row: Row, supported: int) -> Step:
    key, row_format, document, recorded_at = row
    check_format(row_format, supported, record=f"step {key!r} of evaluation {evaluation_id!r}")
    return Step(
        evaluation_id=evaluation_id,
        key=key,
        document=decode(document),
        format_version=row_format,
        recorded_at=recorded_at.astimezone(UTC),
    )


# -- approvals ------------------------------------------------------------------------


async def request_approval(
    connection: Connection,
    evaluation_id: str,
    *,
    call_id: str,
    tool_name: str,
    arguments: str,
    format_version: int,
    now: datetime,
) -> Approval:
    """Insert a pending approval unless the call has one; return the stored one."""
    async with connection.transaction():
        await connection.execute(
            "INSERT INTO wink_approvals (evaluation_id, call_id, tool_name, format_version,"
            " arguments, requested_at) VALUES (%s, %s, %s, %s, %s::json, %s)"
            " ON CONFLICT (evaluation_id, call_id) DO NOTHING",
            (evaluation_id, call_id, tool_name, format_version, arguments, now),
        )
        row = await _approval_row(connection, evaluation_id, call_id, lock=False)
    assert row is not None  # inserted, or found, inside this transaction
    return _approval(row, format_version)


async def decide_approval(
    connection: Connection,
    evaluation_id: str,
    call_id: str,
    *,
    decision: ApprovalDecision,
    message: str | None,
    format_version: int,
    now: datetime,
) -> Approval:
    """Decide a pending approval once (the row is locked while it is decided)."""
    async with connection.transaction():
        row = await _approval_row(connection, evaluation_id, call_id, lock=True)
        if row is None:
            raise UnknownApprovalError(evaluation_id=evaluation_id, call_id=call_id)
        stored_decision, stored_message = row[6], row[7]
        if stored_decision is None:
            await connection.execute(
                "UPDATE wink_approvals SET decision = %s, message = %s, decided_at = %s"
                " WHERE evaluation_id = %s AND call_id = %s",
                (decision, message, now, evaluation_id, call_id),
            )
            row = (*row[:6], decision, message, now)
        elif (stored_decision, stored_message) != (decision, message):
            raise ApprovalConflictError(
                evaluation_id=evaluation_id,
                call_id=call_id,
                decision=decision,
                stored_decision=stored_decision,
            )
    return _approval(row, format_version)


async def read_approvals(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> tuple[Approval, ...]:
    """An evaluation's approvals in request order."""
    rows = await _rows(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE evaluation_id = %s ORDER BY id",
        (evaluation_id,),
    )
    return tuple(_approval(row, format_version) for row in rows)


async def pending_approvals(
    connection: Connection, evaluation_id: str | None, *, format_version: int
) -> tuple[Approval, ...]:
    """Undecided approvals, oldest first."""
    rows = await _rows(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE decision IS NULL"
        " AND (%s::text IS NULL OR evaluation_id = %s) ORDER BY requested_at, id",
        (evaluation_id, evaluation_id),
    )
    return tuple(_approval(row, format_version) for row in rows)


async def _approval_row(
    connection: Connection, evaluation_id: str, call_id: str, *, lock: bool
) -> Row | None:
    return await _row(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals"
        f" WHERE evaluation_id = %s AND call_id = %s{' FOR UPDATE' if lock else ''}",
        (evaluation_id, call_id),
    )


def _approval(row: Row, supported: int) -> Approval:
    evaluation_id, call_id, tool_name, row_format, arguments, requested_at = row[:6]
    decision, message, decided_at = row[6:]
    check_format(
        row_format,
        supported,
        record=f"the approval of call {call_id!r} of evaluation {evaluation_id!r}",
    )
    return Approval(
        evaluation_id=evaluation_id,
        call_id=call_id,
        tool_name=tool_name,
        arguments=decode(arguments),
        format_version=row_format,
        requested_at=requested_at.astimezone(UTC),
        decision=decision,
        message=message,
        decided_at=None if decided_at is None else decided_at.astimezone(UTC),
    )
