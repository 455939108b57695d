"""Behaviour of Session: slices, reducers, atomicity, snapshots and the bus link."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import cast
from uuid import UUID

import pytest

from tests.runtime._concurrency import run_threads
from weakincentives.errors import SessionError
from weakincentives.prompt import SessionProtocol
from weakincentives.runtime import (
    InProcessEventBus,
    Session,
    SessionSnapshot,
    replace_latest,
    upsert_by,
)

SESSION_ID = UUID("00000000-0000-4000-8000-000000000001")
OTHER_ID = UUID("00000000-0000-4000-8000-000000000002")


@dataclass(frozen=True, slots=True)
class Note:
    text: str


@dataclass(frozen=True, slots=True)
class UrgentNote(Note):
    pass


@dataclass(frozen=True, slots=True)
class Click:
    target: str


@dataclass(frozen=True, slots=True)
class Tally:
    count: int


@dataclass(frozen=True, slots=True)
class Audit:
    line: str


@pytest.fixture
def session() -> Session:
    return Session(session_id=SESSION_ID)


def count_notes(slice_: tuple[Tally, ...], event: Note) -> tuple[Tally, ...]:
    previous = slice_[-1].count if slice_ else 0
    return (Tally(previous + 1),)


def audit_note(slice_: tuple[Audit, ...], event: Note) -> tuple[Audit, ...]:
    return (*slice_, Audit(f"note: {event.text}"))


def reject_note(slice_: tuple[Audit, ...], event: Note) -> tuple[Audit, ...]:
    raise ValueError(f"rejected {event.text}")


class TestDefaults:
    def test_unregistered_events_append_to_their_own_slice(self, session: Session) -> None:
        """Without reducers every event lands, in order, in the slice of its exact type."""
        session.apply(Note("a"))
        session.apply(Click("x"))
        session.apply(Note("b"))
        assert session.select(Note) == (Note("a"), Note("b"))
        assert session.select(Click) == (Click("x"),)

    def test_select_of_an_unknown_slice_is_empty(self, session: Session) -> None:
        """Selecting a slice nothing was recorded into gives an empty tuple."""
        assert session.select(Tally) == ()
        assert session.latest(Tally) is None

    def test_latest_returns_the_newest_value(self, session: Session) -> None:
        """latest gives the last value appended to a slice."""
        session.apply(Note("old"))
        session.apply(Note("new"))
        assert session.latest(Note) == Note("new")

    def test_select_where_filters_in_order(self, session: Session) -> None:
        """select_where keeps the values the predicate accepts, oldest first."""
        for text in ("keep 1", "drop", "keep 2"):
            session.apply(Note(text))
        kept = session.select_where(Note, lambda note: note.text.startswith("keep"))
        assert kept == (Note("keep 1"), Note("keep 2"))

    def test_subclass_events_get_their_own_slice(self, session: Session) -> None:
        """Slices and reducers key on the exact event type, not its base classes."""
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.apply(UrgentNote("fire"))
        assert session.select(UrgentNote) == (UrgentNote("fire"),)
        assert session.select(Note) == ()
        assert session.select(Tally) == ()

    def test_identity_and_tags_come_from_the_constructor(self) -> None:
        """The session keeps the injected id and a read-only copy of its tags."""
        tags = {"user": "ada"}
        session = Session(session_id=SESSION_ID, tags=tags)
        tags["user"] = "changed"
        assert session.session_id == SESSION_ID
        assert dict(session.tags) == {"user": "ada"}
        assert session.bus is None
        with pytest.raises(TypeError):
            cast("dict[str, str]", session.tags)["user"] = "x"

    def test_a_fresh_session_gets_a_random_id(self) -> None:
        """Sessions created without an id get distinct UUID4 ids."""
        first, second = Session(), Session()
        assert first.session_id != second.session_id
        assert first.session_id.version == 4

    def test_session_satisfies_the_protocol_tools_use(self, session: Session) -> None:
        """A Session can be passed where ToolContext expects a SessionProtocol."""
        protocol: SessionProtocol = session
        protocol.apply(Note("via protocol"))
        assert protocol.select(Note) == (Note("via protocol"),)
        assert protocol.latest(Note) == Note("via protocol")
        assert protocol.session_id == SESSION_ID
        assert protocol.storage is session.storage

    def test_repr_names_the_slices_and_their_sizes(self, session: Session) -> None:
        """The repr shows the id and how many values each slice holds."""
        session.apply(Note("a"))
        session.apply(Note("b"))
        session.apply(Click("x"))
        assert repr(session) == f"Session(session_id={SESSION_ID}, slices={{Note=2, Click=1}})"


class TestReducers:
    def test_registered_reducer_replaces_the_default_append(self, session: Session) -> None:
        """After registering replace_latest only the newest event of that type is kept."""
        session.register_reducer(Note, replace_latest)
        session.apply(Note("a"))
        session.apply(Note("b"))
        session.apply(Click("x"))
        session.apply(Click("y"))
        assert session.select(Note) == (Note("b"),)
        assert session.select(Click) == (Click("x"), Click("y"))

    def test_reducer_may_target_another_slice_type(self, session: Session) -> None:
        """With slice_type, events fold into a slice of a different type only."""
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.apply(Note("a"))
        session.apply(Note("b"))
        assert session.select(Tally) == (Tally(2),)
        assert session.select(Note) == ()

    def test_several_reducers_for_one_event_type_all_run(self, session: Session) -> None:
        """Reducers registered for one event type each update their own slice."""
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.register_reducer(Note, audit_note, slice_type=Audit)
        session.apply(Note("hello"))
        assert session.select(Tally) == (Tally(1),)
        assert session.select(Audit) == (Audit("note: hello"),)

    def test_reducers_on_the_same_slice_are_chained(self, session: Session) -> None:
        """A second reducer for the same slice sees the first reducer's result."""
        session.register_reducer(Note, upsert_by(_note_key))
        session.register_reducer(Note, _truncate_to_two)
        for text in ("a1", "b1", "a2", "c1"):
            session.apply(Note(text))
        assert session.select(Note) == (Note("b1"), Note("c1"))

    def test_reducer_returning_an_empty_tuple_drops_the_slice(self, session: Session) -> None:
        """An emptied slice disappears from snapshots, as if never recorded."""
        session.apply(Note("a"))
        session.register_reducer(Note, _clear)
        session.apply(Note("b"))
        assert session.select(Note) == ()
        assert dict(session.snapshot().slices) == {}

    def test_reducers_may_read_the_session(self, session: Session) -> None:
        """select and latest work from inside a reducer."""
        session.apply(Click("seen"))

        def note_clicks(slice_: tuple[Audit, ...], event: Note) -> tuple[Audit, ...]:
            return (Audit(f"{event.text} after {len(session.select(Click))} clicks"),)

        session.register_reducer(Note, note_clicks, slice_type=Audit)
        session.apply(Note("n"))
        assert session.select(Audit) == (Audit("n after 1 clicks"),)


class TestAtomicity:
    def test_failing_reducer_leaves_the_session_unchanged(self, session: Session) -> None:
        """If any reducer raises, no slice changes and the error propagates from apply."""
        session.apply(Click("before"))
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.register_reducer(Note, audit_note, slice_type=Audit)
        session.apply(Note("ok"))
        before = session.snapshot()
        session.register_reducer(Note, reject_note, slice_type=Audit)
        with pytest.raises(ValueError, match="rejected bad"):
            session.apply(Note("bad"))
        assert session.snapshot() == before
        assert session.select(Tally) == (Tally(1),)

    def test_failing_reducer_is_reported_by_the_bus(self) -> None:
        """Through the bus, a reducer failure is a handler failure and the session is unchanged."""
        bus = InProcessEventBus()
        session = Session(bus=bus, session_id=SESSION_ID)
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.register_reducer(Note, reject_note, slice_type=Audit)
        result = bus.publish(Note("bad"))
        assert result.handlers_invoked == 1
        assert [type(failure.error) for failure in result.errors] == [ValueError]
        assert session.select(Tally) == ()

    def test_reducer_returning_a_list_is_refused(self, session: Session) -> None:
        """A reducer must return a tuple; anything else is a SessionError and nothing commits."""

        def listy(slice_: tuple[Note, ...], event: Note) -> tuple[Note, ...]:
            return cast("tuple[Note, ...]", [*slice_, event])  # the mistake under test

        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.register_reducer(Note, listy)
        with pytest.raises(
            SessionError, match=r"reducer .*listy returned list for Note events into the Note slice"
        ):
            session.apply(Note("a"))
        assert session.select(Tally) == ()

    @pytest.mark.parametrize("operation", ["apply", "rollback", "reset", "register_reducer"])
    def test_reducers_cannot_write_to_the_session(self, session: Session, operation: str) -> None:
        """Mutating the session from inside a reducer raises and commits nothing."""
        snapshot = session.snapshot()

        def meddle(slice_: tuple[Audit, ...], event: Note) -> tuple[Audit, ...]:
            if operation == "apply":
                session.apply(Click("nested"))
            elif operation == "rollback":
                session.rollback(snapshot)
            elif operation == "reset":
                session.reset()
            else:
                session.register_reducer(Click, replace_latest)
            return (Audit("unreachable"),)

        session.register_reducer(Note, meddle, slice_type=Audit)
        with pytest.raises(SessionError, match=f"{operation} was called on session .* reducer"):
            session.apply(Note("a"))
        assert session.snapshot() == snapshot
        session.apply(Click("after"))
        assert session.select(Click) == (Click("after"),)

    def test_reducers_cannot_write_storage(self, session: Session) -> None:
        """Storage writes from inside a reducer raise, keeping reducers pure."""

        def meddle(slice_: tuple[Note, ...], event: Note) -> tuple[Note, ...]:
            session.storage.set("cursor", 1)
            return (event,)

        session.register_reducer(Note, meddle)
        with pytest.raises(SessionError, match="storage write was called on session"):
            session.apply(Note("a"))
        assert session.storage.keys() == ()


class TestSnapshots:
    def test_snapshot_is_an_immutable_value(self, session: Session) -> None:
        """Later events do not change a snapshot, and its mappings are read-only."""
        session.apply(Note("a"))
        session.storage.set("cursor", 3)
        snapshot = session.snapshot()
        session.apply(Note("b"))
        session.storage.set("cursor", 4)
        assert snapshot == SessionSnapshot(
            session_id=SESSION_ID, slices={Note: (Note("a"),)}, storage={"cursor": 3}
        )
        assert snapshot.select(Note) == (Note("a"),)
        assert snapshot.select(Click) == ()
        with pytest.raises(TypeError):
            cast("dict[type[object], tuple[object, ...]]", snapshot.slices)[Click] = ()
        with pytest.raises(TypeError):
            cast("dict[str, object]", snapshot.storage)["cursor"] = 5

    def test_rollback_restores_slices_and_storage(self, session: Session) -> None:
        """Rolling back to a snapshot restores exactly its slices and storage entries."""
        session.register_reducer(Note, count_notes, slice_type=Tally)
        session.apply(Note("a"))
        session.apply(Click("x"))
        session.storage.set("cursor", "page-2")
        snapshot = session.snapshot()
        session.apply(Note("b"))
        session.apply(Audit("new slice"))
        session.storage.set("cursor", "page-3")
        session.storage.set("extra", 1)
        session.rollback(snapshot)
        assert session.snapshot() == snapshot
        assert session.select(Tally) == (Tally(1),)
        assert session.select(Audit) == ()
        assert session.storage.get("cursor", str) == "page-2"
        assert session.storage.keys() == ("cursor",)

    def test_rollback_keeps_reducers(self, session: Session) -> None:
        """Rollback restores data only; registered reducers keep working afterwards."""
        session.register_reducer(Note, count_notes, slice_type=Tally)
        snapshot = session.snapshot()
        session.apply(Note("a"))
        session.rollback(snapshot)
        session.apply(Note("b"))
        assert session.select(Tally) == (Tally(1),)

    def test_rollback_to_a_foreign_snapshot_is_refused(self, session: Session) -> None:
        """A snapshot from another session raises SessionError and changes nothing."""
        other = Session(session_id=OTHER_ID)
        other.apply(Note("foreign"))
        session.apply(Note("mine"))
        with pytest.raises(
            SessionError,
            match=f"cannot roll back session {SESSION_ID} to a snapshot of session {OTHER_ID}",
        ):
            session.rollback(other.snapshot())
        assert session.select(Note) == (Note("mine"),)

    def test_reset_clears_data_but_keeps_reducers_and_bus(self) -> None:
        """reset empties slices and storage; reducers and the bus subscription remain."""
        bus = InProcessEventBus()
        session = Session(bus=bus, session_id=SESSION_ID)
        session.register_reducer(Note, count_notes, slice_type=Tally)
        bus.publish(Note("a"))
        session.storage.set("cursor", 1)
        session.reset()
        assert session.snapshot() == SessionSnapshot(session_id=SESSION_ID, slices={}, storage={})
        bus.publish(Note("b"))
        assert session.select(Tally) == (Tally(1),)


class TestBusLink:
    def test_session_records_everything_published(self) -> None:
        """A session given a bus applies every event published on it."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        result = bus.publish(Note("a"))
        bus.publish(Click("x"))
        assert result.ok is True
        assert result.handlers_invoked == 1
        assert session.bus is bus
        assert session.select(Note) == (Note("a"),)
        assert session.select(Click) == (Click("x"),)

    def test_close_stops_recording_and_is_idempotent(self) -> None:
        """After close the session ignores the bus; closing again is harmless."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        bus.publish(Note("a"))
        session.close()
        session.close()
        assert bus.publish(Note("b")).handlers_invoked == 0
        assert session.select(Note) == (Note("a"),)

    def test_close_without_a_bus_does_nothing(self, session: Session) -> None:
        """Closing a session that never had a bus keeps its data."""
        session.apply(Note("a"))
        session.close()
        assert session.select(Note) == (Note("a"),)


class TestConcurrency:
    def test_threads_publishing_into_a_session_lose_nothing(self) -> None:
        """Events published from many threads are all recorded, and counters are exact."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        session.register_reducer(Note, count_notes, slice_type=Tally)
        workers, per_worker = 8, 250
        barrier = threading.Barrier(workers)

        def publish(index: int) -> None:
            barrier.wait()
            for number in range(per_worker):
                bus.publish(Click(f"{index}-{number}"))
                bus.publish(Note(f"{index}-{number}"))

        run_threads(publish, workers)
        clicks = session.select(Click)
        assert len(clicks) == workers * per_worker
        assert len(set(clicks)) == workers * per_worker
        assert session.select(Tally) == (Tally(workers * per_worker),)

    def test_snapshots_never_see_half_applied_events(self) -> None:
        """Two slices updated by one event always have equal sizes in any snapshot."""
        session = Session()
        session.register_reducer(Note, audit_note, slice_type=Audit)
        session.register_reducer(Note, _append_note)
        writers, per_writer = 4, 200
        barrier = threading.Barrier(writers + 1)
        done = threading.Event()
        lock = threading.Lock()
        finished: list[int] = []
        mismatches: list[tuple[int, int]] = []

        def work(index: int) -> None:
            barrier.wait()
            if index == writers:
                while not done.is_set():
                    snapshot = session.snapshot()
                    sizes = (len(snapshot.select(Note)), len(snapshot.select(Audit)))
                    if sizes[0] != sizes[1]:
                        mismatches.append(sizes)
                return
            try:
                for number in range(per_writer):
                    session.apply(Note(f"{index}-{number}"))
            finally:
                with lock:
                    finished.append(index)
                    if len(finished) == writers:
                        done.set()

        run_threads(work, writers + 1)
        assert mismatches == []
        assert len(session.select(Audit)) == writers * per_writer


def _note_key(note: Note) -> str:
    return note.text[0]


def _truncate_to_two(slice_: tuple[Note, ...], event: Note) -> tuple[Note, ...]:
    return slice_[-2:]


def _clear(slice_: tuple[Note, ...], event: Note) -> tuple[Note, ...]:
    return ()


def _append_note(slice_: tuple[Note, ...], event: Note) -> tuple[Note, ...]:
    return (*slice_, event)
