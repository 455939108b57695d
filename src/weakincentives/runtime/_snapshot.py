"""Session snapshots: the whole recorded state of a session as one immutable value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast
from uuid import UUID

__all__ = ["SessionSnapshot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
    """Every slice and every storage entry of one session at one moment.

    Snapshots share the recorded values with the session instead of copying
    them, which is safe because slices are tuples of immutable events. Pass a
    snapshot to ``Session.rollback`` on the same session to restore it; two
    snapshots compare equal when they hold equal state.
    """

    session_id: UUID
    """The session this snapshot was taken from; rollback checks it."""
    slices: Mapping[type[object], tuple[object, ...]]
    """Each non-empty slice by its slice type, values oldest first."""
    storage: Mapping[str, object]
    """The session storage entries by key."""

    def select[S](self, slice_type: type[S]) -> tuple[S, ...]:
        """The slice of ``slice_type`` as it was when the snapshot was taken."""
        # Slices are only ever written by reducers typed against their slice
        # type, so the values stored under ``slice_type`` are ``S`` instances.
        return cast(tuple[S, ...], self.slices.get(slice_type, ()))
