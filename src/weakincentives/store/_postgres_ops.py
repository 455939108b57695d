"""The store's operations in PostgreSQL's idiom, each on one pooled connection.

Writes are explicit transactions on autocommit connections. An append first upserts
the session's row, ``last_seq = last_seq + n``: the row lock it takes makes concurrent
appenders to the same session (from any process or machine) wait their turn until the
first commits, and the primary key on ``(session_id, seq)`` is the backstop. Its events
go in with one ``INSERT ... SELECT FROM unnest(...)`` in the same statement, so a batch
costs one statement between ``BEGIN`` and ``COMMIT``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Concatenate

from weakincentives.store import _records, _rows, _writes
from weakincentives.store._rows import Row

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


async def _all(connection: Connection, query: str, params: tuple[Any, ...] = ()) -> list[Row]:
    cursor = await connection.execute(query, params)
    return await cursor.fetchall()


async def _row(connection: Connection, query: str, params: tuple[Any, ...]) -> Row | None:
    cursor = await connection.execute(query, params)
    return await cursor.fetchone()


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


# -- sessions -------------------------------------------------------------------------


def _own_transaction[**P, T](
    write: Callable[Concatenate[Connection, P], Awaitable[T]],
) -> Callable[Concatenate[Connection, P], Awaitable[T]]:
    """``write`` as a transaction of its own; ``write`` itself joins its caller's."""

    async def in_transaction(connection: Connection, /, *args: P.args, **kwargs: P.kwargs) -> T:
        async with connection.transaction():
            return await write(connection, *args, **kwargs)

    return in_transaction


async def _append_rows(
    connection: Connection,
    session_id: str,
    rows: _writes.EventRows,
    *,
    format_version: int,
    now: datetime,
) -> tuple[int, int]:
    """Append encoded (type name, document) rows inside the caller's transaction."""
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


append = _own_transaction(_append_rows)
"""Append encoded (type name, document) rows in one transaction; return (first, last) seq."""


async def read(
    connection: Connection,
    session_id: str,
    after: int,
    limit: int | None,
    *,
    format_version: int,
) -> tuple[_records.StoredEvent, ...]:
    """A session's events after ``after``, in order."""
    rows = await _all(
        connection,
        "SELECT seq, type_name, format_version, document::text, created_at FROM wink_events"
        " WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT %s",
        (session_id, after, limit),
    )
    return tuple(_rows.event(session_id, row, format_version, _utc) for row in rows)


async def list_sessions(connection: Connection) -> tuple[_records.SessionSummary, ...]:
    """Every session, by id."""
    rows = await _all(
        connection,
        "SELECT session_id, last_seq, created_at, updated_at FROM wink_sessions"
        " ORDER BY session_id",
    )
    return tuple(_rows.session_summary(row, _utc) for row in rows)


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
    connection: Connection, write: _writes.CheckpointWrite, *, format_version: int, now: datetime
) -> _records.Checkpoint:
    """Replace the checkpoint unless the stored one is of a later round or format.

    ``events`` go to the session's log in the same transaction, only if it saves.
    """
    async with connection.transaction():
        saved = await _row(
            connection,
            _SAVE_CHECKPOINT,
            (
                write.evaluation_id,
                write.round,
                write.status,
                write.session_id,
                format_version,
                write.document,
                now,
            ),
        )
        if saved is None:
            stored = await _row(
                connection,
                "SELECT round, format_version FROM wink_checkpoints WHERE evaluation_id = %s",
                (write.evaluation_id,),
            )
            assert stored is not None  # the upsert found it and locked it
            _rows.refuse_checkpoint(write, stored, format_version)
        if write.events:
            assert write.session_id is not None  # checked in front
            await _append_rows(
                connection, write.session_id, write.events, format_version=format_version, now=now
            )
    return _rows.saved_checkpoint(write, format_version, now)


async def load_checkpoint(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> _records.Checkpoint | None:
    """The latest checkpoint of an evaluation."""
    row = await _row(
        connection,
        "SELECT round, status, session_id, format_version, document::text, saved_at"
        " FROM wink_checkpoints WHERE evaluation_id = %s",
        (evaluation_id,),
    )
    if row is None:
        return None
    return _rows.checkpoint(evaluation_id, row, format_version, _utc)


async def list_evaluations(
    connection: Connection, status: _records.EvaluationStatus | None
) -> tuple[_records.EvaluationSummary, ...]:
    """Evaluations with a checkpoint, by id."""
    rows = await _all(
        connection,
        "SELECT evaluation_id, round, status, session_id, saved_at FROM wink_checkpoints"
        " WHERE %s::text IS NULL OR status = %s ORDER BY evaluation_id",
        (status, status),
    )
    return tuple(_rows.evaluation_summary(row, _utc) for row in rows)


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
    connection: Connection, write: _writes.StepWrite, *, format_version: int, now: datetime
) -> _records.Step:
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
            (write.evaluation_id, write.key, format_version, write.document, now),
        )
        if cursor.rowcount and write.events:
            assert write.session_id is not None  # checked in front
            await _append_rows(
                connection, write.session_id, write.events, format_version=format_version, now=now
            )
        row = await _row(
            connection,
            "SELECT step_key, format_version, document::text, recorded_at FROM wink_steps"
            " WHERE evaluation_id = %s AND step_key = %s",
            (write.evaluation_id, write.key),
        )
    assert row is not None  # inserted, or found, inside this transaction
    return _rows.step(write.evaluation_id, row, format_version, _utc)


async def read_steps(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> tuple[_records.Step, ...]:
    """An evaluation's steps in recording order."""
    rows = await _all(
        connection,
        "SELECT step_key, format_version, document::text, recorded_at FROM wink_steps"
        " WHERE evaluation_id = %s ORDER BY id",
        (evaluation_id,),
    )
    return tuple(_rows.step(evaluation_id, row, format_version, _utc) for row in rows)


# -- approvals ------------------------------------------------------------------------


async def request_approval(
    connection: Connection, request: _writes.ApprovalRequest, *, format_version: int, now: datetime
) -> _records.Approval:
    """Insert a pending approval unless the call has one; return the stored one."""
    async with connection.transaction():
        await connection.execute(
            "INSERT INTO wink_approvals (evaluation_id, call_id, tool_name, format_version,"
            " arguments, requested_at) VALUES (%s, %s, %s, %s, %s::json, %s)"
            " ON CONFLICT (evaluation_id, call_id) DO NOTHING",
            (
                request.evaluation_id,
                request.call_id,
                request.tool_name,
                format_version,
                request.arguments,
                now,
            ),
        )
        row = await _approval_row(connection, request.evaluation_id, request.call_id, lock=False)
    assert row is not None  # inserted, or found, inside this transaction
    return _rows.approval(row, format_version, _utc)


async def decide_approval(
    connection: Connection, verdict: _writes.Verdict, *, format_version: int, now: datetime
) -> _records.Approval:
    """Decide a pending approval once (the row is locked while it is decided)."""
    async with connection.transaction():
        stored = await _approval_row(connection, verdict.evaluation_id, verdict.call_id, lock=True)
        row, changed = _rows.decide(verdict, stored, now)
        if changed:
            await connection.execute(
                "UPDATE wink_approvals SET decision = %s, message = %s, decided_at = %s"
                " WHERE evaluation_id = %s AND call_id = %s",
                (verdict.decision, verdict.message, now, verdict.evaluation_id, verdict.call_id),
            )
    return _rows.approval(row, format_version, _utc)


async def read_approvals(
    connection: Connection, evaluation_id: str, *, format_version: int
) -> tuple[_records.Approval, ...]:
    """An evaluation's approvals in request order."""
    rows = await _all(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE evaluation_id = %s ORDER BY id",
        (evaluation_id,),
    )
    return tuple(_rows.approval(row, format_version, _utc) for row in rows)


async def pending_approvals(
    connection: Connection, evaluation_id: str | None, *, format_version: int
) -> tuple[_records.Approval, ...]:
    """Undecided approvals, oldest first."""
    rows = await _all(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE decision IS NULL"
        " AND (%s::text IS NULL OR evaluation_id = %s) ORDER BY requested_at, id",
        (evaluation_id, evaluation_id),
    )
    return tuple(_rows.approval(row, format_version, _utc) for row in rows)


async def _approval_row(
    connection: Connection, evaluation_id: str, call_id: str, *, lock: bool
) -> Row | None:
    return await _row(
        connection,
        f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals"
        f" WHERE evaluation_id = %s AND call_id = %s{' FOR UPDATE' if lock else ''}",
        (evaluation_id, call_id),
    )
