"""``SQLiteStore``: the embedded default, one file that several processes can share.

The connection lives on one worker thread per store, so the event loop never waits on
the disk or on another process's writer lock. The file runs in WAL mode (readers never
block the writer), ``synchronous=FULL`` (a committed transaction survives power loss),
and waits up to ``busy_timeout`` seconds for another process's writer lock.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

from weakincentives.errors import StoreDatabaseError, StoreUsageError
from weakincentives.store import _records, _writes
from weakincentives.store._checks import utc, writer_format
from weakincentives.store._front import CheckedStore
from weakincentives.store._records import FORMAT_VERSION
from weakincentives.store._sqlite_ops import SQLiteOperations
from weakincentives.store._sqlite_schema import migrate

__all__ = ["SQLiteStore"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SQLiteStore(CheckedStore):
    """A :class:`Store` in one SQLite file (stdlib ``sqlite3``), safe across processes.

    Nothing touches the file until the first call (or :meth:`open`), which creates it
    if needed and migrates its schema. Use it as ``async with SQLiteStore(path) as
    store:``, or call :meth:`close` when done. ``clock`` stamps rows (an aware datetime;
    tests inject one); ``format_version`` is the newest document format this process
    writes and reads (keep the default unless pinning an older one).
    """

    __slots__ = (
        "_busy_timeout",
        "_clock",
        "_closed",
        "_executor",
        "_format",
        "_guard",
        "_ops",
    )

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 30.0,
        clock: Callable[[], datetime] = _utc_now,
        format_version: int = FORMAT_VERSION,
    ) -> None:
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)):
            raise StoreUsageError(f"busy_timeout must be a number of seconds, got {busy_timeout!r}")
        if not busy_timeout >= 0:
            raise StoreUsageError(f"busy_timeout must be >= 0 seconds, got {busy_timeout!r}")
        super().__init__(os.fspath(path))
        self._busy_timeout = float(busy_timeout)
        self._clock = clock
        self._format = writer_format(format_version)
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wink-sqlite")
        self._ops: SQLiteOperations | None = None  # only ever touched on the worker thread
        self._closed = False
        self._guard = threading.Lock()

    @property
    def path(self) -> str:
        """The database file."""
        return self._location

    async def open(self) -> None:
        """Open the file (creating it), switch it to WAL and migrate its schema; idempotent."""
        await self._run("open", lambda ops: None)

    async def close(self) -> None:
        """Close the connection after the calls already started; idempotent."""
        with self._guard:
            if self._closed:
                return
            self._closed = True
            done = self._executor.submit(self._close_on_worker)
        self._executor.shutdown(wait=False)
        await asyncio.wrap_future(done)

    def _close_on_worker(self) -> None:
        if self._ops is not None:
            self._ops.close()
            self._ops = None

    async def _run[T](self, operation: str, work: Callable[[SQLiteOperations], T]) -> T:
        # The guard keeps a close from another thread (a SyncStore shared by threads)
        # between the check and the submit, where the executor would refuse the work.
        with self._guard:
            if self._closed:
                raise self._closed_error(operation)
            future = self._executor.submit(self._on_worker, operation, work)
        return await asyncio.wrap_future(future)

    def _on_worker[T](self, operation: str, work: Callable[[SQLiteOperations], T]) -> T:
        try:
            if self._ops is None:
                self._ops = self._connect()
            return work(self._ops)
        except sqlite3.Error as exc:
            raise StoreDatabaseError(
                operation=operation, location=self._location, reason=str(exc)
            ) from exc

    def _connect(self) -> SQLiteOperations:
        connection = sqlite3.connect(
            self._location, timeout=self._busy_timeout, isolation_level=None, check_same_thread=True
        )
        try:
            self._switch_to_wal(connection)
            connection.execute("PRAGMA synchronous=FULL")
            migrate(connection, location=self._location, now=utc(self._clock()))
        except BaseException:
            connection.close()
            raise
        return SQLiteOperations(connection, format_version=self._format, clock=self._clock)

    def _switch_to_wal(self, connection: sqlite3.Connection) -> None:
        """Put the file in WAL mode, waiting out another process doing the same.

        Changing the journal mode needs the file to itself; when another connection is
        about to take it, SQLite answers "database is locked" at once instead of calling
        its busy handler (that wait could deadlock), so the switch is retried here, up to
        the busy timeout. Once in WAL mode the switch is a read that never waits.
        """
        give_up = time.monotonic() + self._busy_timeout
        pause = 0.001
        while True:
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > give_up:
                    raise
            time.sleep(pause)  # back off: another process holds the lock for a moment
            pause = min(pause * 2, 0.05)

    # -- the primitives, each one call on the worker thread ---------------------------

    async def _append(self, session_id: str, rows: _writes.EventRows) -> tuple[int, int]:
        return await self._run("append", lambda ops: ops.append(session_id, rows))

    async def _read(
        self, session_id: str, after: int, limit: int | None
    ) -> tuple[_records.StoredEvent, ...]:
        return await self._run("read", lambda ops: ops.read(session_id, after, limit))

    async def _list_sessions(self) -> tuple[_records.SessionSummary, ...]:
        return await self._run("list_sessions", lambda ops: ops.list_sessions())

    async def _delete_session(self, session_id: str) -> bool:
        return await self._run("delete_session", lambda ops: ops.delete_session(session_id))

    async def _save_checkpoint(self, write: _writes.CheckpointWrite) -> _records.Checkpoint:
        return await self._run("save_checkpoint", lambda ops: ops.save_checkpoint(write))

    async def _load_checkpoint(self, evaluation_id: str) -> _records.Checkpoint | None:
        return await self._run("load_checkpoint", lambda ops: ops.load_checkpoint(evaluation_id))

    async def _list_evaluations(
        self, status: _records.EvaluationStatus | None
    ) -> tuple[_records.EvaluationSummary, ...]:
        return await self._run("list_evaluations", lambda ops: ops.list_evaluations(status))

    async def _delete_evaluation(self, evaluation_id: str) -> bool:
        return await self._run(
            "delete_evaluation", lambda ops: ops.delete_evaluation(evaluation_id)
        )

    async def _record_step(self, write: _writes.StepWrite) -> _records.Step:
        return await self._run("record_step", lambda ops: ops.record_step(write))

    async def _read_steps(self, evaluation_id: str) -> tuple[_records.Step, ...]:
        return await self._run("read_steps", lambda ops: ops.read_steps(evaluation_id))

    async def _request_approval(self, request: _writes.ApprovalRequest) -> _records.Approval:
        return await self._run("request_approval", lambda ops: ops.request_approval(request))

    async def _decide_approval(self, verdict: _writes.Verdict) -> _records.Approval:
        return await self._run("decide_approval", lambda ops: ops.decide_approval(verdict))

    async def _read_approvals(self, evaluation_id: str) -> tuple[_records.Approval, ...]:
        return await self._run("read_approvals", lambda ops: ops.read_approvals(evaluation_id))

    async def _pending_approvals(self, evaluation_id: str | None) -> tuple[_records.Approval, ...]:
        return await self._run(
            "pending_approvals", lambda ops: ops.pending_approvals(evaluation_id)
        )
