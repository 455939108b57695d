"""Subscripts that reach the constructor: ``PromptTemplate[Answer](...)`` validates ``Answer``.

Python's own generic aliases call the class first and only then attach the subscript
(as ``__orig_class__``), so a constructor never sees it and an invalid type argument
surfaces at first use. :class:`SubscriptAlias` hands the arguments to the constructor
through a context variable for the duration of the call, so the class can analyse and
validate them while it is built, and stay immutable afterwards.
"""

from __future__ import annotations

import types
from contextvars import ContextVar
from typing import Any

__all__ = ["SubscriptAlias", "SubscriptedConstruction", "subscript_args"]

_CURRENT: ContextVar[tuple[object, tuple[object, ...]] | None] = ContextVar(
    "weakincentives_subscript", default=None
)


class SubscriptAlias(types.GenericAlias):
    """``Cls[Args]``: a normal generic alias whose call passes ``Args`` to ``Cls.__init__``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        origin: Any = self.__origin__
        token = _CURRENT.set((origin, self.__args__))
        try:
            # Built directly rather than through GenericAlias.__call__, which would also
            # try to set ``__orig_class__`` on an instance that is frozen.
            return origin(*args, **kwargs)
        finally:
            _CURRENT.reset(token)


def subscript_args(cls: type[Any]) -> tuple[object, ...] | None:
    """The type arguments ``cls`` is being constructed with, or None without a subscript.

    Only a construction of exactly ``cls`` sees them, so a class built inside another's
    constructor (a template inside ``Prompt[Answer](ns=...)``) is not confused.
    """
    current = _CURRENT.get()
    if current is None or current[0] is not cls:
        return None
    return current[1]


class SubscriptedConstruction:
    """Base of classes whose subscript reaches the constructor: ``Cls[Args](...)``.

    The constructor reads the arguments with :func:`subscript_args`.
    """

    __slots__ = ()

    def __class_getitem__(cls, item: object) -> SubscriptAlias:
        """``Cls[Args]``: an alias whose call hands ``Args`` to the constructor."""
        return SubscriptAlias(cls, item)
