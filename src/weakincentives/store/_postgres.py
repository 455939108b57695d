"""``PostgresStore``: the store for many processes and machines (the ``postgres`` extra).

psycopg 3 through a ``psycopg_pool.AsyncConnectionPool``: calls borrow a connection for
one transaction and give it back, so concurrent tasks share a few connections, and the
database orders what concurrent processes write (see ``_postgres_ops``).
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from weakincentives.errors import StoreDatabaseError, StoreUsageError
from weakincentives.store import _postgres_ops as ops
from weakincentives.store import _records, _writes
from weakincentives.store._checks import utc, writer_format
from weakincentives.store._front import CheckedStore
from weakincentives.store._postgres_schema import migrate
from weakincentives.store._records import FORMAT_VERSION

if TYPE_CHECKING:
    import psycopg
    import psycopg_pool

__all__ = ["PostgresStore"]

type Connection = psycopg.AsyncConnection[Any]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _drivers() -> tuple[Any, Any]:
    try:
        return importlib.import_module("psycopg"), importlib.import_module("psycopg_pool")
    except ImportError as exc:
        raise ImportError(
            "PostgresStore needs psycopg 3 and psycopg-pool: pip install 'weakincentives[postgres]'"
        ) from exc


class PostgresStore(CheckedStore):
    """A :class:`Store` in a PostgreSQL database, shared by any number of processes.

    ``conninfo`` is a libpq connection string or URL; the tables go in the first schema
    of its ``search_path``. The pool opens on the first call (or :meth:`open`), which
    also creates or migrates the schema, and belongs to the event loop that opened it:
    from synchronous code, use :class:`SyncStore`. ``configure`` runs on every new
    connection (set a role, a ``statement_timeout``, a notice handler). ``timeout``
    bounds the wait for a pooled connection, in seconds. ``clock`` and
    ``format_version`` are as for :class:`SQLiteStore`.
    """

    __slots__ = (
        "_clock",
        "_closed",
        "_configure",
        "_conninfo",
        "_format",
        "_opening",
        "_pool",
        "_pool_module",
        "_psycopg",
        "_sizes",
        "_timeout",
    )

    def __init__(
        self,
        conninfo: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        timeout: float = 30.0,
        configure: Callable[[Connection], Awaitable[None]] | None = None,
        clock: Callable[[], datetime] = _utc_now,
        format_version: int = FORMAT_VERSION,
    ) -> None:
        self._psycopg, self._pool_module = _drivers()
        if isinstance(min_size, bool) or not isinstance(min_size, int) or min_size < 0:
            raise StoreUsageError(f"min_size must be an int >= 0, got {min_size!r}")
        if (
            isinstance(max_size, bool)
            or not isinstance(max_size, int)
            or max_size < max(1, min_size)
        ):
            raise StoreUsageError(f"max_size must be an int >= max(1, min_size), got {max_size!r}")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise StoreUsageError(f"timeout must be a number of seconds > 0, got {timeout!r}")
        self._conninfo = conninfo
        super().__init__(self._describe(conninfo))
        self._sizes = (min_size, max_size)
        self._timeout = float(timeout)
        self._configure = configure
        self._clock = clock
        self._format = writer_format(format_version)
        self._pool: psycopg_pool.AsyncConnectionPool[Connection] | None = None
        self._opening = asyncio.Lock()
        self._closed = False

    def _describe(self, conninfo: str) -> str:
        """``postgresql://host:port/dbname``, for messages (never the password)."""
        try:
            parts = self._psycopg.conninfo.conninfo_to_dict(conninfo)
        except self._psycopg.ProgrammingError as exc:
            raise StoreUsageError(f"conninfo is not a libpq connection string: {exc}") from None
        host = parts.get("host") or "localhost"
        port = parts.get("port") or "5432"
        return f"postgresql://{host}:{port}/{parts.get('dbname') or parts.get('user') or ''}"

    @property
    def location(self) -> str:
        """The server and database, as ``postgresql://host:port/dbname`` (no credentials)."""
        return self._location

    async def open(self) -> None:
        """Open the pool and create or migrate the schema; idempotent."""
        await self._ready("open")

    async def close(self) -> None:
        """Close the pool after the calls already started; idempotent."""
        self._closed = True
        async with self._opening:
            pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _ready(self, operation: str) -> psycopg_pool.AsyncConnectionPool[Connection]:
        pool = self._pool
        if pool is not None and not self._closed:
            return pool
        async with self._opening:
            # Checked under the lock: a close that ran while this task waited wins.
            if self._closed:
                raise self._closed_error(operation)
            if self._pool is None:
                self._pool = await self._open_pool(operation)
            return self._pool

    async def _open_pool(self, operation: str) -> psycopg_pool.AsyncConnectionPool[Connection]:
        min_size, max_size = self._sizes
        pool: psycopg_pool.AsyncConnectionPool[Connection] = self._pool_module.AsyncConnectionPool(
            self._conninfo,
            min_size=min_size,
            max_size=max_size,
            timeout=self._timeout,
            kwargs={"autocommit": True},
            configure=self._configure,
            name="weakincentives-store",
            open=False,
        )
        try:
            await pool.open(wait=min_size > 0, timeout=self._timeout)
            async with pool.connection() as connection:
                await migrate(connection, location=self._location, now=utc(self._clock()))
        except BaseException as exc:
            await pool.close()
            if isinstance(exc, self._psycopg.Error):
                raise self._failure(operation, exc) from exc
            raise
        return pool

    def _failure(self, operation: str, exc: BaseException) -> StoreDatabaseError:
        reason = str(exc).strip() or type(exc).__name__
        return StoreDatabaseError(operation=operation, location=self._location, reason=reason)

    async def _run[T](self, operation: str, work: Callable[[Connection], Awaitable[T]]) -> T:
        pool = await self._ready(operation)
        try:
            async with pool.connection() as connection:
                return await work(connection)
        except self._psycopg.Error as exc:
            raise self._failure(operation, exc) from exc

    def _now(self) -> datetime:
        return utc(self._clock())

    # -- the primitives, each one pooled connection -----------------------------------

    async def _append(self, session_id: str, rows: _writes.EventRows) -> tuple[int, int]:
        now = self._now()
        return await self._run(
            "append",
            lambda c: ops.append(c, session_id, rows, format_version=self._format, now=now),
        )

    async def _read(
        self, session_id: str, after: int, limit: int | None
    ) -> tuple[_records.StoredEvent, ...]:
        return await self._run(
            "read", lambda c: ops.read(c, session_id, after, limit, format_version=self._format)
        )

    async def _list_sessions(self) -> tuple[_records.SessionSummary, ...]:
        return await self._run("list_sessions", ops.list_sessions)

    async def _delete_session(self, session_id: str) -> bool:
        return await self._run("delete_session", lambda c: ops.delete_session(c, session_id))

    async def _save_checkpoint(self, write: _writes.CheckpointWrite) -> _records.Checkpoint:
        now = self._now()
        return await self._run(
            "save_checkpoint",
            lambda c: ops.save_checkpoint(c, write, format_version=self._format, now=now),
        )

    async def _load_checkpoint(self, evaluation_id: str) -> _records.Checkpoint | None:
        return await self._run(
            "load_checkpoint",
            lambda c: ops.load_checkpoint(c, evaluation_id, format_version=self._format),
        )

    async def _list_evaluations(
        self, status: _records.EvaluationStatus | None
    ) -> tuple[_records.EvaluationSummary, ...]:
        return await self._run("list_evaluations", lambda c: ops.list_evaluations(c, status))

    async def _delete_evaluation(self, evaluation_id: str) -> bool:
        return await self._run(
            "delete_evaluation", lambda c: ops.delete_evaluation(c, evaluation_id)
        )

    async def _record_step(self, write: _writes.StepWrite) -> _records.Step:
        now = self._now()
        return await self._run(
            "record_step", lambda c: ops.record_step(c, write, format_version=self._format, now=now)
        )

    async def _read_steps(self, evaluation_id: str) -> tuple[_records.Step, ...]:
        return await self._run(
            "read_steps", lambda c: ops.read_steps(c, evaluation_id, format_version=self._format)
        )

    async def _request_approval(self, request: _writes.ApprovalRequest) -> _records.Approval:
        now = self._now()
        return await self._run(
            "request_approval",
            lambda c: ops.request_approval(c, request, format_version=self._format, now=now),
        )

    async def _decide_approval(self, verdict: _writes.Verdict) -> _records.Approval:
        now = self._now()
        return await self._run(
            "decide_approval",
            lambda c: ops.decide_approval(c, verdict, format_version=self._format, now=now),
        )

    async def _read_approvals(self, evaluation_id: str) -> tuple[_records.Approval, ...]:
        return await self._run(
            "read_approvals",
            lambda c: ops.read_approvals(c, evaluation_id, format_version=self._format),
        )

    async def _pending_approvals(self, evaluation_id: str | None) -> tuple[_records.Approval, ...]:
        return await self._run(
            "pending_approvals",
            lambda c: ops.pending_approvals(c, evaluation_id, format_version=self._format),
        )
