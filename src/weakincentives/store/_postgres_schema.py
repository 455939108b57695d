"""The PostgreSQL schema, as an ordered list of migrations, and the code that applies them.

Migration ``n`` (1-based) takes the schema from version ``n - 1`` to ``n``. They run at
open in one transaction that first takes a transaction-level advisory lock, so two
processes opening a fresh database at once take turns (``CREATE TABLE IF NOT EXISTS``
alone races on the catalogue), and PostgreSQL's transactional DDL means a crash
leaves the previous version. Tables go in the first schema of the connection's
``search_path``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, LiteralString

from weakincentives.errors import SchemaVersionError

if TYPE_CHECKING:
    import psycopg

__all__ = ["MIGRATIONS", "migrate"]

type Migration = tuple[LiteralString, ...]

MIGRATIONS: tuple[Migration, ...] = (
    (
        # One row per session: appenders update it first, and its row lock is what
        # orders concurrent appends to one session.
        """
        CREATE TABLE wink_sessions (
            session_id text PRIMARY KEY,
            last_seq bigint NOT NULL,
            created_at timestamptz NOT NULL,
            updated_at timestamptz NOT NULL
        )
        """,
        # Documents are `json`, not `jsonb`: the text is kept exactly as written (jsonb
        # would turn 1e300 into a 301-digit integer and drop -0.0's sign).
        """
        CREATE TABLE wink_events (
            session_id text NOT NULL,
            seq bigint NOT NULL,
            type_name text NOT NULL,
            format_version integer NOT NULL,
            document json NOT NULL,
            created_at timestamptz NOT NULL,
            PRIMARY KEY (session_id, seq)
        )
        """,
        """
        CREATE TABLE wink_checkpoints (
            evaluation_id text PRIMARY KEY,
            round bigint NOT NULL,
            status text NOT NULL CHECK (status IN ('running', 'paused', 'done', 'failed')),
            session_id text,
            format_version integer NOT NULL,
            document json NOT NULL,
            saved_at timestamptz NOT NULL
        )
        """,
        "CREATE INDEX wink_checkpoints_by_status ON wink_checkpoints (status, evaluation_id)",
        """
        CREATE TABLE wink_steps (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            evaluation_id text NOT NULL,
            step_key text NOT NULL,
            format_version integer NOT NULL,
            document json NOT NULL,
            recorded_at timestamptz NOT NULL,
            UNIQUE (evaluation_id, step_key)
        )
        """,
        """
        CREATE TABLE wink_approvals (
            id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            evaluation_id text NOT NULL,
            call_id text NOT NULL,
            tool_name text NOT NULL,
            format_version integer NOT NULL,
            arguments json NOT NULL,
            requested_at timestamptz NOT NULL,
            decision text CHECK (decision IN ('approved', 'denied')),
            message text,
            decided_at timestamptz,
            UNIQUE (evaluation_id, call_id)
        )
        """,
        "CREATE INDEX wink_approvals_pending ON wink_approvals (requested_at, id)"
        " WHERE decision IS NULL",
    ),
)
"""Every schema version so far; append new migrations, never edit old ones."""

# Any fixed 64-bit number works; this one is "wink" + "stor" in ASCII.
MIGRATION_LOCK = 0x77696E6B73746F72

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS wink_schema_migrations (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL
)
"""


async def migrate(
    connection: psycopg.AsyncConnection[Any],
    *,
    location: str,
    now: datetime,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> int:
    """Bring the schema up to ``len(migrations)``; return the version found before.

    ``connection`` is in autocommit mode; the work is one transaction.
    """
    supported = len(migrations)
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
        await connection.execute(_VERSION_TABLE)
        cursor = await connection.execute("SELECT max(version) FROM wink_schema_migrations")
        row = await cursor.fetchone()
        found = 0 if row is None or row[0] is None else int(row[0])
        if found > supported:
            raise SchemaVersionError(location=location, found=found, supported=supported)
        for version in range(found + 1, supported + 1):
            for statement in migrations[version - 1]:
                await connection.execute(statement)
            await connection.execute(
                "INSERT INTO wink_schema_migrations (version, applied_at) VALUES (%s, %s)",
                (version, now),
            )
    return found
