"""Reducers: pure functions that fold one event into one session slice.

A reducer receives the slice as it stands (a tuple, oldest first) and the event,
and returns the new slice. It must not mutate anything or touch the session; the
session decides when the result is committed.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

__all__ = ["Reducer", "append", "replace_latest", "upsert_by"]

type Reducer[E, S] = Callable[[tuple[S, ...], E], tuple[S, ...]]
"""Fold an event of type ``E`` into a slice of ``S`` values, returning the new slice."""


def append[T](slice_: tuple[T, ...], event: T) -> tuple[T, ...]:
    """Keep every event, oldest first (the session's default for unregistered types)."""
    return (*slice_, event)


def replace_latest[T](slice_: tuple[T, ...], event: T) -> tuple[T, ...]:
    """Keep only the newest event, for state where only the current value matters."""
    del slice_
    return (event,)


def upsert_by[T](key: Callable[[T], Hashable]) -> Reducer[T, T]:
    """Build a reducer that replaces the item with the event's key, or appends a new one.

    A replaced item keeps its position, so the slice stays in first-seen order.
    If several items already share the key, all of them are replaced by the event
    at the position of the first.
    """

    def upsert(slice_: tuple[T, ...], event: T) -> tuple[T, ...]:
        wanted = key(event)
        updated: list[T] = []
        found = False
        for item in slice_:
            if key(item) != wanted:
                updated.append(item)
            elif not found:
                updated.append(event)
                found = True
        if not found:
            updated.append(event)
        return tuple(updated)

    upsert.__qualname__ = f"upsert_by({getattr(key, '__qualname__', repr(key))})"
    return upsert
