"""``SyncStore``: the store's calls for synchronous code.

Each call runs the wrapped store's coroutine on the library's one background event loop
(as ``Adapter.evaluate`` runs ``evaluate_async``), so a pooled async store keeps its
connections on one loop across calls. Do not also use the wrapped store from another
event loop.

The blocking methods are derived from the :class:`Store` protocol's, so their
signatures and documentation are the protocol's and cannot drift from it.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Self, overload

from weakincentives._closing import Closing
from weakincentives._portal import run_sync
from weakincentives.store._protocol import Store

__all__ = ["SyncStore"]


class _Blocking[**P, R]:
    """A :class:`SyncStore` method: the wrapped store's method of the same name, run to its end."""

    def __init__(self, method: Callable[Concatenate[Store, P], Coroutine[Any, Any, R]]) -> None:
        self._name = method.__name__
        self.__doc__ = method.__doc__

    def __repr__(self) -> str:
        return f"<blocking Store.{self._name}>"

    @overload
    def __get__(self, sync: None, owner: type[SyncStore]) -> Self: ...

    @overload
    def __get__(self, sync: SyncStore, owner: type[SyncStore]) -> Callable[P, R]: ...

    def __get__(self, sync: SyncStore | None, owner: type[SyncStore]) -> Self | Callable[P, R]:
        if sync is None:
            return self
        method: Callable[P, Coroutine[Any, Any, R]] = getattr(sync._store, self._name)

        def blocking(*args: P.args, **kwargs: P.kwargs) -> R:
            return run_sync(method(*args, **kwargs))

        return blocking


class SyncStore(Closing):
    """A :class:`Store` with blocking methods: ``with SyncStore(SQLiteStore(path)) as store:``.

    The methods mean exactly what the :class:`Store` methods of the same names mean.
    """

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def store(self) -> Store:
        """The asynchronous store underneath."""
        return self._store

    def __repr__(self) -> str:
        return f"SyncStore({self._store!r})"

    def __enter__(self) -> Self:
        self.open()
        return self

    def close(self) -> None:
        """Release the connections; the store cannot be used again. Idempotent."""
        run_sync(self._store.close())

    open = _Blocking(Store.open)
    append = _Blocking(Store.append)
    read = _Blocking(Store.read)
    list_sessions = _Blocking(Store.list_sessions)
    delete_session = _Blocking(Store.delete_session)
    save_checkpoint = _Blocking(Store.save_checkpoint)
    load_checkpoint = _Blocking(Store.load_checkpoint)
    list_evaluations = _Blocking(Store.list_evaluations)
    delete_evaluation = _Blocking(Store.delete_evaluation)
    record_step = _Blocking(Store.record_step)
    read_steps = _Blocking(Store.read_steps)
    request_approval = _Blocking(Store.request_approval)
    decide_approval = _Blocking(Store.decide_approval)
    read_approvals = _Blocking(Store.read_approvals)
    pending_approvals = _Blocking(Store.pending_approvals)
