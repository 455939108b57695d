"""Property tests: rollback restores exactly, and failed events leave no trace."""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never
from uuid import UUID

import pytest
from hypothesis import given
from hypothesis import strategies as st

from weakincentives.runtime import Session, replace_latest, upsert_by

SESSION_ID = UUID("00000000-0000-4000-8000-00000000000a")


@dataclass(frozen=True, slots=True)
class Note:
    text: str


@dataclass(frozen=True, slots=True)
class Click:
    target: str


@dataclass(frozen=True, slots=True)
class Item:
    key: str
    value: int


@dataclass(frozen=True, slots=True)
class Poison:
    """An event whose second reducer always raises."""

    value: int


@dataclass(frozen=True, slots=True)
class Tally:
    count: int


@dataclass(frozen=True, slots=True)
class StoreSet:
    key: str
    value: int


@dataclass(frozen=True, slots=True)
class StoreDelete:
    key: str


type Operation = Note | Click | Item | Poison | StoreSet | StoreDelete

_short = st.text(alphabet="abc", max_size=3)
_keys = st.sampled_from(["alpha", "beta", "gamma"])
operations: st.SearchStrategy[Operation] = st.one_of(
    st.builds(Note, _short),
    st.builds(Click, _short),
    st.builds(Item, _keys, st.integers(-5, 5)),
    st.builds(Poison, st.integers(0, 3)),
    st.builds(StoreSet, _keys, st.integers(-5, 5)),
    st.builds(StoreDelete, _keys),
)


def count_notes(slice_: tuple[Tally, ...], event: Note) -> tuple[Tally, ...]:
    return (Tally((slice_[-1].count if slice_ else 0) + 1),)


def count_poison(slice_: tuple[Tally, ...], event: Poison) -> tuple[Tally, ...]:
    return (Tally(-1),)


def reject_poison(slice_: tuple[Poison, ...], event: Poison) -> tuple[Poison, ...]:
    raise ValueError("poison")


def item_key(item: Item) -> str:
    return item.key


def new_session() -> Session:
    session = Session(session_id=SESSION_ID)
    session.register_reducer(Note, count_notes, slice_type=Tally)
    session.register_reducer(Click, replace_latest)
    session.register_reducer(Item, upsert_by(item_key))
    session.register_reducer(Poison, count_poison, slice_type=Tally)
    session.register_reducer(Poison, reject_poison)
    return session


def run(session: Session, ops: list[Operation]) -> None:
    for op in ops:
        match op:
            case StoreSet(key=key, value=value):
                session.storage.set(key, value)
            case StoreDelete(key=key):
                session.storage.delete(key)
            case Poison():
                with pytest.raises(ValueError, match="poison"):
                    session.apply(op)
            case Note() | Click() | Item():
                session.apply(op)
            case _:
                assert_never(op)


@given(before=st.lists(operations, max_size=25), after=st.lists(operations, max_size=25))
def test_rollback_restores_exactly_the_snapshot_state(
    before: list[Operation], after: list[Operation]
) -> None:
    """Whatever happens after a snapshot, rolling back to it restores that exact state."""
    session = new_session()
    run(session, before)
    snapshot = session.snapshot()
    run(session, after)
    session.rollback(snapshot)
    assert session.snapshot() == snapshot
    replay = new_session()
    run(replay, before)
    assert replay.snapshot() == snapshot
    for slice_type in (Note, Click, Item, Poison, Tally):
        assert session.select(slice_type) == snapshot.select(slice_type)


@given(ops=st.lists(operations, max_size=40))
def test_failed_events_leave_no_trace(ops: list[Operation]) -> None:
    """A session that saw poison events ends equal to one that never saw them."""
    with_poison = new_session()
    run(with_poison, ops)
    without_poison = new_session()
    run(without_poison, [op for op in ops if not isinstance(op, Poison)])
    assert with_poison.snapshot() == without_poison.snapshot()
    assert with_poison.select(Poison) == ()
