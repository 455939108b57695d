"""Schema creation and migration on both backends: fresh, current, concurrent, too new."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime
from typing import Any, LiteralString

import psycopg
import pytest

from tests.conftest import FakeClock
from tests.store.conftest import Backend
from tests.store.test_processes import expect_line, finish, release, spawn
from weakincentives.errors import SchemaVersionError
from weakincentives.store import NewEvent
from weakincentives.store import _postgres_schema as postgres_schema
from weakincentives.store import _sqlite_schema as sqlite_schema

TABLES = [
    "wink_approvals",
    "wink_checkpoints",
    "wink_events",
    "wink_schema_migrations",
    "wink_sessions",
    "wink_steps",
]
NOW = datetime(2026, 5, 1, tzinfo=UTC)


def query(backend: Backend, sql: LiteralString) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` read straight from the backend's database (not through a store)."""
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as raw:
            rows = raw.execute(sql).fetchall()
        raw.close()
        return rows
    with psycopg.connect(backend.location, autocommit=True) as connection:
        return connection.execute(sql).fetchall()


def tables(backend: Backend) -> list[str]:
    if backend.name == "sqlite":
        rows = query(backend, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    else:
        rows = query(
            backend,
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"
            " ORDER BY tablename",
        )
    return [name for (name,) in rows]


def versions(backend: Backend) -> list[tuple[int, datetime]]:
    rows = query(backend, "SELECT version, applied_at FROM wink_schema_migrations ORDER BY 1")
    if backend.name == "sqlite":
        return [(version, datetime.fromisoformat(applied)) for version, applied in rows]
    return [(version, applied.astimezone(UTC)) for version, applied in rows]


def test_a_fresh_database_gets_the_whole_schema(backend: Backend, clock: FakeClock) -> None:
    """Opening creates every table and records each migration with its time."""
    applied_at = clock.now
    with backend.sync(clock=clock):
        pass
    assert tables(backend) == TABLES
    assert versions(backend) == [(1, applied_at)]


def test_opening_a_migrated_database_changes_nothing(backend: Backend, clock: FakeClock) -> None:
    """A second open applies no migration and keeps the data."""
    with backend.sync(clock=clock) as store:
        store.append("s", [NewEvent(type_name="tests:E", document="kept")])
    recorded = versions(backend)
    with backend.sync(clock=clock) as store:
        assert [event.document for event in store.read("s")] == ["kept"]
    assert versions(backend) == recorded


def test_a_database_from_a_newer_library_is_refused(backend: Backend) -> None:
    """A schema version past the library's is a SchemaVersionError, and nothing is written."""
    with backend.sync():
        pass
    if backend.name == "sqlite":
        with sqlite3.connect(backend.location) as raw:
            raw.execute("INSERT INTO wink_schema_migrations VALUES (2, '2030-01-01')")
        raw.close()
    else:
        with psycopg.connect(backend.location, autocommit=True) as connection:
            connection.execute("INSERT INTO wink_schema_migrations VALUES (2, now())")
    with (
        pytest.raises(
            SchemaVersionError,
            match=r"has schema version 2, but this version of weakincentives knows versions up "
            r"to 1: upgrade weakincentives",
        ) as raised,
        backend.sync(),
    ):
        pass
    assert (raised.value.found, raised.value.supported) == (2, 1)
    assert raised.value.location.endswith("store.db" if backend.name == "sqlite" else "/postgres")
    assert [version for version, _ in versions(backend)] == [1, 2]


def test_two_processes_opening_a_fresh_database_at_once_both_succeed(backend: Backend) -> None:
    """Migration takes turns across processes: each migration is applied exactly once."""
    workers = [spawn("migrate", backend.name, backend.location) for _ in range(2)]
    for worker in workers:
        expect_line(worker, "ready")
    release(workers)
    for worker in workers:
        code, out, error = finish(worker)
        assert (code, out) == (0, "open\n"), error
    assert tables(backend) == TABLES
    assert [version for version, _ in versions(backend)] == [1]


# The runners with a list of migrations of the test's own: the upgrade path and a failure.

EXTRA: tuple[LiteralString, ...] = ("CREATE TABLE wink_extra (x integer)",)
BROKEN: tuple[LiteralString, ...] = (
    "CREATE TABLE wink_half_done (x integer)",
    "CREATE TABLE wink_events (duplicate integer)",
)


def run_migrations(backend: Backend, migrations: tuple[tuple[LiteralString, ...], ...]) -> int:
    """Run the backend's migration runner with ``migrations``; the version it found."""
    if backend.name == "sqlite":
        raw = sqlite3.connect(backend.location, isolation_level=None)
        try:
            return sqlite_schema.migrate(
                raw, location=backend.location, now=NOW, migrations=migrations
            )
        finally:
            raw.close()

    async def run() -> int:
        async with await psycopg.AsyncConnection.connect(backend.location, autocommit=True) as raw:
            return await postgres_schema.migrate(
                raw, location=backend.location, now=NOW, migrations=migrations
            )

    return asyncio.run(run())


def test_a_database_at_an_older_version_is_upgraded(backend: Backend) -> None:
    """Only the migrations past the stored version run, in order."""
    assert run_migrations(backend, (sqlite_or_postgres(backend),)) == 0
    assert run_migrations(backend, (sqlite_or_postgres(backend), EXTRA)) == 1
    assert "wink_extra" in tables(backend)
    assert [version for version, _ in versions(backend)] == [1, 2]


def test_a_failing_migration_leaves_the_previous_version(backend: Backend) -> None:
    """A migration that fails half-way is rolled back whole: no table, no version."""
    base = sqlite_or_postgres(backend)
    run_migrations(backend, (base,))
    with pytest.raises((sqlite3.Error, psycopg.Error), match="wink_events"):
        run_migrations(backend, (base, BROKEN))
    assert "wink_half_done" not in tables(backend)
    assert [version for version, _ in versions(backend)] == [1]


def sqlite_or_postgres(backend: Backend) -> tuple[LiteralString, ...]:
    return (
        sqlite_schema.MIGRATIONS[0] if backend.name == "sqlite" else postgres_schema.MIGRATIONS[0]
    )
