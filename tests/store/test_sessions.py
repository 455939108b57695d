"""Session logs on every backend: gap-free sequence numbers, ordered reads, atomic batches."""

from __future__ import annotations

import asyncio
import math
from datetime import timedelta

import pytest

from tests.conftest import FakeClock
from tests.store.conftest import Backend
from weakincentives.errors import DocumentError, StoreUsageError
from weakincentives.serde import JSONValue
from weakincentives.store import NewEvent, StoredEvent, SyncStore
from weakincentives.store._records import SessionSummary


def events(*documents: JSONValue, type_name: str = "tests:Happened") -> list[NewEvent]:
    return [NewEvent(type_name=type_name, document=document) for document in documents]


def nested(depth: int) -> JSONValue:
    document: JSONValue = []
    for _ in range(depth):
        document = [document]
    return document


def test_append_numbers_events_from_one_without_gaps(store: SyncStore) -> None:
    """Each batch gets the next run of sequence numbers, returned as (first, last)."""
    assert store.append("s1", events(1, 2, 3)) == (1, 3)
    assert store.append("s1", events(4)) == (4, 4)
    assert store.append("s1", events(5, 6)) == (5, 6)
    assert [event.seq for event in store.read("s1")] == [1, 2, 3, 4, 5, 6]
    assert [event.document for event in store.read("s1")] == [1, 2, 3, 4, 5, 6]


def test_read_returns_what_was_appended_with_the_stores_time(
    store: SyncStore, clock: FakeClock
) -> None:
    """A stored event carries its session, seq, type name, document, format and batch time."""
    stamped = clock.now
    store.append(
        "s1",
        [
            NewEvent(type_name="weakincentives.runtime:ToolInvoked", document={"name": "lookup"}),
            NewEvent(type_name="tests:Other", document=["a", None, 1.5]),
        ],
    )
    assert store.read("s1") == (
        StoredEvent(
            session_id="s1",
            seq=1,
            type_name="weakincentives.runtime:ToolInvoked",
            document={"name": "lookup"},
            format_version=1,
            created_at=stamped,
        ),
        StoredEvent(
            session_id="s1",
            seq=2,
            type_name="tests:Other",
            document=["a", None, 1.5],
            format_version=1,
            created_at=stamped,
        ),
    )


@pytest.mark.parametrize(
    ("after", "limit", "expected"),
    [(0, None, [1, 2, 3, 4, 5]), (2, None, [3, 4, 5]), (1, 2, [2, 3]), (5, None, []), (0, 0, [])],
)
def test_read_pages_by_after_and_limit(
    store: SyncStore, after: int, limit: int | None, expected: list[int]
) -> None:
    """``after`` skips up to a seq and ``limit`` caps the count, in seq order."""
    store.append("s1", events(1, 2, 3, 4, 5))
    assert [event.seq for event in store.read("s1", after=after, limit=limit)] == expected


def test_sessions_are_numbered_independently(store: SyncStore) -> None:
    """Each session has its own sequence, and reading one never shows another's events."""
    store.append("a", events("a1", "a2"))
    assert store.append("b", events("b1")) == (1, 1)
    assert store.append("a", events("a3")) == (3, 3)
    assert [event.document for event in store.read("a")] == ["a1", "a2", "a3"]
    assert [event.document for event in store.read("b")] == ["b1"]


def test_an_unknown_session_has_no_events(store: SyncStore) -> None:
    """Reading a session nobody wrote to is empty, not an error."""
    assert store.read("nobody") == ()


def test_list_sessions_summarises_each_session_by_id(store: SyncStore, clock: FakeClock) -> None:
    """A summary has the newest seq, the first and the newest batch's times."""
    first = clock.now
    store.append("zeta", events(1, 2))
    store.append("alpha", events(1))
    latest = clock.now
    store.append("zeta", events(3))
    assert store.list_sessions() == (
        SessionSummary(
            session_id="alpha",
            last_seq=1,
            created_at=first + timedelta(milliseconds=1),
            updated_at=first + timedelta(milliseconds=1),
        ),
        SessionSummary(session_id="zeta", last_seq=3, created_at=first, updated_at=latest),
    )


def test_delete_session_removes_it_and_a_later_append_starts_again(store: SyncStore) -> None:
    """Deleting drops the log and summary; the session can start over at seq 1."""
    store.append("gone", events(1, 2))
    store.append("kept", events(1))
    assert store.delete_session("gone") is True
    assert store.delete_session("gone") is False
    assert store.read("gone") == ()
    assert [summary.session_id for summary in store.list_sessions()] == ["kept"]
    assert store.append("gone", events("again")) == (1, 1)
    assert [event.document for event in store.read("kept")] == [1]


def test_an_empty_batch_is_refused(store: SyncStore) -> None:
    """Appending nothing is a mistake, not a no-op with meaningless seqs."""
    with pytest.raises(StoreUsageError, match="append to session 's1' needs at least one event"):
        store.append("s1", [])


@pytest.mark.parametrize(
    ("batch", "message"),
    [
        ("not a batch", "events must be a sequence of NewEvent, got str"),
        ([{"type_name": "x"}], "event 0 of the batch for session 's1' is a dict, not a NewEvent"),
        (events(1, type_name=""), "type_name of event 0 must be a non-empty str"),
    ],
)
def test_a_malformed_batch_is_refused(store: SyncStore, batch: object, message: str) -> None:
    """Anything but a sequence of NewEvent with type names is refused before writing."""
    with pytest.raises(StoreUsageError, match=message):
        store.append("s1", batch)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("session_id", "message"),
    [
        ("", "session_id must be a non-empty str, got ''"),
        (7, "session_id must be a non-empty str, got 7"),
        ("a\x00b", "holds a NUL or a lone surrogate"),
        ("a\ud800", "holds a NUL or a lone surrogate"),
    ],
)
def test_an_id_the_databases_cannot_keep_is_refused(
    store: SyncStore, session_id: object, message: str
) -> None:
    """Ids are non-empty text without NUL or lone surrogates, on every backend alike."""
    with pytest.raises(StoreUsageError, match=message):
        store.append(session_id, events(1))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        (math.nan, "Out of range float values are not JSON compliant"),
        ({1, 2}, "Object of type set is not JSON serializable"),
        ("\ud83d", "it holds a lone surrogate"),
        (10**5000, "Exceeds the limit"),
        ({(1, 2): "tuple key"}, "keys must be str, int, float, bool or None"),
        (nested(100_000), "it is nested too deeply"),
    ],
    ids=["nan", "set", "lone-surrogate", "huge-int", "tuple-key", "too-deep"],
)
def test_an_unstorable_document_refuses_the_whole_batch(
    store: SyncStore, document: object, reason: str
) -> None:
    """One bad document names its place in the batch, and none of the batch is written."""
    with pytest.raises(DocumentError, match=reason) as raised:
        store.append("s1", events("fine", document))  # type: ignore[arg-type]
    assert raised.value.record == "event 1 of the batch for session 's1'"
    assert store.read("s1") == ()


@pytest.mark.parametrize(
    ("after", "limit", "message"),
    [
        (-1, None, "after must be an int from 0 to 2\\*\\*63 - 1, got -1"),
        (True, None, "after must be an int"),
        (0, -5, "limit must be None or an int from 0 to 2\\*\\*63 - 1, got -5"),
        (0, 2**63, "limit must be None or an int"),
    ],
)
def test_a_bad_page_is_refused(
    store: SyncStore, after: object, limit: object, message: str
) -> None:
    """``after`` and ``limit`` are 64-bit counts, checked before the database sees them."""
    with pytest.raises(StoreUsageError, match=message):
        store.read("s1", after=after, limit=limit)  # type: ignore[arg-type]


def test_concurrent_appends_in_one_process_never_interleave(backend: Backend) -> None:
    """Twenty tasks appending at once get disjoint, gap-free runs of seqs, one per batch."""

    async def scenario() -> tuple[list[tuple[int, int]], tuple[StoredEvent, ...]]:
        async with backend.store() as store:
            batches = [
                [NewEvent(type_name="tests:N", document=[task, n]) for n in range(5)]
                for task in range(20)
            ]
            ranges = await asyncio.gather(*(store.append("shared", batch) for batch in batches))
            return list(ranges), await store.read("shared")

    ranges, stored = asyncio.run(scenario())
    assert [event.seq for event in stored] == list(range(1, 101))
    for task, (first, last) in enumerate(ranges):
        assert last - first == 4
        assert [event.document for event in stored[first - 1 : last]] == [
            [task, n] for n in range(5)
        ]
