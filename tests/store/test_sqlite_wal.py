"""Switching a SQLite file to WAL while another connection holds it: retried, then refused."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from weakincentives.errors import StoreDatabaseError
from weakincentives.store import SQLiteStore


def test_a_file_another_connection_holds_is_refused_after_the_busy_timeout(
    tmp_path: Path,
) -> None:
    """SQLite refuses the switch at once; the store retries it until its busy timeout ends."""
    path = tmp_path / "held.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    try:

        async def scenario() -> None:
            async with SQLiteStore(path, busy_timeout=0.05) as store:
                await store.list_sessions()

        with pytest.raises(StoreDatabaseError, match="database is locked") as caught:
            asyncio.run(scenario())
        assert caught.value.operation == "open"
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_file_that_is_not_a_database_is_refused_at_once(tmp_path: Path) -> None:
    """Only a lock is waited out: any other failure of the switch is reported as it is."""
    path = tmp_path / "garbage.db"
    path.write_bytes(b"this is not a database file at all" * 200)

    async def scenario() -> None:
        async with SQLiteStore(path, busy_timeout=30) as store:
            await store.list_sessions()

    with pytest.raises(StoreDatabaseError, match="file is not a database"):
        asyncio.run(scenario())


class _Contended:
    """A connection whose journal-mode switch finds the file locked a few times."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.attempts = 0

    def execute(self, statement: str) -> None:
        assert statement == "PRAGMA journal_mode=WAL"
        self.attempts += 1
        if self.attempts <= self.refusals:
            raise sqlite3.OperationalError("database is locked")


def test_a_switch_that_finds_the_file_locked_is_retried_until_it_succeeds(
    tmp_path: Path,
) -> None:
    """Another process switching the same fresh file at once only delays this one."""
    store = SQLiteStore(tmp_path / "unused.db", busy_timeout=30)
    contended = _Contended(refusals=3)
    store._switch_to_wal(contended)  # type: ignore[arg-type]
    assert contended.attempts == 4
    asyncio.run(store.close())
