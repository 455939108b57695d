"""Opening, closing and failing: what each backend says when the database is not there."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.store.conftest import Backend
from weakincentives.errors import StoreDatabaseError, StoreUsageError
from weakincentives.store import NewEvent, PostgresStore, SQLiteStore, Store, SyncStore

EVENT = [NewEvent(type_name="tests:E", document=1)]


def test_a_closed_store_refuses_calls_and_closing_twice_is_fine(backend: Backend) -> None:
    """After close, every call is a StoreUsageError naming the store."""

    async def scenario() -> None:
        store = backend.store()
        await store.append("s", EVENT)
        await store.close()
        await store.close()
        with pytest.raises(StoreUsageError, match=r"append: the store .* is closed"):
            await store.append("s", EVENT)
        with pytest.raises(StoreUsageError, match=r"open: the store .* is closed"):
            await store.open()

    asyncio.run(scenario())


def test_tasks_opening_a_store_at_once_share_one_connection(backend: Backend) -> None:
    """Concurrent first calls open the database once; every task then sees one store."""

    async def scenario() -> list[tuple[int, int]]:
        store = backend.store()  # not opened: the first calls race to open it
        try:
            return list(await asyncio.gather(*(store.append("s", EVENT) for _ in range(3))))
        finally:
            await store.close()

    assert sorted(asyncio.run(scenario())) == [(1, 1), (2, 2), (3, 3)]


def test_a_store_never_opened_closes_quietly(backend: Backend) -> None:
    """Closing a store that never connected touches no database and refuses later calls."""

    async def scenario() -> None:
        store = backend.store()
        await store.close()
        with pytest.raises(StoreUsageError, match=r"read: the store .* is closed"):
            await store.read("s")

    asyncio.run(scenario())
    if backend.name == "sqlite":
        assert not Path(backend.location).exists()


def test_a_store_opens_on_first_use_and_open_is_idempotent(backend: Backend) -> None:
    """No explicit open is needed; opening again changes nothing."""

    async def scenario() -> tuple[int, int]:
        store = backend.store()
        try:
            first = await store.append("s", EVENT)
            await store.open()
            await store.open()
            return first
        finally:
            await store.close()

    assert asyncio.run(scenario()) == (1, 1)


def test_a_clock_without_a_time_zone_is_refused(backend: Backend) -> None:
    """Stored times are UTC; a naive reading would be a guess, so it is an error."""
    with (
        pytest.raises(StoreUsageError, match="the store's clock must return aware datetimes"),
        backend.sync(clock=lambda: datetime(2026, 1, 1)),
    ):
        pass


def test_the_sync_face_wraps_the_async_store(backend: Backend) -> None:
    """SyncStore exposes the store it drives."""
    inner = backend.store()
    with SyncStore(inner) as store:
        assert store.store is inner
        assert repr(store) == f"SyncStore({inner!r})"


def test_the_sync_face_has_every_store_method_with_its_documentation() -> None:
    """Each blocking method is the protocol's method of the same name, documented as it."""
    names = [
        name for name, value in vars(Store).items() if callable(value) and not name.startswith("_")
    ]
    assert len(names) == 16
    for name in names:
        assert getattr(SyncStore, name).__doc__ == getattr(Store, name).__doc__, name
    assert repr(SyncStore.read) == "<blocking Store.read>"


def test_a_sqlite_file_that_cannot_be_opened_is_a_database_error(tmp_path: Path) -> None:
    """The error names the operation and the file, and keeps sqlite3's as its cause."""
    path = tmp_path / "missing-dir" / "store.db"
    with (
        pytest.raises(
            StoreDatabaseError, match=f"open failed on {path}: unable to open database file"
        ) as raised,
        SyncStore(SQLiteStore(path)),
    ):
        pass
    assert (raised.value.operation, raised.value.location) == ("open", str(path))
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)


def test_a_sqlite_writer_lock_held_past_the_busy_timeout_is_a_database_error(
    tmp_path: Path,
) -> None:
    """Another process's write transaction makes an append wait, then fail, never hang."""
    path = tmp_path / "store.db"
    with SyncStore(SQLiteStore(path, busy_timeout=0)) as store:
        store.append("s", EVENT)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(
                StoreDatabaseError, match=r"append failed on .*: database is locked"
            ):
                store.append("s", EVENT)
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.append("s", EVENT) == (2, 2)


@pytest.mark.parametrize("busy_timeout", [-1, "5", True, float("nan")])
def test_a_sqlite_busy_timeout_must_be_seconds(tmp_path: Path, busy_timeout: object) -> None:
    """The busy timeout is a number of seconds >= 0."""
    with pytest.raises(StoreUsageError, match="busy_timeout must be"):
        SQLiteStore(tmp_path / "s.db", busy_timeout=busy_timeout)  # type: ignore[arg-type]


def test_a_sqlite_store_shows_its_file(tmp_path: Path) -> None:
    """The path and repr name the file."""
    store = SQLiteStore(tmp_path / "s.db")
    assert store.path == str(tmp_path / "s.db")
    assert repr(store) == f"SQLiteStore({str(tmp_path / 's.db')!r})"


def test_a_broken_sqlite_schema_is_a_database_error(tmp_path: Path) -> None:
    """A query that fails inside the database surfaces as StoreDatabaseError."""
    path = tmp_path / "store.db"
    with SyncStore(SQLiteStore(path)) as store:
        store.append("s", EVENT)
        raw = sqlite3.connect(path)
        raw.execute("DROP TABLE wink_events")
        raw.commit()
        raw.close()
        with pytest.raises(StoreDatabaseError, match=r"read failed on .*: no such table"):
            store.read("s")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_postgres_server_is_a_database_error() -> None:
    """Nothing listening: open fails within the pool timeout, naming the server."""
    port = _closed_port()
    store = PostgresStore(f"host=127.0.0.1 port={port} dbname=x user=u", timeout=0.5)
    with (
        pytest.raises(StoreDatabaseError, match=f"open failed on postgresql://127.0.0.1:{port}/x"),
        SyncStore(store),
    ):
        pass


def test_a_broken_postgres_schema_is_a_database_error(postgres: Backend) -> None:
    """A failing statement surfaces as StoreDatabaseError with psycopg's error as cause."""
    with postgres.sync() as store:
        store.append("s", EVENT)
        with psycopg.connect(postgres.location, autocommit=True) as raw:
            raw.execute("DROP TABLE wink_events")
        with pytest.raises(StoreDatabaseError, match=r"append failed on .*wink_events") as raised:
            store.append("s", EVENT)
        assert isinstance(raised.value.__cause__, psycopg.errors.UndefinedTable)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"min_size": -1}, "min_size must be an int >= 0"),
        ({"min_size": 3, "max_size": 2}, "max_size must be an int >= max\\(1, min_size\\)"),
        ({"max_size": 0}, "max_size must be an int"),
        ({"timeout": 0}, "timeout must be a number of seconds > 0"),
    ],
)
def test_postgres_pool_settings_are_checked(options: dict[str, Any], message: str) -> None:
    """Pool sizes and the timeout are checked when the store is made."""
    with pytest.raises(StoreUsageError, match=message):
        PostgresStore("dbname=x", **options)


def test_a_postgres_conninfo_that_does_not_parse_is_refused() -> None:
    """A malformed connection string fails at construction, not at first use."""
    with pytest.raises(
        StoreUsageError,
        match='conninfo is not a libpq connection string: missing "=" after "host"',
    ):
        PostgresStore("host")


def test_a_postgres_store_names_its_server_without_credentials() -> None:
    """Messages and reprs show host, port and database, never the password."""
    store = PostgresStore("postgresql://me:secret@db.internal:6543/evals")
    assert store.location == "postgresql://db.internal:6543/evals"
    assert repr(store) == "PostgresStore('postgresql://db.internal:6543/evals')"
    assert PostgresStore("dbname=evals").location == "postgresql://localhost:5432/evals"


def test_postgres_store_without_the_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without psycopg, constructing the store names the extra to install."""
    monkeypatch.setitem(sys.modules, "psycopg_pool", None)
    with pytest.raises(ImportError, match=r"pip install 'weakincentives\[postgres\]'"):
        PostgresStore("dbname=x")


def test_configure_runs_on_each_new_postgres_connection(postgres: Backend) -> None:
    """The configure hook sees every connection the pool opens."""
    seen: list[str] = []

    async def configure(connection: psycopg.AsyncConnection[Any]) -> None:
        await connection.execute("SET application_name = 'wink-test'")
        seen.append(connection.info.parameter_status("application_name") or "")

    with postgres.sync(configure=configure, min_size=2, max_size=2) as store:
        store.append("s", EVENT)
    assert seen == ["wink-test", "wink-test"]
