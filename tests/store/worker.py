"""A store client run as a separate OS process by the multi-process tests.

    python -m tests.store.worker append   BACKEND LOCATION SESSION WRITER COUNT
    python -m tests.store.worker migrate  BACKEND LOCATION
    python -m tests.store.worker crash-append     BACKEND LOCATION SESSION COUNT
    python -m tests.store.worker crash-checkpoint BACKEND LOCATION EVALUATION
    python -m tests.store.worker crash-step       BACKEND LOCATION EVALUATION SESSION

``append`` and ``migrate`` print ``ready`` and wait for a line on stdin, so the test can
release several processes at once. The ``crash-*`` commands SIGKILL their own process
inside the write transaction, after its rows are written and before it commits. On
SQLite that is when the store's connection is about to run ``COMMIT``: the connection
comes from its ``sqlite3.connect/handle`` audit event, and a ``str`` adapter (called on
the store's worker thread as it binds the transaction's text) installs a statement trace
there. On PostgreSQL it is when the notice a test trigger raises after the insert
reaches the client.
Nothing in the library knows about these hooks.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import sys
import threading
from typing import Any

import psycopg

from weakincentives.store import NewEvent, PostgresStore, SQLiteStore

CRASH_NOTICE = "wink-test: rows written"
"""What the test trigger on PostgreSQL raises once the transaction's rows are in."""

BATCH_SIZES = (1, 2, 3, 5, 8, 13)

ARMED = threading.Event()
"""Set once the store is open: from then on, the next commit of its write is fatal."""


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _trace_commit(statement: str) -> None:
    if statement.strip().upper() == "COMMIT":
        _die()


_connections: list[sqlite3.Connection] = []


def _watch_sqlite(event: str, arguments: tuple[Any, ...]) -> None:
    if event == "sqlite3.connect/handle":
        _connections.append(arguments[0])


def _adapt_text(value: str) -> str:
    # Runs on the store's worker thread while it binds a statement's parameters, the one
    # thread allowed to touch its connection: once armed, watch for the COMMIT to come.
    if ARMED.is_set():
        for connection in _connections:
            connection.set_trace_callback(_trace_commit)
    return value


async def _watch_postgres(connection: psycopg.AsyncConnection[Any]) -> None:
    def on_notice(notice: psycopg.errors.Diagnostic) -> None:
        if ARMED.is_set() and notice.message_primary == CRASH_NOTICE:
            _die()

    connection.add_notice_handler(on_notice)


def _store(backend: str, location: str, *, crash: bool) -> SQLiteStore | PostgresStore:
    if backend == "sqlite":
        if crash:
            sys.addaudithook(_watch_sqlite)
            sqlite3.register_adapter(str, _adapt_text)
        return SQLiteStore(location)
    return PostgresStore(location, configure=_watch_postgres if crash else None)


async def _append(backend: str, location: str, session: str, writer: str, count: int) -> None:
    async with _store(backend, location, crash=False) as store:
        print("ready", flush=True)
        sys.stdin.readline()
        written = batch = 0
        while written < count:
            size = min(BATCH_SIZES[batch % len(BATCH_SIZES)], count - written)
            events = [
                NewEvent(
                    type_name="tests:Written",
                    document={"writer": writer, "n": written + i, "batch": batch},
                )
                for i in range(size)
            ]
            await store.append(session, events)
            written += size
            batch += 1
    print("done", flush=True)


async def _migrate(backend: str, location: str) -> None:
    store = _store(backend, location, crash=False)
    print("ready", flush=True)
    sys.stdin.readline()
    async with store:
        print("open", flush=True)


async def _crash_append(backend: str, location: str, session: str, count: int) -> None:
    async with _store(backend, location, crash=True) as store:
        ARMED.set()
        padding = "x" * 100
        await store.append(
            session,
            [
                NewEvent(type_name="tests:Doomed", document={"n": n, "padding": padding})
                for n in range(count)
            ],
        )
    print("survived", flush=True)
    sys.exit(3)


async def _crash_checkpoint(backend: str, location: str, evaluation: str) -> None:
    async with _store(backend, location, crash=True) as store:
        ARMED.set()
        await store.save_checkpoint(evaluation, round=2, status="running", document="doomed")
    print("survived", flush=True)
    sys.exit(3)


async def _crash_step(backend: str, location: str, evaluation: str, session: str) -> None:
    async with _store(backend, location, crash=True) as store:
        ARMED.set()
        await store.record_step(
            evaluation,
            "round:1/call:doomed",
            "doomed",
            session_id=session,
            events=[NewEvent(type_name="tests:Doomed", document={"name": "doomed"})],
        )
    print("survived", flush=True)
    sys.exit(3)


def main(arguments: list[str]) -> None:
    """Run one command (see the module docstring)."""
    command, backend, location, *rest = arguments
    if command == "append":
        session, writer, count = rest
        asyncio.run(_append(backend, location, session, writer, int(count)))
    elif command == "migrate":
        asyncio.run(_migrate(backend, location))
    elif command == "crash-append":
        session, count = rest
        asyncio.run(_crash_append(backend, location, session, int(count)))
    elif command == "crash-checkpoint":
        (evaluation,) = rest
        asyncio.run(_crash_checkpoint(backend, location, evaluation))
    elif command == "crash-step":
        evaluation, session = rest
        asyncio.run(_crash_step(backend, location, evaluation, session))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
