"""Session storage: a small keyed store tools use to keep state in the session.

Tools reach it as ``context.session.storage``. Values live beside the session's
slices, so snapshots capture them and rollbacks restore them. A value holding
lists or dicts is copied when it is stored and when it is read (``serde.detached``),
so only ``set`` changes what is stored and a snapshot never changes; immutable
values (frozen dataclasses of tuples, strings, numbers) are kept without a copy.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType

from weakincentives.errors import SessionError
from weakincentives.serde import detached

__all__ = ["SessionStorage", "SessionStorageError"]

_KEY = re.compile(r"[a-z][a-z0-9_]*")


class SessionStorageError(SessionError):
    """A session storage call was misused: a bad key, a ``None`` value, or the wrong type."""

    key: str

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


class SessionStorage:
    """Typed, validated key/value state kept in a session.

    Keys are snake_case ASCII (``[a-z][a-z0-9_]*``) so they stay portable across
    serializers and logs. Reads name the type they expect and get an error, never
    a silent cast, when the stored value is something else. Every call is atomic.
    """

    __slots__ = ("_guard", "_items", "_lock")

    def __init__(self) -> None:
        """Create a standalone store (a session creates its own; see ``Session.storage``)."""
        self._lock = threading.RLock()
        self._items: dict[str, object] = {}
        self._guard: Callable[[], None] = _allow

    @classmethod
    def _attached(cls, *, lock: threading.RLock, guard: Callable[[], None]) -> SessionStorage:
        """A store sharing its session's lock; ``guard`` vetoes writes while reducers run."""
        storage = cls()
        storage._lock = lock
        storage._guard = guard
        return storage

    def get[T](self, key: str, type_: type[T]) -> T | None:
        """Return the value stored under ``key``, or None when nothing is stored there.

        Raises:
            SessionStorageError: ``key`` is not snake_case, ``type_`` cannot be
                checked with ``isinstance``, or the stored value is not a ``type_``.
        """
        _check_key(key)
        with self._lock:
            value = self._items.get(key)
        if value is None:
            return None
        try:
            if isinstance(value, type_):
                return detached(value)
        except TypeError:
            raise SessionStorageError(
                f"cannot check session storage key {key!r} against {type_!r}: "
                "pass a plain class such as list, not a parametrized alias such as list[int]",
                key=key,
            ) from None
        raise SessionStorageError(
            f"session storage key {key!r} holds {type(value).__qualname__}, "
            f"not {type_.__qualname__}",
            key=key,
        )

    def set(self, key: str, value: object) -> None:
        """Store ``value`` under ``key``, replacing any previous value.

        Raises:
            SessionStorageError: ``key`` is not snake_case or ``value`` is None
                (use ``delete`` to remove a key).
        """
        _check_key(key)
        if value is None:
            raise SessionStorageError(
                f"cannot store None under session storage key {key!r}; use delete({key!r})",
                key=key,
            )
        value = detached(value)
        with self._lock:
            self._guard()
            self._items[key] = value

    def delete(self, key: str) -> bool:
        """Remove ``key``; returns False when nothing was stored under it."""
        _check_key(key)
        with self._lock:
            self._guard()
            return self._items.pop(key, None) is not None

    def keys(self) -> tuple[str, ...]:
        """The keys currently stored, sorted."""
        with self._lock:
            return tuple(sorted(self._items))

    def __repr__(self) -> str:
        return f"SessionStorage(keys={self.keys()!r})"

    def _export(self) -> Mapping[str, object]:
        with self._lock:
            return MappingProxyType(dict(self._items))

    def _restore(self, items: Mapping[str, object]) -> None:
        with self._lock:
            self._items = dict(items)


def _check_key(key: str) -> None:
    if not _KEY.fullmatch(key):
        raise SessionStorageError(
            f"session storage key {key!r} is not snake_case ASCII: use lowercase letters, "
            "digits and underscores, starting with a letter (for example 'search_cursor')",
            key=key,
        )


def _allow() -> None:
    """The guard of a standalone store: writes are always allowed."""
