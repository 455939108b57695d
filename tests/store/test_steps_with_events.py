"""A step (or a checkpoint) and the events it produced, written in one transaction.

This is what makes a durable evaluation's events exactly-once: a crash loses the step
and its events together or neither, and a writer that loses the race for a step
appends nothing.
"""

from __future__ import annotations

import asyncio
import signal

import pytest

from tests.store.conftest import Backend
from tests.store.test_processes import finish, mark_writes, spawn
from weakincentives.errors import CheckpointConflictError, DocumentError, StoreUsageError
from weakincentives.serde import JSONValue
from weakincentives.store import NewEvent, SyncStore


def events(*names: str) -> list[NewEvent]:
    return [NewEvent(type_name="tests:Happened", document={"name": name}) for name in names]


def names(store: SyncStore, session_id: str) -> list[object]:
    return [
        event.document["name"] if isinstance(event.document, dict) else None
        for event in store.read(session_id)
    ]


def test_a_recorded_step_appends_its_events_to_the_session(store: SyncStore) -> None:
    """The step is stored and its events follow the log's earlier ones, in order."""
    store.append("s", events("before"))
    step = store.record_step(
        "e", "round:1/send", {"reply": 1}, session_id="s", events=events("a", "b")
    )
    assert step.document == {"reply": 1}
    assert names(store, "s") == ["before", "a", "b"]
    assert [event.seq for event in store.read("s")] == [1, 2, 3]


def test_a_step_recorded_again_appends_nothing(store: SyncStore) -> None:
    """The first writer wins: a second writer gets the stored step and its events are dropped."""
    first = store.record_step("e", "k", "first", session_id="s", events=events("mine"))
    again = store.record_step("e", "k", "second", session_id="s", events=events("theirs"))
    assert again == first
    assert names(store, "s") == ["mine"]


def test_a_step_without_events_needs_no_session(store: SyncStore) -> None:
    """Events are optional; without them nothing is appended anywhere."""
    store.record_step("e", "k", 1, events=())
    assert store.list_sessions() == ()


def test_events_without_a_session_are_refused_before_any_write(store: SyncStore) -> None:
    """The log to append to must be named; the step is not recorded either."""
    with pytest.raises(StoreUsageError, match="events written with step 'k' of evaluation 'e'"):
        store.record_step("e", "k", 1, events=events("lost"))
    assert store.read_steps("e") == ()


def test_an_unstorable_event_leaves_the_step_unrecorded(store: SyncStore) -> None:
    """Events are encoded before the transaction: a bad one stops the whole write."""
    bad = [*events("fine"), NewEvent(type_name="tests:Bad", document={"x": float("nan")})]
    with pytest.raises(DocumentError, match="event 1 of the batch for session 's'"):
        store.record_step("e", "k", 1, session_id="s", events=bad)
    assert store.read_steps("e") == ()
    assert store.read("s") == ()


def test_a_saved_checkpoint_appends_its_events(store: SyncStore) -> None:
    """A checkpoint and the events that came with it land together."""
    saved = store.save_checkpoint(
        "e", round=2, status="done", document={}, session_id="s", events=events("executed")
    )
    assert saved.round == 2
    assert names(store, "s") == ["executed"]


def test_a_refused_checkpoint_appends_nothing(store: SyncStore) -> None:
    """A stale writer's checkpoint is refused, and its events with it."""
    store.save_checkpoint("e", round=3, status="running", document={}, session_id="s")
    with pytest.raises(CheckpointConflictError) as caught:
        store.save_checkpoint(
            "e", round=2, status="failed", document={}, session_id="s", events=events("stale")
        )
    assert (caught.value.round, caught.value.stored_round) == (2, 3)
    assert store.read("s") == ()


def test_racing_writers_of_one_step_append_one_set_of_events(backend: Backend) -> None:
    """Ten tasks record one key, each with its own event: the log gets exactly the winner's."""

    async def scenario() -> tuple[JSONValue, list[JSONValue]]:
        async with backend.store() as store:
            steps = await asyncio.gather(
                *(
                    store.record_step(
                        "e", "round:1/call:x", n, session_id="s", events=events(f"w{n}")
                    )
                    for n in range(10)
                )
            )
            logged = [event.document for event in await store.read("s")]
        assert len({step.document for step in steps}) == 1
        return steps[0].document, logged

    winner, logged = asyncio.run(scenario())
    assert logged == [{"name": f"w{winner}"}]


def test_a_process_killed_inside_a_step_write_leaves_neither_step_nor_events(
    backend: Backend,
) -> None:
    """SIGKILL after the step's rows and its events are written, before COMMIT: none remain."""
    with backend.sync() as store:
        store.record_step("e", "round:1/send", "kept", session_id="s", events=events("kept"))
    mark_writes(backend, "wink_events")
    code, out, error = finish(spawn("crash-step", backend.name, backend.location, "e", "s"))
    assert (code, out) == (-signal.SIGKILL, ""), error
    with backend.sync() as store:
        assert [step.key for step in store.read_steps("e")] == ["round:1/send"]
        assert names(store, "s") == ["kept"]
        again = store.record_step(
            "e", "round:1/call:a", "after", session_id="s", events=events("after")
        )
        assert again.document == "after"
        assert [event.seq for event in store.read("s")] == [1, 2]
