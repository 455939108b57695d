"""The SQLite schema, as an ordered list of migrations, and the code that applies them.

Migration ``n`` (1-based) takes a database from schema version ``n - 1`` to ``n``. They
run at open, inside one ``BEGIN IMMEDIATE`` transaction: SQLite DDL is transactional, so
a crash leaves the previous version, and the writer lock makes a second process that
opens a fresh file at the same moment wait, then find the work done.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from weakincentives.errors import SchemaVersionError
from weakincentives.store._checks import to_text

__all__ = ["MIGRATIONS", "migrate"]

type Migration = tuple[str, ...]

MIGRATIONS: tuple[Migration, ...] = (
    (
        # One row per session: the row every appender updates first, which is where the
        # next sequence number comes from.
        """
        CREATE TABLE wink_sessions (
            session_id TEXT PRIMARY KEY,
            last_seq INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE wink_events (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            type_name TEXT NOT NULL,
            format_version INTEGER NOT NULL,
            document TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE wink_checkpoints (
            evaluation_id TEXT PRIMARY KEY,
            round INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running', 'paused', 'done', 'failed')),
            session_id TEXT,
            format_version INTEGER NOT NULL,
            document TEXT NOT NULL,
            saved_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX wink_checkpoints_by_status ON wink_checkpoints (status, evaluation_id)",
        # Steps and approvals keep SQLite's rowid: it is the order they were written in.
        """
        CREATE TABLE wink_steps (
            evaluation_id TEXT NOT NULL,
            step_key TEXT NOT NULL,
            format_version INTEGER NOT NULL,
            document TEXT NOT NULL,
            recorded_at TEXT NOT NULL,
            UNIQUE (evaluation_id, step_key)
        )
        """,
        """
        CREATE TABLE wink_approvals (
            evaluation_id TEXT NOT NULL,
            call_id TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            format_version INTEGER NOT NULL,
            arguments TEXT NOT NULL,
            requested_at TEXT NOT NULL,
            decision TEXT CHECK (decision IN ('approved', 'denied')),
            message TEXT,
            decided_at TEXT,
            UNIQUE (evaluation_id, call_id)
        )
        """,
        "CREATE INDEX wink_approvals_pending ON wink_approvals (requested_at)"
        " WHERE decision IS NULL",
    ),
)
"""Every schema version so far; append new migrations, never edit old ones."""

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS wink_schema_migrations (
    version INTEGER PRIMARY KEY,
    applied_at TEXT NOT NULL
)
"""


def migrate(
    connection: sqlite3.Connection,
    *,
    location: str,
    now: datetime,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> int:
    """Bring the database up to ``len(migrations)``; return the version found before.

    ``connection`` is in autocommit mode (``isolation_level=None``). A database already
    current is only read, so opening a migrated store takes no writer lock.
    """
    supported = len(migrations)
    found = _version(connection)
    if found == supported:
        return found
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(_VERSION_TABLE)
        found = _version(connection)  # another process may have migrated meanwhile
        if found > supported:
            raise SchemaVersionError(location=location, found=found, supported=supported)
        for version in range(found + 1, supported + 1):
            for statement in migrations[version - 1]:
                connection.execute(statement)
            connection.execute(
                "INSERT INTO wink_schema_migrations (version, applied_at) VALUES (?, ?)",
                (version, to_text(now)),
            )
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return found


def _version(connection: sqlite3.Connection) -> int:
    exists = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'wink_schema_migrations'"
    ).fetchone()
    if exists is None:
        return 0
    row = connection.execute("SELECT max(version) FROM wink_schema_migrations").fetchone()
    return 0 if row is None or row[0] is None else int(row[0])
