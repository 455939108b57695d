"""Document formats on every backend: a row from a newer format is refused, never misread."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.store.conftest import Backend
from weakincentives.errors import FormatVersionError, StoreUsageError
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
