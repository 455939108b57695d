"""Sessions: the typed record of everything that happened during an agent's work.

A session keeps *slices*: one tuple of values per slice type, oldest first. Events
arrive through :meth:`Session.apply` (directly or from an event bus) and reducers
fold them into slices. Applying an event is all-or-nothing, and the whole state
can be captured with :meth:`Session.snapshot` and restored with
:meth:`Session.rollback`.
"""

from __future__ import annotations

import threading
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast, overload
from uuid import UUID

from weakincentives.errors import SessionError
from weakincentives.prompt import SessionProtocol
from weakincentives.runtime._bus import EventBus, Subscription
from weakincentives.runtime._events import PromptExecuted, PromptRendered, ToolInvoked
from weakincentives.runtime._reducers import Reducer, append
from weakincentives.runtime._retention import Retention
from weakincentives.runtime._snapshot import SessionSnapshot
from weakincentives.runtime._storage import SessionStorage
from weakincentives.serde import detached

__all__ = ["Session", "SessionProtocol"]

type _AnyReducer = Callable[[tuple[object, ...], object], tuple[object, ...]]

_DETACHED_AT_SOURCE: frozenset[type[object]] = frozenset(
    {PromptExecuted, PromptRendered, ToolInvoked}
)
"""The library's events whose open values are copies already, made where they are built."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Registration:
    slice_type: type[object]
    reducer: _AnyReducer


class Session:
    """Records events as typed slices through reducers; thread-safe.

    An event whose type has no registered reducer is appended to the slice of
    its own type, so a session attached to a bus records everything published
    on it. Registering a reducer for an event type replaces that default for
    the type. Reducers are matched on the event's exact type.
    """

    __slots__ = (
        "_bus",
        "_lock",
        "_reducers",
        "_reducing",
        "_retention",
        "_session_id",
        "_slices",
        "_storage",
        "_subscription",
        "_tags",
        "_views",
    )

    def __init__(
        self,
        *,
        bus: EventBus | None = None,
        session_id: UUID | None = None,
        tags: Mapping[str, str] | None = None,
        retention: Retention | None = None,
    ) -> None:
        """Create an empty session, subscribed to every event on ``bus`` when one is given.

        ``retention`` caps how many values each slice keeps (default: the newest 10,000
        per slice, and no streamed ``TextDelta``s); see :class:`Retention`.
        """
        # Re-entrant so that a reducer can read the session (select, latest);
        # writes from inside a reducer are refused by ``_refuse_while_reducing``.
        self._lock = threading.RLock()
        self._session_id = uuid.uuid4() if session_id is None else session_id
        self._tags: Mapping[str, str] = MappingProxyType(dict(tags or {}))
        # Slices grow by appending in place, so recording N events costs O(N) rather
        # than O(N^2); ``_views`` caches the tuple each slice is read as. A slice starts
        # as a list (an empty deque costs about 760 bytes, paid per slice per session)
        # and becomes a bounded deque once it holds ``_SMALL_SLICE`` values or passes
        # its retention limit.
        self._retention = Retention() if retention is None else retention
        self._slices: dict[type[object], list[object] | deque[object]] = {}
        self._views: dict[type[object], tuple[object, ...]] = {}
        self._reducers: dict[type[object], tuple[_Registration, ...]] = {}
        self._reducing = False
        self._storage = SessionStorage._attached(lock=self._lock, guard=self._refuse_while_reducing)
        self._bus = bus
        self._subscription: Subscription | None = (
            None if bus is None else bus.subscribe(object, self.apply)
        )

    @property
    def session_id(self) -> UUID:
        """The session's identity; snapshots carry it so they restore only here."""
        return self._session_id

    @property
    def bus(self) -> EventBus | None:
        """The bus this session records from, if any."""
        return self._bus

    @property
    def tags(self) -> Mapping[str, str]:
        """Read-only labels given at construction (user, experiment, run)."""
        return self._tags

    @property
    def retention(self) -> Retention:
        """How many values each slice keeps."""
        return self._retention

    @property
    def storage(self) -> SessionStorage:
        """Key/value state tools keep in the session; included in snapshots."""
        return self._storage

    @overload
    def register_reducer[E](self, event_type: type[E], reducer: Reducer[E, E]) -> None: ...

    @overload
    def register_reducer[E, S](
        self, event_type: type[E], reducer: Reducer[E, S], *, slice_type: type[S]
    ) -> None: ...

    def register_reducer[E, S](
        self,
        event_type: type[E],
        reducer: Reducer[E, S],
        *,
        slice_type: type[S] | None = None,
    ) -> None:
        """Fold events of exactly ``event_type`` into the slice of ``slice_type`` with ``reducer``.

        ``slice_type`` defaults to ``event_type``. Several reducers may be
        registered for one event type; they run in registration order, and two
        targeting the same slice are chained (the second sees the first's result).
        The first registration for an event type replaces the default ``append``.
        """
        target = cast(type[object], event_type if slice_type is None else slice_type)
        registration = _Registration(slice_type=target, reducer=cast(_AnyReducer, reducer))
        with self._lock:
            self._refuse_while_reducing("register_reducer")
            key = cast(type[object], event_type)
            self._reducers[key] = (*self._reducers.get(key, ()), registration)

    def apply(self, event: object) -> None:
        """Run the reducers for ``event`` and commit their results together.

        The session records ``event`` as it is now: an event holding lists or dicts
        is recorded as a copy (``serde.detached``), so changing them later changes
        nothing recorded.

        Every affected slice is computed first and committed only if all
        reducers succeed. If a reducer raises, the session is left exactly as it
        was and the exception propagates (a bus reports it as a handler failure).

        Raises:
            SessionError: a reducer returned something other than a tuple, or
                ``apply`` was called from inside a reducer.
        """
        event_type = type(event)
        if event_type not in _DETACHED_AT_SOURCE:
            # The publisher keeps its event: the session records a copy of any list or
            # dict in it (none is made for an event typed with immutable values only).
            event = detached(event)
        with self._lock:
            if self._reducing:
                self._refuse_while_reducing("apply")
            registrations = self._reducers.get(event_type)
            if registrations is None:  # the default: append to the event type's own slice
                self._append(event_type, event)
                return
            if all(registration.reducer is append for registration in registrations):
                # Appending cannot fail, so there is nothing to compute before committing.
                for registration in registrations:
                    self._append(registration.slice_type, event)
                return
            pending: dict[type[object], tuple[object, ...]] = {}
            self._reducing = True
            try:
                for registration in registrations:
                    slice_type = registration.slice_type
                    current = (
                        pending[slice_type] if slice_type in pending else self._view(slice_type)
                    )
                    updated = registration.reducer(current, event)
                    if not isinstance(updated, tuple):
                        raise SessionError(
                            f"reducer {_name(registration.reducer)} returned "
                            f"{type(updated).__qualname__} for {event_type.__qualname__} events "
                            f"into the {slice_type.__qualname__} slice; reducers must return "
                            "a tuple"
                        )
                    pending[slice_type] = updated
            finally:
                self._reducing = False
            for slice_type, reduced in pending.items():
                kept = self._kept(slice_type, reduced)
                if kept:
                    limit = self._retention.limit_for(slice_type)
                    self._slices[slice_type] = _stored(kept, limit)
                    self._views[slice_type] = kept
                else:
                    self._slices.pop(slice_type, None)
                    self._views.pop(slice_type, None)

    def select[S](self, slice_type: type[S]) -> tuple[S, ...]:
        """Every value in the slice of ``slice_type``, oldest first (empty when none)."""
        with self._lock:
            values = self._view(cast(type[object], slice_type))
        # Only reducers typed against ``slice_type`` write to its slice.
        return cast(tuple[S, ...], values)

    def select_where[S](self, slice_type: type[S], predicate: Callable[[S], bool]) -> tuple[S, ...]:
        """The values of the ``slice_type`` slice for which ``predicate`` is true, in order."""
        return tuple(value for value in self.select(slice_type) if predicate(value))

    def latest[S](self, slice_type: type[S]) -> S | None:
        """The newest value in the slice of ``slice_type``, or None when it is empty."""
        values = self.select(slice_type)
        return values[-1] if values else None

    def snapshot(self) -> SessionSnapshot:
        """Capture every slice and storage entry as one immutable value."""
        with self._lock:
            return SessionSnapshot(
                session_id=self._session_id,
                slices=MappingProxyType({key: self._view(key) for key in self._slices}),
                storage=self._storage._export(),
            )

    def rollback(self, snapshot: SessionSnapshot) -> None:
        """Restore the slices and storage captured in ``snapshot``; reducers are kept.

        Raises:
            SessionError: ``snapshot`` was taken from another session, or
                ``rollback`` was called from inside a reducer.
        """
        if snapshot.session_id != self._session_id:
            raise SessionError(
                f"cannot roll back session {self._session_id} to a snapshot of session "
                f"{snapshot.session_id}; snapshots only restore the session they came from"
            )
        with self._lock:
            self._refuse_while_reducing("rollback")
            self._slices = {
                key: _stored(values, self._retention.limit_for(key))
                for key, values in snapshot.slices.items()
            }
            self._views = {}
            self._storage._restore(snapshot.storage)

    def reset(self) -> None:
        """Empty every slice and the storage; reducers and the bus subscription are kept."""
        with self._lock:
            self._refuse_while_reducing("reset")
            self._slices = {}
            self._views = {}
            self._storage._restore({})

    def close(self) -> None:
        """Stop recording events from the bus; recorded state stays readable. Idempotent."""
        with self._lock:
            subscription, self._subscription = self._subscription, None
        if subscription is not None and self._bus is not None:
            self._bus.unsubscribe(subscription)

    def __repr__(self) -> str:
        with self._lock:
            sizes = ", ".join(
                f"{slice_type.__qualname__}={len(values)}"
                for slice_type, values in self._slices.items()
            )
        return f"Session(session_id={self._session_id}, slices={{{sizes}}})"

    def _kept(self, slice_type: type[object], values: tuple[object, ...]) -> tuple[object, ...]:
        """``values`` cut to the newest the retention allows."""
        limit = self._retention.limit_for(slice_type)
        if limit is None or len(values) <= limit:
            return values
        return values[len(values) - limit :]

    def _view(self, slice_type: type[object]) -> tuple[object, ...]:
        """The slice as a tuple, built once per change; callers hold the lock."""
        view = self._views.get(slice_type)
        if view is None:
            view = tuple(self._slices.get(slice_type, ()))
            if view:
                self._views[slice_type] = view
        return view

    def _append(self, slice_type: type[object], value: object) -> None:
        """Add ``value`` to the slice, within its retention limit (caller holds the lock)."""
        values = self._slices.get(slice_type)
        limit = self._retention.limit_for(slice_type)
        if values is None:
            if limit == 0:
                return
            values = self._slices[slice_type] = []
        values.append(value)
        if isinstance(values, list) and not _fits_list(len(values), limit):
            self._slices[slice_type] = deque(values, maxlen=limit)
        if self._views:
            self._views.pop(slice_type, None)

    def _refuse_while_reducing(self, operation: str = "storage write") -> None:
        # Callers hold the lock, so ``_reducing`` can only be true here when the
        # current thread is inside one of this session's reducers.
        if self._reducing:
            raise SessionError(
                f"{operation} was called on session {self._session_id} while a reducer "
                "was running; reducers must be pure and return the new slice instead"
            )


_SMALL_SLICE = 64
"""Values a slice holds as a list before it becomes a bounded deque."""


def _fits_list(size: int, limit: int | None) -> bool:
    """Whether a slice of ``size`` values stays a list: small, and within its limit."""
    return size < _SMALL_SLICE and (limit is None or size <= limit)


def _stored(values: tuple[object, ...], limit: int | None) -> list[object] | deque[object]:
    """``values`` as a slice's storage: a list while small, else a deque bounded by ``limit``."""
    if _fits_list(len(values), limit):
        return list(values)
    return deque(values, maxlen=limit)


def _name(reducer: Callable[..., object]) -> str:
    return getattr(reducer, "__qualname__", None) or repr(reducer)
