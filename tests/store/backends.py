"""Store fixtures for the whole suite: one throwaway PostgreSQL server per test session,
and a ``backend`` parametrized over SQLite and PostgreSQL so every test that takes it
runs on both (the store's contract tests, and the durable evaluations' kill tests).

Loaded as a plugin by ``tests/conftest.py``, so the server is started once however many
directories use it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import psycopg
import pytest

from tests.conftest import FakeClock
from tests.store.pg_server import PostgresServer, find_binaries, running_server
from weakincentives.store import PostgresStore, SQLiteStore, SyncStore

type BackendName = Literal["sqlite", "postgres"]


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server started once for the whole test session."""
    if find_binaries() is None:
        pytest.skip(
            "PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH or "
            "under /usr/lib/postgresql/*/bin, so the PostgreSQL store tests cannot run"
        )
    with running_server() as server:
        yield server


def fresh_schema(server: PostgresServer) -> str:
    """A new empty schema on ``server``; its conninfo puts a store's tables there."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(server.conninfo(), autocommit=True) as connection:
        connection.execute(f"CREATE SCHEMA {schema}")
    return server.conninfo(search_path=schema)


@dataclass(frozen=True, slots=True)
class Backend:
    """Where one test's store lives, and how to open stores on it."""

    name: BackendName
    location: str
    """The SQLite file, or the PostgreSQL conninfo (with the test's own schema)."""

    def store(self, **options: Any) -> SQLiteStore | PostgresStore:
        """A new (unopened) async store on this backend's database."""
        if self.name == "sqlite":
            return SQLiteStore(self.location, **options)
        return PostgresStore(self.location, **options)

    def sync(self, **options: Any) -> SyncStore:
        """A new store on this backend's database, with blocking methods."""
        return SyncStore(self.store(**options))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    """Each backend in turn, on a fresh database (a new file, or a new schema)."""
    name: BackendName = request.param
    if name == "sqlite":
        return Backend("sqlite", str(tmp_path / "store.db"))
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return Backend("postgres", fresh_schema(server))


@pytest.fixture
def postgres(postgres_server: PostgresServer) -> Backend:
    """PostgreSQL alone, on a fresh schema, for what only PostgreSQL has."""
    return Backend("postgres", fresh_schema(postgres_server))


@pytest.fixture
def store(backend: Backend, clock: FakeClock) -> Iterator[SyncStore]:
    """An open store on ``backend`` stamping rows with the test's clock."""
    with backend.sync(clock=clock) as opened:
        yield opened
