"""Real OS processes on one store: concurrent appenders, and writers killed mid-transaction."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import psycopg

from tests.store.conftest import Backend
from tests.store.worker import CRASH_NOTICE
from weakincentives.serde import JSONValue
from weakincentives.store import NewEvent, StoredEvent

ROOT = Path(__file__).resolve().parents[2]
PER_WRITER = 300


def spawn(*arguments: str) -> subprocess.Popen[str]:
    """Start ``tests/store/worker.py`` with ``arguments`` in a new interpreter."""
    return subprocess.Popen(
        [sys.executable, "-m", "tests.store.worker", *arguments],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def expect_line(worker: subprocess.Popen[str], line: str) -> None:
    """Read the worker's next line; on anything else, stop it and show its stderr."""
    assert worker.stdout is not None
    got = worker.stdout.readline()
    if got != f"{line}\n":
        worker.kill()
        _, error = worker.communicate(timeout=60)
        raise AssertionError(f"expected {line!r} from the worker, got {got!r}:\n{error}")


def release(workers: list[subprocess.Popen[str]]) -> None:
    """Let workers waiting at their barrier go, all at once."""
    for worker in workers:
        assert worker.stdin is not None
        worker.stdin.write("go\n")
        worker.stdin.flush()


def finish(worker: subprocess.Popen[str]) -> tuple[int, str, str]:
    """Wait (bounded) for the worker to exit; its code, stdout and stderr."""
    out, error = worker.communicate(timeout=300)
    return worker.returncode, out, error


def field(event: StoredEvent, name: str) -> JSONValue:
    document = event.document
    assert isinstance(document, dict)
    return document[name]


def test_two_processes_appending_to_one_session_lose_duplicate_and_reorder_nothing(
    backend: Backend,
) -> None:
    """The log holds exactly both writers' events, seqs 1..N, each writer's in its order."""
    workers = [
        spawn("append", backend.name, backend.location, "shared", writer, str(PER_WRITER))
        for writer in ("a", "b")
    ]
    for worker in workers:
        expect_line(worker, "ready")
    release(workers)
    for worker in workers:
        code, out, error = finish(worker)
        assert (code, out) == (0, "done\n"), error
    with backend.sync() as store:
        stored = store.read("shared")
    assert [event.seq for event in stored] == list(range(1, 2 * PER_WRITER + 1))
    batches: dict[tuple[JSONValue, JSONValue], list[int]] = defaultdict(list)
    for writer in ("a", "b"):
        own = [event for event in stored if field(event, "writer") == writer]
        assert [field(event, "n") for event in own] == list(range(PER_WRITER))
        for event in own:
            batches[writer, field(event, "batch")].append(event.seq)
    for seqs in batches.values():
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # a batch is never split


_TRIGGER = """
CREATE FUNCTION wink_test_mark() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE NOTICE '{notice}';
    RETURN NULL;
END $$;
CREATE TRIGGER wink_test_mark AFTER INSERT OR UPDATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION wink_test_mark();
"""


def mark_writes(backend: Backend, table: str) -> None:
    """On PostgreSQL, have ``table``'s writes raise the notice the crash workers die on."""
    if backend.name == "postgres":
        with psycopg.connect(backend.location, autocommit=True) as raw:
            raw.execute(_TRIGGER.format(notice=CRASH_NOTICE, table=table))


def unfinished_wal_bytes(backend: Backend) -> int:
    """Bytes in the SQLite write-ahead log (0 on PostgreSQL, whose log is the server's)."""
    wal = Path(f"{backend.location}-wal")
    return wal.stat().st_size if backend.name == "sqlite" and wal.exists() else 0


def test_a_process_killed_inside_an_append_leaves_the_batch_wholly_absent(
    backend: Backend,
) -> None:
    """SIGKILL after the rows are written but before COMMIT: the next reader sees none."""
    with backend.sync() as store:
        store.append("s", [NewEvent(type_name="tests:Kept", document=n) for n in range(3)])
    mark_writes(backend, "wink_events")
    code, out, error = finish(spawn("crash-append", backend.name, backend.location, "s", "20000"))
    assert (code, out) == (-signal.SIGKILL, ""), error
    if backend.name == "sqlite":
        # The doomed batch did reach the disk: its pages spilled into the WAL uncommitted.
        assert unfinished_wal_bytes(backend) > 2_000_000
    with backend.sync() as store:
        assert [event.document for event in store.read("s")] == [0, 1, 2]
        assert store.list_sessions()[0].last_seq == 3
        assert store.append("s", [NewEvent(type_name="tests:After", document="next")]) == (4, 4)


def test_a_process_killed_inside_a_checkpoint_save_leaves_the_old_checkpoint(
    backend: Backend,
) -> None:
    """SIGKILL inside the save transaction: the previous round is still the checkpoint."""
    with backend.sync() as store:
        store.save_checkpoint("e", round=1, status="running", document="round one")
    mark_writes(backend, "wink_checkpoints")
    code, out, error = finish(spawn("crash-checkpoint", backend.name, backend.location, "e"))
    assert (code, out) == (-signal.SIGKILL, ""), error
    with backend.sync() as store:
        loaded = store.load_checkpoint("e")
        assert loaded is not None
        assert (loaded.round, loaded.document) == (1, "round one")
        saved = store.save_checkpoint("e", round=2, status="done", document="round two")
        assert saved.round == 2
