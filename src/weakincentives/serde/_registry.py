"""Type names: how a stored value says which class it is, and how a name finds its class again.

A class is written under the name it was registered with (:func:`register_type`), or
else under ``module:qualname``. Reading a name looks in the registry first (primary
names and aliases), then among serde's built-in names, and only then imports the
module and walks the qualified name. Only classes serde knows how to rebuild are
accepted: dataclasses, enums, ``pathlib`` paths and the built-in value types.

Trust model: stored documents are the user's own data. Resolving a default name
imports the module it names, which runs that module's top-level code, so documents
from parties you do not trust must not be loaded. Nothing else is executed: no
function named by a document is ever called, and classes are built through their
``__init__`` (so ``__post_init__`` checks still run).
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import threading
from collections.abc import Callable, Iterable
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PosixPath, PurePath, PurePosixPath, PureWindowsPath, WindowsPath
from types import MappingProxyType
from typing import get_origin, overload
from uuid import UUID

from weakincentives._bounded import clip, quote
from weakincentives.errors import SchemaError

__all__ = [
    "BUILTIN_NAMES",
    "loadable",
    "register_type",
    "resolve_type",
    "type_name",
]

BUILTIN_NAMES: dict[str, type[object]] = {
    "none": type(None),
    "bool": bool,
    "int": int,
    "float": float,
    "str": str,
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "dict": dict,
    "mapping": MappingProxyType,
    "datetime": datetime,
    "date": date,
    "time": time,
    "uuid": UUID,
    "decimal": Decimal,
    # The concrete path classes live in pathlib._local from Python 3.13 on, so their
    # module:qualname names would not load on 3.12.
    "pure_posix_path": PurePosixPath,
    "pure_windows_path": PureWindowsPath,
    "posix_path": PosixPath,
    "windows_path": WindowsPath,
}
"""Short names for the value types serde writes itself; no user class may take them."""

_BUILTIN_OF: dict[type[object], str] = {cls: name for name, cls in BUILTIN_NAMES.items()}
# "type" and "exception" tag values that are not instances of one class (a class
# object, any exception); they are reserved too.
_RESERVED = frozenset({*BUILTIN_NAMES, "type", "exception"})

_BY_NAME: dict[str, type[object]] = {}
"""Every registered name and alias -> its class."""
_PRIMARY: dict[type[object], str] = {}
"""Each registered class -> the name it is written under."""
_CHECKED: dict[type[object], str] = {}
"""Classes whose default name was checked to lead back to them."""
_SPLIT: dict[str, tuple[str, tuple[str, ...]]] = {}
"""Well-formed ``module:qualname`` names, parsed (names come from stored data: bounded)."""
_SPLIT_LIMIT = 10_000
_LOCK = threading.Lock()


class _UnresolvedError(Exception):
    """A name that does not lead to a loadable class; ``reason`` says why (internal)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@overload
def register_type[C: type[object]](
    name: str, cls: None = None, *, aliases: Iterable[str] = ()
) -> Callable[[C], C]: ...


@overload
def register_type[C: type[object]](name: str, cls: C, *, aliases: Iterable[str] = ()) -> C: ...


def register_type[C: type[object]](
    name: str, cls: C | None = None, *, aliases: Iterable[str] = ()
) -> C | Callable[[C], C]:
    """Give a dataclass or enum a stable name for stored values; usable as a decorator.

    ``register_type("billing.Invoice", Invoice)`` or ``@register_type("billing.Invoice")``.
    Stored values then carry ``name`` instead of ``module:qualname``, so the class can
    move or be renamed without breaking documents. ``aliases`` are names that also
    load this class (its old ``module:qualname``, a former registered name); they are
    never written. Registering the same class under the same name again is harmless,
    and so is registering a redefinition of it (same module and qualified name, as
    after a module reload): the new class takes the names over.

    Raises:
        SchemaError: ``cls`` is not a dataclass or enum class, ``name`` or an alias is
            empty, reserved or taken by another class, or ``cls`` already has another name.
    """
    extra = tuple(aliases)

    def register(target: C) -> C:
        _register(name, target, extra)
        return target

    return register if cls is None else register(cls)


def _register(name: str, cls: type[object], aliases: tuple[str, ...]) -> None:
    if not isinstance(cls, type) or get_origin(cls) is not None:
        raise SchemaError(
            f"register_type({name!r}, ...) needs a class, got {cls!r}; register the class "
            "itself (Box), not a parametrised alias (Box[int])"
        )
    if not (dataclasses.is_dataclass(cls) or issubclass(cls, Enum)):
        raise SchemaError(
            f"register_type({name!r}, {cls.__qualname__}): only dataclasses and enums are "
            "stored by name",
            dataclass_type=cls,
        )
    with _LOCK:
        current = _PRIMARY.get(cls)
        if current is not None and current != name:
            raise SchemaError(
                f"{cls.__qualname__} is already registered as {current!r}; pass {name!r} "
                f"in aliases=... to load documents that use it",
                dataclass_type=cls,
            )
        for each in (name, *aliases):
            _check_free(each, cls)
        _PRIMARY[cls] = name
        for each in (name, *aliases):
            _BY_NAME[each] = cls
        _CHECKED.pop(cls, None)


def _check_free(name: str, cls: type[object]) -> None:
    if not isinstance(name, str) or not name.strip():
        raise SchemaError(
            f"type names must be non-empty strings, got {name!r} for {cls.__qualname__}",
            dataclass_type=cls,
        )
    if name in _RESERVED:
        raise SchemaError(
            f"type name {name!r} is reserved for serde's built-in values; choose another "
            f"for {cls.__qualname__}",
            dataclass_type=cls,
        )
    holder = _BY_NAME.get(name)
    # A class defined again under the same module and qualified name (a reloaded module,
    # a notebook cell run twice) takes its name over; anything else is a clash.
    if holder is not None and _where(holder) != _where(cls):
        raise SchemaError(
            f"type name {name!r} is already registered for {holder.__module__}."
            f"{holder.__qualname__}; cannot give it to {cls.__module__}.{cls.__qualname__}",
            dataclass_type=cls,
        )


def _where(cls: type[object]) -> tuple[str, str]:
    return cls.__module__, cls.__qualname__


def type_name(cls: type[object]) -> str:
    """The name ``cls`` is written under; raises :class:`_UnresolvedError` when none would load.

    A class without a registered name is written as ``module:qualname``, checked once
    to lead back to the very same class (a class defined in a function, or shadowed
    in its module, would be unloadable).
    """
    name = _PRIMARY.get(cls) or _BUILTIN_OF.get(cls) or _CHECKED.get(cls)
    if name is not None:
        return name
    default = f"{cls.__module__}:{cls.__qualname__}"
    hint = f"give it a stable name with register_type('some.name', {cls.__name__})"
    if "<locals>" in cls.__qualname__:
        raise _UnresolvedError(f"{cls.__name__} is defined inside a function; {hint}")
    try:
        found = resolve_type(default)
    except _UnresolvedError as error:
        raise _UnresolvedError(
            f"its name {default!r} does not lead back to it ({error.reason}); {hint}"
        ) from None
    if found is not cls:
        raise _UnresolvedError(f"its name {default!r} leads to another object; {hint}")
    with _LOCK:
        _CHECKED[cls] = default
    return default


def resolve_type(name: str) -> type[object]:
    """The class ``name`` stands for; raises :class:`_UnresolvedError` saying why not."""
    found = _BY_NAME.get(name) or BUILTIN_NAMES.get(name)
    if found is not None:
        return found
    split = _SPLIT.get(name)
    if split is None:
        split = _split(name)
    module_name, parts = split
    # Looked up afresh every time (only the parsing is cached), so a module that was
    # reloaded or a class defined again is found as it is now.
    value: object = sys.modules.get(module_name)
    if value is None:
        try:
            value = importlib.import_module(module_name)
        except ImportError as error:
            raise _UnresolvedError(
                f"module {clip(module_name, 200)} cannot be imported ({clip(str(error), 200)})"
            ) from None
    walked = module_name
    for part in parts:
        if not hasattr(value, part):
            raise _UnresolvedError(
                f"{clip(walked, 200)} has no attribute {quote(part)}; if the class moved or was "
                f"renamed, register it with aliases=({quote(name, 200)},)"
            )
        value = getattr(value, part)
        walked = f"{walked}.{part}"
    if not (isinstance(value, type) and loadable(value)):
        raise _UnresolvedError(
            f"{clip(walked, 200)} is {_kind(value)}, not a dataclass, enum or value type "
            "serde can load"
        )
    return value


def _split(name: str) -> tuple[str, tuple[str, ...]]:
    """``module:qualname`` as (module, qualname parts), checked once per name and cached."""
    module_name, colon, qualname = name.partition(":")
    if not colon or not _dotted(module_name) or not _dotted(qualname):
        raise _UnresolvedError(
            "it is neither a registered name nor of the form module:qualname "
            "(register the class with register_type)"
        )
    split = (module_name, tuple(qualname.split(".")))
    if len(_SPLIT) < _SPLIT_LIMIT:
        _SPLIT[name] = split
    return split


def loadable(cls: type[object]) -> bool:
    """Whether serde can rebuild instances of ``cls`` from a stored value."""
    return dataclasses.is_dataclass(cls) or issubclass(cls, Enum | PurePath) or cls in _BUILTIN_OF


def _dotted(text: str) -> bool:
    return all(part.isidentifier() for part in text.split("."))


def _kind(value: object) -> str:
    if isinstance(value, type):
        return f"the class {value.__qualname__}"
    return f"a {type(value).__qualname__}"
