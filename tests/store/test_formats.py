"""Document formats on every backend: a row from a newer format is refused, never misread."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.store.conftest import Backend
from weakincentives.errors import FormatVersionError, StoredRowError, StoreUsageError
from weakincentives.store import NewEvent, SyncStore
from weakincentives.store._records import FORMAT_VERSION


@pytest.fixture
def newer(backend: Backend) -> Iterator[SyncStore]:
    """A store on the same database written by a library one format ahead."""
    with backend.sync(format_version=FORMAT_VERSION + 1) as opened:
        yield opened


READS: dict[str, tuple[Callable[[SyncStore], object], Callable[[SyncStore], object], str]] = {
    "event": (
        lambda s: s.append("s1", [NewEvent(type_name="tests:E", document={"v": 2})]),
        lambda s: s.read("s1"),
        "event 1 of session 's1'",
    ),
    "checkpoint": (
        lambda s: s.save_checkpoint("e", round=1, status="running", document={}),
        lambda s: s.load_checkpoint("e"),
        "the checkpoint of evaluation 'e'",
    ),
    "steps": (
        lambda s: s.record_step("e", "k", {}),
        lambda s: s.read_steps("e"),
        "step 'k' of evaluation 'e'",
    ),
    "existing step": (
        lambda s: s.record_step("e", "k", {}),
        lambda s: s.record_step("e", "k", {"older": True}),
        "step 'k' of evaluation 'e'",
    ),
    "approvals": (
        lambda s: s.request_approval("e", call_id="c", tool_name="t", arguments={}),
        lambda s: s.read_approvals("e"),
        "the approval of call 'c' of evaluation 'e'",
    ),
    "pending approvals": (
        lambda s: s.request_approval("e", call_id="c", tool_name="t", arguments={}),
        lambda s: s.pending_approvals(),
        "the approval of call 'c' of evaluation 'e'",
    ),
}


@pytest.mark.parametrize("kind", list(READS))
def test_a_row_in_a_newer_format_is_refused_naming_it(
    store: SyncStore, newer: SyncStore, kind: str
) -> None:
    """Reading what a newer library wrote raises FormatVersionError naming the row."""
    write, read, record = READS[kind]
    write(newer)
    with pytest.raises(
        FormatVersionError,
        match=f"{record} is in document format 2, but this store reads formats up to 1",
    ) as raised:
        read(store)
    assert (raised.value.record, raised.value.found, raised.value.supported) == (record, 2, 1)


def test_a_newer_store_reads_older_rows_with_their_format(
    store: SyncStore, newer: SyncStore
) -> None:
    """Rows keep the format they were written in, so a reader can upgrade old layouts."""
    store.append("s1", [NewEvent(type_name="tests:E", document="old")])
    newer.append("s1", [NewEvent(type_name="tests:E", document="new")])
    assert [(event.document, event.format_version) for event in newer.read("s1")] == [
        ("old", 1),
        ("new", 2),
    ]


def test_an_older_writer_never_overwrites_a_newer_checkpoint(
    store: SyncStore, newer: SyncStore
) -> None:
    """Even for a later round, a checkpoint in a newer format is refused, not replaced."""
    newer.save_checkpoint("e", round=1, status="running", document="v2")
    with pytest.raises(FormatVersionError, match="the checkpoint of evaluation 'e'"):
        store.save_checkpoint("e", round=2, status="running", document="v1")
    loaded = newer.load_checkpoint("e")
    assert loaded is not None
    assert (loaded.round, loaded.document, loaded.format_version) == (1, "v2", 2)


@pytest.mark.parametrize("format_version", [0, -1, True, "1"])
def test_a_store_format_must_be_a_positive_int(backend: Backend, format_version: object) -> None:
    """Format numbers start at 1."""
    with pytest.raises(StoreUsageError, match="format_version must be an int >= 1"):
        backend.store(format_version=format_version)


CORRUPTED: dict[str, tuple[str, str]] = {
    "event": ("wink_events", "document"),
    "checkpoint": ("wink_checkpoints", "document"),
    "steps": ("wink_steps", "document"),
    "existing step": ("wink_steps", "document"),
    "approvals": ("wink_approvals", "arguments"),
    "pending approvals": ("wink_approvals", "arguments"),
}
"""The table and column of each kind of row's document."""

NOT_DECODABLE: dict[str, tuple[str, str]] = {
    "invalid": ('{"v": ', "its document does not decode: Expecting value"),
    "nan": ("[NaN]", "its document does not decode: NaN is not JSON"),
    "too deep": ("[" * 100_000 + "]" * 100_000, "its document does not decode: it is nested"),
}
"""Stored text SQLite keeps (PostgreSQL's json refuses it), and what the refusal says."""

LONG_INTEGER = "1" * 5000
"""JSON both databases keep that Python does not read (past 4,300 digits)."""


def overwrite(backend: Backend, table: str, column: str, text: object) -> None:
    """Replace ``column`` of every row of ``table`` by ``text``, behind the store's back."""
    if backend.name == "sqlite":
        with closing(sqlite3.connect(backend.location)) as lite, lite:
            lite.execute(f"UPDATE {table} SET {column} = ?", (text,))
        return
    with psycopg.connect(backend.location, autocommit=True) as connection:
        connection.execute(
            sql.SQL("UPDATE {} SET {} = %s::json").format(
                sql.Identifier(table), sql.Identifier(column)
            ),
            (text,),
        )


def refused(backend: Backend, store: SyncStore, kind: str, text: object) -> StoredRowError:
    """The error reading the ``kind`` of row raises once its document is ``text``."""
    write, read, record = READS[kind]
    write(store)
    overwrite(backend, *CORRUPTED[kind], text)
    with pytest.raises(StoredRowError, match=f"^{record} cannot be read: ") as raised:
        read(store)
    assert raised.value.record == record
    return raised.value


@pytest.mark.parametrize("kind", list(READS))
def test_a_stored_integer_python_cannot_read_is_refused_naming_its_row(
    backend: Backend, store: SyncStore, kind: str
) -> None:
    """A document changed outside the store is a StoredRowError naming its row."""
    error = refused(backend, store, kind, LONG_INTEGER)
    assert error.reason.startswith("its document does not decode: Exceeds the limit")


@pytest.mark.parametrize("kind", list(READS))
@pytest.mark.parametrize("text", list(NOT_DECODABLE))
def test_stored_sqlite_text_that_is_not_json_is_refused_naming_its_row(
    tmp_path: Path, kind: str, text: str
) -> None:
    """SQLite keeps any text: what the store never writes is refused, never misread."""
    stored, reason = NOT_DECODABLE[text]
    backend = Backend("sqlite", str(tmp_path / "store.db"))
    with backend.sync() as store:
        assert refused(backend, store, kind, stored).reason.startswith(reason)


def test_a_document_stored_as_a_blob_is_refused(tmp_path: Path) -> None:
    """SQLite keeps any type in any column: bytes where JSON text belongs are refused."""
    backend = Backend("sqlite", str(tmp_path / "store.db"))
    with backend.sync() as store:
        error = refused(backend, store, "event", b"{}")
    assert error.reason == "its document is stored as bytes, not as JSON text"


COLUMNS: dict[str, tuple[str, str, str, object, str]] = {
    "event version": ("event", "wink_events", "format_version", "abc", "not a count"),
    "event seq": ("event", "wink_events", "seq", "x", "not a count"),
    "event time": ("event", "wink_events", "created_at", "yesterday", "not a time"),
    "naive time": ("event", "wink_events", "created_at", "2026-01-01T00:00:00", "not a time"),
    "time as bytes": ("event", "wink_events", "created_at", b"\x00", "not a time"),
    "checkpoint round": ("checkpoint", "wink_checkpoints", "round", "abc", "not a count"),
    "checkpoint time": ("checkpoint", "wink_checkpoints", "saved_at", "", "not a time"),
    "step time": ("steps", "wink_steps", "recorded_at", "x", "not a time"),
    "approval time": ("approvals", "wink_approvals", "requested_at", "x", "not a time"),
    "decision time": ("approvals", "wink_approvals", "decided_at", "x", "not a time"),
}
"""Columns SQLite lets a hand edit fill with anything: kind of row, table, column, value,
and what the refusal says of it."""


@pytest.mark.parametrize("case", list(COLUMNS))
def test_a_sqlite_column_changed_by_hand_is_refused_naming_its_row(
    tmp_path: Path, case: str
) -> None:
    """SQLite does not enforce column types: a value the store never writes is refused."""
    kind, table, column, value, says = COLUMNS[case]
    backend = Backend("sqlite", str(tmp_path / "store.db"))
    with backend.sync() as store:
        write, read, record = READS[kind]
        write(store)
        overwrite(backend, table, column, value)
        with pytest.raises(StoredRowError) as raised:
            read(store)
    assert raised.value.record == (
        "event x of session 's1'" if column == "seq" else record
    )  # the row as the store reads it
    assert raised.value.reason == f"its {column} is {value!r}, {says}" + (
        " with its UTC offset" if says == "not a time" else ""
    )


@pytest.mark.parametrize(
    ("read", "table", "column", "value", "record"),
    [
        ("sessions", "wink_sessions", "last_seq", "many", "session 's1'"),
        ("sessions", "wink_sessions", "updated_at", "x", "session 's1'"),
        ("evaluations", "wink_checkpoints", "round", 1.5, "the checkpoint of evaluation 'e'"),
        ("evaluations", "wink_checkpoints", "saved_at", "x", "the checkpoint of evaluation 'e'"),
        (
            "older save",
            "wink_checkpoints",
            "format_version",
            "x",
            "the checkpoint of evaluation 'e'",
        ),
        ("older save", "wink_checkpoints", "round", "x", "the checkpoint of evaluation 'e'"),
    ],
)
def test_listings_and_conflicts_refuse_a_column_changed_by_hand(
    tmp_path: Path, read: str, table: str, column: str, value: object, record: str
) -> None:
    """The summaries and a refused save check the columns they read, too."""
    backend = Backend("sqlite", str(tmp_path / "store.db"))
    with backend.sync() as store:
        store.append("s1", [NewEvent(type_name="tests:E", document={})])
        store.save_checkpoint("e", round=3, status="running", document={})
        overwrite(backend, table, column, value)
        reads: dict[str, Callable[[], object]] = {
            "sessions": store.list_sessions,
            "evaluations": store.list_evaluations,
            "older save": lambda: store.save_checkpoint(
                "e", round=1, status="running", document={}
            ),
        }
        with pytest.raises(StoredRowError, match=f"^{record} cannot be read: its {column} is"):
            reads[read]()
