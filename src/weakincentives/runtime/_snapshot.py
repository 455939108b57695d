"""Session snapshots: the whole recorded state of a session as one immutable value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast
from uuid import UUID

from weakincentives.serde import DocumentKind, dump_document, load_document

__all__ = ["SNAPSHOT_DOCUMENT", "SessionSnapshot"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionSnapshot:
    """Every slice and every storage entry of one session at one moment.

    Snapshots share the recorded values with the session instead of copying
    them, which is safe because nobody else holds them: the session records copies of
    the lists and dicts in what it is given (events, storage values). Pass a
    snapshot to ``Session.rollback`` on the same session to restore it; two
    snapshots compare equal when they hold equal state. ``to_json``/``from_json``
    store one as a versioned document and read it back equal, in any process.
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

    def to_json(self) -> str:
        """This snapshot as a stored document: JSON text that ``from_json`` reads back equal.

        Slice types and every recorded value are written with their type names (see
        ``specs/SERDE.md``); a value that cannot be stored (a function, a class defined
        inside a function and never registered) is a SchemaError naming its path.
        """
        return dump_document(SNAPSHOT_DOCUMENT, self)

    @classmethod
    def from_json(cls, document: str | bytes) -> SessionSnapshot:
        """Read a snapshot ``to_json`` wrote, in this process or another.

        Raises ParseError for text that is not a snapshot document (with its path),
        UnreadableDocumentError for another kind or a format version this library cannot
        read, and UnknownTypeError for a recorded type that cannot be found (moved or
        renamed classes load again once registered with their old name as an alias).
        """
        return load_document(SNAPSHOT_DOCUMENT, document)


SNAPSHOT_DOCUMENT: DocumentKind[SessionSnapshot] = DocumentKind(
    name="weakincentives.session_snapshot", value_type=SessionSnapshot, version=1
)
"""The stored form of a :class:`SessionSnapshot`; its versions and upgrades live here."""
