"""dump: typed Python values to JSON-shaped data.

Dump follows the runtime value, not the declared field type, so it works for
any supported value, dataclass or not. Each dataclass gets a generated
function (built once, cached by class) that reads its fields and builds the
dict in one expression; other types go through a dispatch table keyed by the
exact class, filled on first sight of a class.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import cast
from uuid import UUID

from weakincentives._codegen import generated_function
from weakincentives.errors import SchemaError
from weakincentives.serde._failure import index_segment, key_segment
from weakincentives.serde._json import JSONValue
from weakincentives.serde._limits import read_alias
from weakincentives.serde._reflect import Where

__all__ = ["dump"]

type Dumper = Callable[[object, bool], JSONValue]

_SCALARS = frozenset({str, int, float, bool, type(None)})
_DISPATCH: dict[type, Dumper] = {}
_LOCK = threading.RLock()
_UNSAFE = re.compile(r"\W")


class _DumpError(Exception):
    """A value serde cannot turn into JSON; becomes a SchemaError at the top."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.segments: list[str] = []
        self.owner: type[object] | None = None
        self.field: str | None = None


def dump(obj: object, *, exclude_none: bool = False) -> JSONValue:
    """Turn a value into JSON-shaped data (dicts, lists, str, int, float, bool, None).

    Dataclasses become objects keyed by wire name (the ``alias`` metadata, else
    the field name), enums their values, dates and times ISO 8601 strings,
    UUID/Decimal/Path strings, tuples and sets arrays (sets sorted when their
    items can be ordered). ``exclude_none`` leaves out dataclass fields whose
    value is None. Raises SchemaError, naming the path, for values serde cannot
    represent.
    """
    if obj.__class__ in _SCALARS:
        return cast(JSONValue, obj)
    try:
        return _dump(obj, exclude_none)
    except _DumpError as error:
        path = "$" + "".join(reversed(error.segments))
        raise SchemaError(
            f"cannot dump {error.problem} at {path}",
            dataclass_type=error.owner,
            field_name=error.field,
        ) from None


def _dump(value: object, exclude_none: bool) -> JSONValue:
    cls = value.__class__
    if cls in _SCALARS:
        return cast(JSONValue, value)
    dumper = _DISPATCH.get(cls)
    if dumper is None:
        dumper = _resolve(cls)
    return dumper(value, exclude_none)


def _resolve(cls: type) -> Dumper:
    with _LOCK:
        dumper = _DISPATCH.get(cls)
        if dumper is None:
            dumper = _DISPATCH[cls] = _dumper_for(cls)
        return dumper


def _dumper_for(cls: type) -> Dumper:
    if dataclasses.is_dataclass(cls):
        return _generate(cls)
    if issubclass(cls, Enum):
        return lambda value, exclude: _dump(cast(Enum, value).value, exclude)
    # Subclasses of the JSON scalars become the plain scalar.
    if issubclass(cls, int):
        return lambda value, _exclude: int(cast(int, value))
    if issubclass(cls, float):
        return lambda value, _exclude: float(cast(float, value))
    if issubclass(cls, str):
        return lambda value, _exclude: str.__str__(cast(str, value))
    if issubclass(cls, datetime | date | time):
        return lambda value, _exclude: cast(date, value).isoformat()
    if issubclass(cls, UUID | Decimal | PurePath):
        return lambda value, _exclude: str(value)
    if issubclass(cls, Mapping):
        return _dump_mapping
    if issubclass(cls, AbstractSet):
        return _dump_set
    if issubclass(cls, Sequence) and not issubclass(cls, bytes | bytearray):
        return _dump_sequence
    return _unsupported


def _unsupported(value: object, _exclude: bool) -> JSONValue:
    raise _DumpError(f"a value of type {type(value).__qualname__}")


def _dump_sequence(value: object, exclude: bool) -> JSONValue:
    # The cast only serves the type checker: scalars pass through, the rest is dumped.
    items = cast(Sequence[JSONValue], value)
    try:
        return [item if item.__class__ in _SCALARS else _dump(item, exclude) for item in items]
    except _DumpError:
        for index, item in enumerate(items):
            try:
                _dump(item, exclude)
            except _DumpError as error:
                error.segments.append(index_segment(index))
                raise
        raise AssertionError("a batch failed that no single item fails") from None


def _dump_set(value: object, exclude: bool) -> JSONValue:
    # Sorting keeps the output independent of hash order (str hashes are salted);
    # the cast only serves the type checker, mixed items raise TypeError and keep set order.
    items = cast(AbstractSet[str], value)
    try:
        ordered = sorted(items)
    except TypeError:
        ordered = list(items)
    return _dump_sequence(ordered, exclude)


def _dump_key(key: object) -> str:
    if isinstance(key, Enum):
        key = key.value
    if isinstance(key, str):
        return str.__str__(key)
    if isinstance(key, int) and not isinstance(key, bool):
        return str(int(key))
    raise _DumpError(f"a dict key of type {type(key).__qualname__} (keys must be str, int or enum)")


def _dump_mapping(value: object, exclude: bool) -> JSONValue:
    result: dict[str, JSONValue] = {}
    # The cast only serves the type checker: scalars pass through, the rest is dumped.
    for key, item in cast(Mapping[object, JSONValue], value).items():
        try:
            name = key if isinstance(key, str) and key.__class__ is str else _dump_key(key)
            result[name] = item if item.__class__ in _SCALARS else _dump(item, exclude)
        except _DumpError as error:
            error.segments.append(key_segment(key))
            raise
    return result


def _generate(cls: type) -> Dumper:
    fields = [field for field in dataclasses.fields(cls) if field.init]
    wires = [read_alias(field.metadata, Where(cls, field.name)) or field.name for field in fields]
    namespace: dict[str, object] = {
        "_S": _SCALARS,
        "_D": _dump,
        "_DE": _DumpError,
        "_cls": cls,
        "_names": tuple(field.name for field in fields),
        "_segs": tuple(key_segment(wire) for wire in wires),
    }
    body = ["k = 0", "try:"]
    for index, field in enumerate(fields):
        body += [
            f"    k = {index}",
            f"    a{index} = obj.{field.name}",
            f"    if a{index}.__class__ not in _S: a{index} = _D(a{index}, ex)",
        ]
    if not fields:
        body.append("    pass")
    body += [
        "except _DE as e:",
        "    e.segments.append(_segs[k])",
        "    if e.owner is None: e.owner, e.field = _cls, _names[k]",
        "    raise",
        "if ex:",
        "    r = {}",
        *(
            f"    if a{index} is not None: r[{wire!r}] = a{index}"
            for index, wire in enumerate(wires)
        ),
        "    return r",
        "return {" + ", ".join(f"{wire!r}: a{index}" for index, wire in enumerate(wires)) + "}",
    ]
    name = "dump_" + _UNSAFE.sub("_", cls.__name__)
    source = "\n".join([f"def {name}(obj, ex):", *(f"    {line}" for line in body)]) + "\n"
    label = f"serde dump {cls.__module__}.{cls.__qualname__}"
    # Generated from field names and repr() literals only.
    return cast(Dumper, generated_function(source, name, namespace, label=label))
