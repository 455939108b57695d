"""The durable store against hand-written SQL on the same driver, in the same run.

Prints ``name  n  best_ms  ratio`` lines (best of several repeats, each on a fresh
database); the ratio is the store over raw ``sqlite3`` / raw psycopg doing the same
work on an equivalent table (goal: within 2x):

- append: ``n`` events in batches of 100 (and one event per append at 1,000), one
  transaction per batch. Raw inserts the same rows with ``executemany`` and knows the
  sequence numbers already (one writer); the store assigns them in the database, safe
  for many writers.
- resume: what a resumed evaluation reads: the session's whole log of ``n`` events,
  the latest checkpoint and the steps (one per 10 events). Raw selects the same rows
  and decodes the JSON.

Then the bytes a representative checkpoint takes (its JSON text, and the table's
growth per saved row). PostgreSQL runs on a throwaway server started like the tests'
(``tests/store/pg_server.py``: fsync off, so disk flushes do not hide the store's own
cost); SQLite uses a file in a temporary directory with the store's settings (WAL,
``synchronous=FULL``) on both sides. Run with ``python benchmarks/bench_store.py``
(``--quick`` stops at 1,000 events); needs the ``postgres`` extra and PostgreSQL's
server binaries, else it measures SQLite alone.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from tests.store.pg_server import find_binaries, running_server

from weakincentives.serde import JSONValue
from weakincentives.store import NewEvent, PostgresStore, SQLiteStore

BATCH = 100
SESSION = "session-1"
EVALUATION = "evaluation-1"

RAW_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_events (
    session_id TEXT NOT NULL, seq INTEGER NOT NULL, type_name TEXT NOT NULL,
    document TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS raw_checkpoints (evaluation_id TEXT PRIMARY KEY, document TEXT);
CREATE TABLE IF NOT EXISTS raw_steps (evaluation_id TEXT, step_key TEXT, document TEXT);
"""
RAW_POSTGRES_SCHEMA = """
CREATE TABLE IF NOT EXISTS raw_events (
    session_id text NOT NULL, seq bigint NOT NULL, type_name text NOT NULL,
    document json NOT NULL, created_at timestamptz NOT NULL, PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS raw_checkpoints (evaluation_id text PRIMARY KEY, document json);
CREATE TABLE IF NOT EXISTS raw_steps (evaluation_id text, step_key text, document json)
"""


def event_document(n: int) -> JSONValue:
    """A ToolInvoked-sized event: a name, params, a short result, a few numbers."""
    return {
        "name": "lookup_order",
        "call_id": f"call_{n:08d}",
        "params": {"order_id": f"A-{n}", "include_items": True},
        "result": {"success": True, "message": f"order A-{n} has 3 items", "value": None},
        "usage": {"input_tokens": 812, "output_tokens": 64},
    }


def checkpoint_document(rounds: int = 10) -> JSONValue:
    """A checkpoint after ``rounds`` rounds: the conversation so far and the usage."""
    conversation: list[JSONValue] = [
        {"kind": "prompt", "text": "You are a support agent. " * 40},
    ]
    for round_ in range(rounds):
        conversation.append(
            {
                "kind": "assistant",
                "tool_calls": [
                    {
                        "call_id": f"call_{round_}",
                        "name": "lookup_order",
                        "arguments": json.dumps({"order_id": f"A-{round_}"}),
                    }
                ],
            }
        )
        conversation.append(
            {
                "kind": "tool_output",
                "call_id": f"call_{round_}",
                "output": f"order A-{round_}: 3 items, shipped on day {round_}. " * 4,
            }
        )
    return {
        "prompt": {"ns": "support", "key": "triage"},
        "round": rounds,
        "conversation": conversation,
        "usage": {"input_tokens": 12_345, "output_tokens": 678},
    }


def batches(n: int, size: int) -> list[list[tuple[int, JSONValue]]]:
    numbered = list(enumerate((event_document(k) for k in range(n)), start=1))
    return [numbered[i : i + size] for i in range(0, n, size)]


def best(runs: list[float]) -> float:
    return min(runs) * 1000.0


def report(name: str, n: int, store_ms: float, raw_ms: float) -> None:
    print(f"{name:<44} {n:>7}  {store_ms:10.1f}  {store_ms / raw_ms:5.2f}x  (raw {raw_ms:.1f} ms)")


async def timed(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await work()
    return time.perf_counter() - start


# -- SQLite ---------------------------------------------------------------------------


def raw_sqlite(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.executescript(RAW_SQLITE_SCHEMA)
    return connection


def sqlite_raw_append(
    connection: sqlite3.Connection, work: list[list[tuple[int, JSONValue]]]
) -> None:
    now = "2026-01-01T00:00:00.000000+00:00"
    for batch in work:
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO raw_events VALUES (?, ?, ?, ?, ?)",
            [(SESSION, seq, "tests:Event", json.dumps(doc), now) for seq, doc in batch],
        )
        connection.execute("COMMIT")


def sqlite_raw_resume(connection: sqlite3.Connection) -> int:
    rows = connection.execute(
        "SELECT seq, type_name, document, created_at FROM raw_events WHERE session_id = ?"
        " ORDER BY seq",
        (SESSION,),
    ).fetchall()
    events = [(seq, name, json.loads(doc), at) for seq, name, doc, at in rows]
    (checkpoint,) = connection.execute(
        "SELECT document FROM raw_checkpoints WHERE evaluation_id = ?", (EVALUATION,)
    ).fetchone()
    json.loads(checkpoint)
    steps = connection.execute(
        "SELECT step_key, document FROM raw_steps WHERE evaluation_id = ?", (EVALUATION,)
    ).fetchall()
    return len(events) + len([json.loads(doc) for _, doc in steps])


async def store_append(
    store: SQLiteStore | PostgresStore, work: list[list[tuple[int, JSONValue]]]
) -> None:
    for batch in work:
        await store.append(
            SESSION, [NewEvent(type_name="tests:Event", document=d) for _, d in batch]
        )


async def store_resume(store: SQLiteStore | PostgresStore) -> int:
    events = await store.read(SESSION)
    await store.load_checkpoint(EVALUATION)
    steps = await store.read_steps(EVALUATION)
    return len(events) + len(steps)


def measure_raw_sqlite(
    path: Path, n: int, work: list[list[tuple[int, JSONValue]]]
) -> tuple[float, float, int]:
    """The raw ``sqlite3`` counterpart of :func:`measure_store`."""
    raw = raw_sqlite(path)
    try:
        start = time.perf_counter()
        sqlite_raw_append(raw, work)
        append_time = time.perf_counter() - start
        raw.execute(
            "INSERT INTO raw_checkpoints VALUES (?, ?)",
            (EVALUATION, json.dumps(checkpoint_document())),
        )
        raw.executemany(
            "INSERT INTO raw_steps VALUES (?, ?, ?)",
            [(EVALUATION, f"step:{k}", json.dumps(event_document(k))) for k in range(n // 10)],
        )
        start = time.perf_counter()
        count = sqlite_raw_resume(raw)
        return append_time, time.perf_counter() - start, count
    finally:
        raw.close()


def bench_sqlite(sizes: list[int], repeats: int) -> None:
    for n, size in [(1000, 1), *((n, BATCH) for n in sizes)]:
        work = batches(n, size)
        runs: dict[str, list[tuple[float, float, int]]] = {"store": [], "raw": []}
        for repeat in range(repeats if n <= 1000 else 1):
            # Alternate which side goes first, so a disk that slows down mid-run skews neither.
            order = ("store", "raw") if repeat % 2 else ("raw", "store")
            with tempfile.TemporaryDirectory() as directory:
                for side in order:
                    path = Path(directory) / f"{side}.db"
                    if side == "raw":
                        runs["raw"].append(measure_raw_sqlite(path, n, work))
                    else:
                        runs["store"].append(asyncio.run(measure_store(SQLiteStore(path), n, work)))
        assert {count for *_, count in runs["store"] + runs["raw"]} == {n + n // 10}
        label = "one event per append" if size == 1 else f"batches of {size}"
        appends = {side: best([run[0] for run in measured]) for side, measured in runs.items()}
        report(f"sqlite append ({label})", n, appends["store"], appends["raw"])
        if size == BATCH:
            reads = {side: best([run[1] for run in measured]) for side, measured in runs.items()}
            report("sqlite resume (log + checkpoint + steps)", n, reads["store"], reads["raw"])


async def measure_store(
    store: SQLiteStore | PostgresStore, n: int, work: list[list[tuple[int, JSONValue]]]
) -> tuple[float, float, int]:
    """Seconds to append ``work``, seconds to read it all back as a resume, rows read."""
    async with store:
        append_time = await timed(lambda: store_append(store, work))
        await seed_resume(store, n)
        start = time.perf_counter()
        count = await store_resume(store)
        return append_time, time.perf_counter() - start, count


async def seed_resume(store: SQLiteStore | PostgresStore, n: int) -> None:
    await store.save_checkpoint(
        EVALUATION, round=10, status="running", document=checkpoint_document()
    )
    for k in range(n // 10):
        await store.record_step(EVALUATION, f"step:{k}", event_document(k))


# -- PostgreSQL -----------------------------------------------------------------------


async def postgres_raw(
    conninfo: str, n: int, work: list[list[tuple[int, JSONValue]]]
) -> tuple[float, float, int]:
    async with await psycopg.AsyncConnection.connect(conninfo, autocommit=True) as connection:
        for statement in RAW_POSTGRES_SCHEMA.split(";"):
            await connection.execute(statement)

        async def append() -> None:
            for batch in work:
                async with connection.transaction(), connection.cursor() as cursor:
                    await cursor.executemany(
                        "INSERT INTO raw_events VALUES (%s, %s, %s, %s, now())",
                        [(SESSION, seq, "tests:Event", json.dumps(doc)) for seq, doc in batch],
                    )

        append_time = await timed(append)
        await connection.execute(
            "INSERT INTO raw_checkpoints VALUES (%s, %s)",
            (EVALUATION, json.dumps(checkpoint_document())),
        )
        async with connection.cursor() as cursor:
            await cursor.executemany(
                "INSERT INTO raw_steps VALUES (%s, %s, %s)",
                [(EVALUATION, f"step:{k}", json.dumps(event_document(k))) for k in range(n // 10)],
            )
        count = 0

        async def resume() -> None:
            nonlocal count
            cursor = await connection.execute(
                "SELECT seq, type_name, document::text, created_at FROM raw_events"
                " WHERE session_id = %s ORDER BY seq",
                (SESSION,),
            )
            events = [(s, t, json.loads(d), c) for s, t, d, c in await cursor.fetchall()]
            cursor = await connection.execute(
                "SELECT document::text FROM raw_checkpoints WHERE evaluation_id = %s", (EVALUATION,)
            )
            row = await cursor.fetchone()
            assert row is not None
            json.loads(row[0])
            cursor = await connection.execute(
                "SELECT step_key, document::text FROM raw_steps WHERE evaluation_id = %s",
                (EVALUATION,),
            )
            steps = [(k, json.loads(d)) for k, d in await cursor.fetchall()]
            count = len(events) + len(steps)

        resume_time = await timed(resume)
        return append_time, resume_time, count


def bench_postgres(server_conninfo: Callable[[], str], sizes: list[int], repeats: int) -> None:
    for n, size in [(1000, 1), *((n, BATCH) for n in sizes)]:
        work = batches(n, size)
        store_runs: list[float] = []
        raw_runs: list[float] = []
        store_reads: list[float] = []
        raw_reads: list[float] = []
        for _ in range(repeats if n <= 1000 else 1):
            raw_append, raw_resume, raw_count = asyncio.run(
                postgres_raw(server_conninfo(), n, work)
            )
            raw_runs.append(raw_append)
            raw_reads.append(raw_resume)

            store = PostgresStore(server_conninfo())
            append_time, resume_time, count = asyncio.run(measure_store(store, n, work))
            assert count == raw_count
            store_runs.append(append_time)
            store_reads.append(resume_time)
        label = "one event per append" if size == 1 else f"batches of {size}"
        report(f"postgres append ({label})", n, best(store_runs), best(raw_runs))
        if size == BATCH:
            report(
                "postgres resume (log + checkpoint + steps)", n, best(store_reads), best(raw_reads)
            )


# -- checkpoint size ------------------------------------------------------------------


def checkpoint_bytes(postgres_conninfo: str | None) -> None:
    document = checkpoint_document()
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    print(f"checkpoint document (10 rounds): {len(text.encode()):,} bytes of JSON text")
    count = 1000

    async def fill(store: SQLiteStore | PostgresStore) -> None:
        for k in range(count):
            await store.save_checkpoint(
                f"evaluation-{k}", round=10, status="running", document=document
            )

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sizes.db"

        async def sqlite_fill() -> None:
            async with SQLiteStore(path) as store:
                await fill(store)

        asyncio.run(sqlite_fill())
        raw = sqlite3.connect(path)
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (pages,) = raw.execute(
            "SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'wink_checkpoints%'"
        ).fetchone()
        raw.close()
        print(f"sqlite: {pages / count:,.0f} bytes per checkpoint row (table and index pages)")
    if postgres_conninfo is not None:

        async def postgres_fill(conninfo: str = postgres_conninfo) -> None:
            async with PostgresStore(conninfo) as store:
                await fill(store)

        asyncio.run(postgres_fill())
        with psycopg.connect(postgres_conninfo, autocommit=True) as connection:
            connection.execute("VACUUM ANALYZE wink_checkpoints")
            row = connection.execute("SELECT pg_total_relation_size('wink_checkpoints')").fetchone()
        assert row is not None
        print(f"postgres: {row[0] / count:,.0f} bytes per checkpoint row (heap, TOAST, indexes)")


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = [1000] if quick else [1000, 100_000]
    repeats = 5
    print(f"{'name':<44} {'n':>7}  {'best_ms':>10}  ratio")
    bench_sqlite(sizes, repeats)
    if find_binaries() is None:
        print("postgres: no server binaries (initdb, pg_ctl, postgres) found; skipped")
        checkpoint_bytes(None)
        return
    with running_server() as server:
        schemas = itertools.count()

        def fresh() -> str:
            name = f"bench_{next(schemas)}"
            with psycopg.connect(server.conninfo(), autocommit=True) as connection:
                connection.execute(f"CREATE SCHEMA {name}")
            return server.conninfo(search_path=name)

        bench_postgres(fresh, sizes, repeats)
        checkpoint_bytes(fresh())


if __name__ == "__main__":
    main()
