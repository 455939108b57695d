"""The store's operations in SQLite's idiom, run on the store's one worker thread.

Every write is one ``BEGIN IMMEDIATE`` transaction: it takes SQLite's single writer
lock up front (waiting out other processes for the busy timeout), so reading the
session's last sequence number and inserting after it cannot interleave with another
writer, and a crash before ``COMMIT`` leaves nothing behind (WAL recovery drops it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

from weakincentives.store import _records, _rows, _writes
from weakincentives.store._checks import from_text, to_text, utc
from weakincentives.store._rows import Row

__all__ = ["SQLiteOperations"]

_APPEND = """
INSERT INTO wink_sessions (session_id, last_seq, created_at, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (session_id) DO UPDATE
SET last_seq = last_seq + excluded.last_seq, updated_at = excluded.updated_at
RETURNING last_seq
"""
_SAVE_CHECKPOINT = """
INSERT INTO wink_checkpoints
    (evaluation_id, round, status, session_id, format_version, document, saved_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (evaluation_id) DO UPDATE
SET round = excluded.round, status = excluded.status, session_id = excluded.session_id,
    format_version = excluded.format_version, document = excluded.document,
    saved_at = excluded.saved_at
WHERE round <= excluded.round AND format_version <= excluded.format_version
RETURNING round
"""
_APPROVAL_COLUMNS = (
    "evaluation_id, call_id, tool_name, format_version, arguments, requested_at,"
    " decision, message, decided_at"
)


class SQLiteOperations:
    """One connection's worth of store operations; used from a single thread only."""

    __slots__ = ("_clock", "_connection", "_format")

    def __init__(
        self, connection: sqlite3.Connection, *, format_version: int, clock: Callable[[], datetime]
    ) -> None:
        self._connection = connection
        self._format = format_version
        self._clock = clock

    def close(self) -> None:
        """Close the connection."""
        self._connection.close()

    def _now(self) -> str:
        return to_text(utc(self._clock()))

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        connection = self._connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            connection.rollback()  # a no-op when the failure already ended the transaction
            raise

    # -- sessions ---------------------------------------------------------------------

    def append(self, session_id: str, rows: _writes.EventRows) -> tuple[int, int]:
        """Append encoded (type name, document) rows; return (first, last) seq."""
        now = self._now()
        with self._writing() as connection:
            return self._append_rows(connection, session_id, rows, now)

    def _append_rows(
        self, connection: sqlite3.Connection, session_id: str, rows: _writes.EventRows, now: str
    ) -> tuple[int, int]:
        """The append itself, inside the caller's write transaction."""
        count = len(rows)
        (last,) = connection.execute(_APPEND, (session_id, count, now, now)).fetchone()
        first = int(last) - count + 1
        connection.executemany(
            "INSERT INTO wink_events (session_id, seq, type_name, format_version, document,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [
                (session_id, first + index, type_name, self._format, document, now)
                for index, (type_name, document) in enumerate(rows)
            ],
        )
        return first, int(last)

    def read(
        self, session_id: str, after: int, limit: int | None
    ) -> tuple[_records.StoredEvent, ...]:
        """Events of a session after ``after``, in order."""
        rows = self._connection.execute(
            "SELECT seq, type_name, format_version, document, created_at FROM wink_events"
            " WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?",
            (session_id, after, -1 if limit is None else limit),
        ).fetchall()
        return tuple(_rows.event(session_id, row, self._format, from_text) for row in rows)

    def list_sessions(self) -> tuple[_records.SessionSummary, ...]:
        """Every session, by id."""
        rows = self._connection.execute(
            "SELECT session_id, last_seq, created_at, updated_at FROM wink_sessions"
            " ORDER BY session_id"
        ).fetchall()
        return tuple(_rows.session_summary(row, from_text) for row in rows)

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its events."""
        with self._writing() as connection:
            connection.execute("DELETE FROM wink_events WHERE session_id = ?", (session_id,))
            deleted = connection.execute(
                "DELETE FROM wink_sessions WHERE session_id = ?", (session_id,)
            ).rowcount
        return deleted > 0

    # -- checkpoints ------------------------------------------------------------------

    def save_checkpoint(self, write: _writes.CheckpointWrite) -> _records.Checkpoint:
        """Replace the checkpoint unless the stored one is of a later round or format.

        ``events`` go to the session's log in the same transaction, only if it saves.
        """
        now = self._now()
        with self._writing() as connection:
            saved = connection.execute(
                _SAVE_CHECKPOINT,
                (
                    write.evaluation_id,
                    write.round,
                    write.status,
                    write.session_id,
                    self._format,
                    write.document,
                    now,
                ),
            ).fetchone()
            if saved is None:
                stored = connection.execute(
                    "SELECT round, format_version FROM wink_checkpoints WHERE evaluation_id = ?",
                    (write.evaluation_id,),
                ).fetchone()
                _rows.refuse_checkpoint(write, stored, self._format)
            if write.events:
                assert write.session_id is not None  # checked in front
                self._append_rows(connection, write.session_id, write.events, now)
        return _rows.saved_checkpoint(write, self._format, from_text(now))

    def load_checkpoint(self, evaluation_id: str) -> _records.Checkpoint | None:
        """The latest checkpoint of an evaluation."""
        row = self._connection.execute(
            "SELECT round, status, session_id, format_version, document, saved_at"
            " FROM wink_checkpoints WHERE evaluation_id = ?",
            (evaluation_id,),
        ).fetchone()
        if row is None:
            return None
        return _rows.checkpoint(evaluation_id, row, self._format, from_text)

    def list_evaluations(
        self, status: _records.EvaluationStatus | None
    ) -> tuple[_records.EvaluationSummary, ...]:
        """Evaluations with a checkpoint, by id."""
        query = "SELECT evaluation_id, round, status, session_id, saved_at FROM wink_checkpoints"
        if status is None:
            rows = self._connection.execute(f"{query} ORDER BY evaluation_id").fetchall()
        else:
            rows = self._connection.execute(
                f"{query} WHERE status = ? ORDER BY evaluation_id", (status,)
            ).fetchall()
        return tuple(_rows.evaluation_summary(row, from_text) for row in rows)

    def delete_evaluation(self, evaluation_id: str) -> bool:
        """Delete an evaluation's checkpoint, steps and approvals."""
        deleted = 0
        with self._writing() as connection:
            for table in ("wink_checkpoints", "wink_steps", "wink_approvals"):
                deleted += connection.execute(
                    f"DELETE FROM {table} WHERE evaluation_id = ?", (evaluation_id,)
                ).rowcount
        return deleted > 0

    # -- steps ------------------------------------------------------------------------

    def record_step(self, write: _writes.StepWrite) -> _records.Step:
        """Insert a step unless it exists, and then its events; return the stored step."""
        now = self._now()
        with self._writing() as connection:
            inserted = connection.execute(
                "INSERT INTO wink_steps (evaluation_id, step_key, format_version, document,"
                " recorded_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (write.evaluation_id, write.key, self._format, write.document, now),
            ).rowcount
            if inserted and write.events:
                assert write.session_id is not None  # checked in front
                self._append_rows(connection, write.session_id, write.events, now)
            row = connection.execute(
                "SELECT step_key, format_version, document, recorded_at FROM wink_steps"
                " WHERE evaluation_id = ? AND step_key = ?",
                (write.evaluation_id, write.key),
            ).fetchone()
        return _rows.step(write.evaluation_id, row, self._format, from_text)

    def read_steps(self, evaluation_id: str) -> tuple[_records.Step, ...]:
        """An evaluation's steps in recording order."""
        rows = self._connection.execute(
            "SELECT step_key, format_version, document, recorded_at FROM wink_steps"
            " WHERE evaluation_id = ? ORDER BY rowid",
            (evaluation_id,),
        ).fetchall()
        return tuple(_rows.step(evaluation_id, row, self._format, from_text) for row in rows)

    # -- approvals --------------------------------------------------------------------

    def request_approval(self, request: _writes.ApprovalRequest) -> _records.Approval:
        """Insert a pending approval unless the call has one; return the stored one."""
        now = self._now()
        with self._writing() as connection:
            connection.execute(
                "INSERT INTO wink_approvals (evaluation_id, call_id, tool_name, format_version,"
                " arguments, requested_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    request.evaluation_id,
                    request.call_id,
                    request.tool_name,
                    self._format,
                    request.arguments,
                    now,
                ),
            )
            row = self._approval_row(request.evaluation_id, request.call_id)
        assert row is not None  # inserted, or already there, inside this transaction
        return self._approval(row)

    def decide_approval(self, verdict: _writes.Verdict) -> _records.Approval:
        """Decide a pending approval once."""
        now = self._now()
        with self._writing() as connection:
            row, changed = _rows.decide(
                verdict, self._approval_row(verdict.evaluation_id, verdict.call_id), now
            )
            if changed:
                connection.execute(
                    "UPDATE wink_approvals SET decision = ?, message = ?, decided_at = ?"
                    " WHERE evaluation_id = ? AND call_id = ?",
                    (
                        verdict.decision,
                        verdict.message,
                        now,
                        verdict.evaluation_id,
                        verdict.call_id,
                    ),
                )
        return self._approval(row)

    def read_approvals(self, evaluation_id: str) -> tuple[_records.Approval, ...]:
        """An evaluation's approvals in request order."""
        rows = self._connection.execute(
            f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE evaluation_id = ?"
            " ORDER BY rowid",
            (evaluation_id,),
        ).fetchall()
        return tuple(self._approval(row) for row in rows)

    def pending_approvals(self, evaluation_id: str | None) -> tuple[_records.Approval, ...]:
        """Undecided approvals, oldest first."""
        query = f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals WHERE decision IS NULL"
        order = " ORDER BY requested_at, rowid"
        if evaluation_id is None:
            rows = self._connection.execute(query + order).fetchall()
        else:
            rows = self._connection.execute(
                f"{query} AND evaluation_id = ?{order}", (evaluation_id,)
            ).fetchall()
        return tuple(self._approval(row) for row in rows)

    def _approval_row(self, evaluation_id: str, call_id: str) -> Row | None:
        row: Row | None = self._connection.execute(
            f"SELECT {_APPROVAL_COLUMNS} FROM wink_approvals"
            " WHERE evaluation_id = ? AND call_id = ?",
            (evaluation_id, call_id),
        ).fetchone()
        return row

    def _approval(self, row: Row) -> _records.Approval:
        return _rows.approval(row, self._format, from_text)
