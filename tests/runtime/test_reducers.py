"""Behaviour of the built-in reducers."""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.runtime import append, replace_latest, upsert_by
from weakincentives.runtime._reducers import Reducer


@dataclass(frozen=True, slots=True)
class Item:
    key: str
    value: int


def item_key(item: Item) -> str:
    return item.key


def test_append_adds_the_event_at_the_end() -> None:
    """append keeps every earlier value and puts the event last."""
    assert append((Item("a", 1),), Item("b", 2)) == (Item("a", 1), Item("b", 2))


def test_replace_latest_keeps_only_the_event() -> None:
    """replace_latest discards the previous values."""
    assert replace_latest((Item("a", 1), Item("b", 2)), Item("c", 3)) == (Item("c", 3),)


def test_upsert_by_replaces_the_matching_item_in_place() -> None:
    """An event with a known key replaces that item and keeps its position."""
    reducer: Reducer[Item, Item] = upsert_by(item_key)
    before = (Item("a", 1), Item("b", 2), Item("c", 3))
    assert reducer(before, Item("b", 20)) == (Item("a", 1), Item("b", 20), Item("c", 3))


def test_upsert_by_appends_an_unknown_key() -> None:
    """An event with a new key is appended."""
    reducer: Reducer[Item, Item] = upsert_by(item_key)
    assert reducer((Item("a", 1),), Item("z", 9)) == (Item("a", 1), Item("z", 9))


def test_upsert_by_collapses_duplicate_keys_into_the_first_position() -> None:
    """If several items share the key, the event replaces them all where the first was."""
    reducer: Reducer[Item, Item] = upsert_by(item_key)
    before = (Item("a", 1), Item("b", 2), Item("a", 3))
    assert reducer(before, Item("a", 4)) == (Item("a", 4), Item("b", 2))


def test_upsert_by_reducer_is_named_after_its_key() -> None:
    """The built reducer's name mentions the key function, for error messages and logs."""
    assert upsert_by(item_key).__qualname__ == "upsert_by(item_key)"
