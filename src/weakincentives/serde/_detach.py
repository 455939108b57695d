"""Copies of values for the record: nothing recorded shares a container with anyone.

The library records values it does not own: the params a handler received, the value
it returned, the structured output handed to the caller, an event a user published.
Whoever holds the original may change a list or a dict in it afterwards; the record
must not change with it. :func:`detached` returns a value equal to its argument that
shares no mutable container with it, and the argument itself when nothing in it can
change, which is the common case and costs one dictionary lookup per value: a frozen
dataclass whose fields are all typed with immutable types (strings, numbers, tuples,
frozensets, enums, other such dataclasses) is *settled*, learnt once per class from
serde's type model.

What is copied: ``list``, ``dict``, ``set``, ``bytearray`` and ``MappingProxyType``
(rebuilt, items detached); ``tuple``, ``frozenset`` and frozen dataclasses (rebuilt
only when an item changed); dataclasses that are not frozen (always, since their
fields can be reassigned). Any other object is kept as it is: recorded values are
serde values (``specs/SERDE.md``), and an object serde does not know is the
caller's to keep still.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from types import MappingProxyType, NoneType
from typing import TYPE_CHECKING, cast
from uuid import UUID

from weakincentives.errors import SerdeError
from weakincentives.serde._nodes import AnyNode, ArrayNode, DataclassNode, MapNode
from weakincentives.serde._reflect import nodes_within

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["detached"]

_LEAVES: frozenset[type[object]] = frozenset(
    {str, int, float, bool, complex, bytes, NoneType, Decimal, UUID, datetime, date, time}
    | {timedelta}
)
"""Classes whose instances never change (their subclasses are learnt like any class)."""

type _Copier = Callable[[object], object]

_SETTLED: dict[type[object], bool] = dict.fromkeys(_LEAVES, True)
"""Per class: True when its instances are kept as they are (see the module docstring)."""


def detached[T](value: T) -> T:
    """A value equal to ``value`` that shares no mutable container with it.

    ``value`` itself when nothing in it can change (see the module docstring). Values
    recorded by the library come from bounded JSON or from a tool's result; a value
    nested past Python's recursion limit, or one that contains itself, raises
    ``RecursionError``.
    """
    cls = value.__class__
    settled = _SETTLED.get(cls)
    if settled is None:
        settled = _SETTLED.setdefault(cls, _learn(cls))
    if settled:
        return value
    return cast("T", _copy(value))


def _copy(value: object) -> object:
    cls = value.__class__
    if cls is list:
        return [detached(item) for item in cast("list[object]", value)]
    if cls is dict or cls is MappingProxyType:
        items = {key: detached(item) for key, item in cast("dict[object, object]", value).items()}
        return items if cls is dict else MappingProxyType(items)
    if cls is set:
        return {detached(item) for item in cast("set[object]", value)}
    if cls is bytearray:
        return bytearray(cast("bytearray", value))
    if cls is tuple or cls is frozenset:
        items_seen = cast("tuple[object, ...] | frozenset[object]", value)
        copied = [detached(item) for item in items_seen]
        if all(new is old for new, old in zip(copied, items_seen, strict=True)):
            return value
        return tuple(copied) if cls is tuple else frozenset(copied)
    if dataclasses.is_dataclass(value):
        return _copy_dataclass(value)
    return _copy_other(value)


_FIELD_NAMES: dict[type[object], tuple[str, ...]] = {}


def _copy_dataclass(value: object) -> object:
    cls = value.__class__
    names = _FIELD_NAMES.get(cls)
    if names is None:
        fields = dataclasses.fields(cast("DataclassInstance", value))
        names = _FIELD_NAMES.setdefault(cls, tuple(field.name for field in fields))
    changed: list[tuple[str, object]] = []
    for name in names:
        old = getattr(value, name)
        new = detached(old)
        if new is not old:
            changed.append((name, new))
    if _frozen(cls) and not changed:
        return value
    # A shallow copy keeps every field (init=False ones too) without running
    # __init__/__post_init__ again; the detached fields are then put in place.
    copied = copy.copy(value)
    for name, new in changed:
        object.__setattr__(copied, name, new)
    return copied


def _copy_other(value: object) -> object:
    """Subclasses of the built-in containers and named tuples, copied keeping their class."""
    if isinstance(value, tuple):  # a named tuple (``_learn`` keeps other tuple subclasses)
        items = cast("tuple[object, ...]", value)
        copied = [detached(item) for item in items]
        if all(new is old for new, old in zip(copied, items, strict=True)):
            return value
        return cast("Callable[..., object]", value.__class__)(*copied)
    # A shallow copy keeps the subclass's own state (a defaultdict's factory); the
    # items are then replaced by detached ones.
    duplicate = copy.copy(value)
    if isinstance(duplicate, list):
        duplicate[:] = [detached(item) for item in duplicate]
    elif isinstance(duplicate, dict):
        duplicate.update([(key, detached(item)) for key, item in duplicate.items()])
    elif isinstance(duplicate, set):
        members = [detached(item) for item in duplicate]
        duplicate.clear()
        duplicate.update(members)
    return duplicate


def _learn(cls: type[object]) -> bool:
    """Whether instances of ``cls`` never need a copy."""
    if issubclass(cls, list | dict | set | bytearray | MappingProxyType | frozenset):
        return False
    if issubclass(cls, tuple):  # plain tuples and named tuples may hold lists
        return not (cls is tuple or hasattr(cls, "_fields"))
    if issubclass(cls, Enum | PurePath):
        return True
    if dataclasses.is_dataclass(cls):
        return _settled_dataclass(cls)
    return True  # any other object is kept as it is


def _settled_dataclass(cls: type[object]) -> bool:
    """A frozen dataclass whose every field is typed with immutable types."""
    try:
        for node in nodes_within(cls):
            if isinstance(node, AnyNode | MapNode):
                return False
            if isinstance(node, DataclassNode) and not _frozen_with_init_fields_only(node.key):
                return False
            if isinstance(node, ArrayNode) and node.container in ("list", "set"):
                return False
    except SerdeError:  # a type serde cannot read: look at each value instead
        return False
    return True


def _frozen_with_init_fields_only(key: object) -> bool:
    origin = getattr(key, "__origin__", key)
    if not (isinstance(origin, type) and dataclasses.is_dataclass(origin)):
        return False
    # Fields outside __init__ are not in serde's model, so nothing is known of them.
    return _frozen(origin) and all(field.init for field in dataclasses.fields(origin))


def _frozen(cls: type[object]) -> bool:
    return bool(getattr(getattr(cls, "__dataclass_params__", None), "frozen", False))
