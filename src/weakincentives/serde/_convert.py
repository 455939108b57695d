"""Converters for everything but dataclasses: one small closure per node.

A converter takes a JSON-shaped value and returns the Python value, or raises
:class:`_ConversionError`. Each is built once per node from the reflected type
model; the closures hold their settings, so the call does no reflection.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sized
from datetime import date, datetime, time
from decimal import Context, Decimal, InvalidOperation
from enum import Enum
from pathlib import PurePath
from types import MappingProxyType
from uuid import UUID

from weakincentives.serde._failure import _ConversionError, describe, index_segment, key_segment
from weakincentives.serde._nodes import (
    ChoiceNode,
    Limits,
    MapNode,
    Scalar,
)

__all__ = [
    "DECIMAL_PATTERN",
    "Converter",
    "LateConverter",
    "add_failed_index",
    "array_converter",
    "as_bool",
    "as_decimal",
    "as_float",
    "as_int",
    "as_none",
    "as_path",
    "as_str",
    "as_uuid",
    "choice_converter",
    "choices_text",
    "limited",
    "map_converter",
    "passthrough",
    "resolved",
    "temporal_converter",
    "tuple_converter",
]

type Converter = Callable[[object], object]

DECIMAL_PATTERN = r"^-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
# fullmatch without the anchors: "$" in Python would also accept a trailing newline.
_DECIMAL = re.compile(DECIMAL_PATTERN[1:-1])
# Enough digits for any quotient of two finite floats (exponents span about 650 digits).
_EXACT = Context(prec=1000)
_INT_KEY = re.compile(r"-?[0-9]+")
_MAX_LISTED = 10


class LateConverter:
    """A recursive reference to a dataclass still being compiled; calls it once it exists."""

    __slots__ = ("cell",)

    def __init__(self, cell: list[Converter]) -> None:
        self.cell = cell

    def __call__(self, value: object) -> object:
        return self.cell[0](value)


def resolved(converter: Converter) -> Converter:
    """The converter a reference stands for (itself, unless it is a LateConverter)."""
    return converter.cell[0] if isinstance(converter, LateConverter) else converter


def passthrough(value: object) -> object:
    """``Any``: the value as it is."""
    return value


def as_none(value: object) -> object:
    """JSON null."""
    if value is None:
        return None
    raise _ConversionError("null", describe(value))


def as_bool(value: object) -> object:
    """A JSON boolean; no truthiness, no 0/1."""
    if value is True or value is False:
        return value
    raise _ConversionError("a boolean", describe(value))


def as_int(value: object) -> object:
    """An integer; a float with no fractional part counts, as in JSON Schema."""
    if value.__class__ is int:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _ConversionError("an integer", describe(value))


def as_float(value: object) -> object:
    """A finite number; integers are widened to float."""
    if isinstance(value, float):
        if value - value == 0.0:
            return float(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            pass
    raise _ConversionError("a finite number", describe(value))


def as_str(value: object) -> object:
    """A string."""
    if isinstance(value, str):
        return value
    raise _ConversionError("a string", describe(value))


def as_decimal(value: object) -> object:
    """A decimal from a numeric string or a finite number."""
    if isinstance(value, str):
        if _DECIMAL.fullmatch(value):
            try:
                return Decimal(value)
            except InvalidOperation:
                pass
    elif isinstance(value, Decimal):
        if value.is_finite():
            return value
    elif isinstance(value, int) and not isinstance(value, bool):
        return Decimal(value)
    elif isinstance(value, float) and value - value == 0.0:
        return Decimal(repr(value))
    raise _ConversionError("a decimal number or numeric string", describe(value))


def as_uuid(value: object) -> object:
    """A UUID from its string form."""
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            pass
    elif isinstance(value, UUID):
        return value
    raise _ConversionError("a UUID string", describe(value))


def as_path(cls: type[PurePath]) -> Converter:
    """A path from a string."""

    def convert(value: object) -> object:
        if isinstance(value, str):
            return cls(value)
        if isinstance(value, cls):
            return value
        raise _ConversionError("a path string", describe(value))

    return convert


def temporal_converter(cls: type[datetime] | type[date] | type[time]) -> Converter:
    """A datetime, date or time from an ISO 8601 string."""
    expected = f"an ISO 8601 {cls.__name__} string"

    def convert(value: object) -> object:
        if isinstance(value, str):
            try:
                return cls.fromisoformat(value)
            except ValueError:
                pass
        elif value.__class__ is cls:
            return value
        raise _ConversionError(expected, describe(value))

    return convert


def choices_text(wires: list[Scalar]) -> str:
    """'one of "a", "b"' for messages, shortened for long lists."""
    shown = ", ".join(json.dumps(wire) for wire in wires[:_MAX_LISTED])
    more = ", ..." if len(wires) > _MAX_LISTED else ""
    return f"one of {shown}{more}"


def choice_converter(node: ChoiceNode) -> Converter:
    """A Literal or Enum value, matched on type and value so ``true`` is never ``1``."""
    table: dict[tuple[type, object], object] = {
        (wire.__class__, wire): value for wire, value in node.choices
    }
    expected = choices_text([wire for wire, _ in node.choices])
    enum_type = node.enum_type
    literal_values = [value for _, value in node.choices]

    def convert(value: object) -> object:
        try:
            return table[(value.__class__, value)]
        except (KeyError, TypeError):
            pass
        if enum_type is not None and isinstance(value, enum_type):
            return value
        if isinstance(value, Enum) and value in literal_values:
            return value
        raise _ConversionError(expected, describe(value))

    return convert


def _is_multiple(value: int | float | Decimal, step: int | float) -> bool:
    """Whether ``value`` is a whole multiple of ``step``, in decimal arithmetic.

    Binary floats would say 0.3 is not a multiple of 0.1; comparing the decimal
    forms people write (the shortest repr) gives the answer they mean.
    """
    if isinstance(value, int) and isinstance(step, int):
        return value % step == 0
    # Decimal(int) is exact; repr() of a huge int would hit Python's digit limit.
    exact = value if isinstance(value, Decimal | int) else Decimal(repr(value))
    try:
        return _EXACT.remainder(exact, Decimal(repr(step))) == 0
    except InvalidOperation:
        return False  # a quotient beyond a thousand digits: treat as not a multiple


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" if number == 1 else f"{number} {unit}s"


def limited(convert: Converter, limits: Limits, noun: str, unit: str) -> Converter:
    """Wrap ``convert`` with the checks ``limits`` asks for.

    ``noun`` and ``unit`` word the length messages ("a string", "character").
    """
    ge, gt, le, lt, step = limits.ge, limits.gt, limits.le, limits.lt, limits.multiple_of
    shortest, longest, pattern = limits.min_length, limits.max_length, limits.pattern

    def check(value: object) -> object:
        result = convert(value)
        if isinstance(result, int | float | Decimal):
            if ge is not None and not result >= ge:
                raise _ConversionError(f"a value >= {ge}", describe(value))
            if gt is not None and not result > gt:
                raise _ConversionError(f"a value > {gt}", describe(value))
            if le is not None and not result <= le:
                raise _ConversionError(f"a value <= {le}", describe(value))
            if lt is not None and not result < lt:
                raise _ConversionError(f"a value < {lt}", describe(value))
            if step is not None and not _is_multiple(result, step):
                raise _ConversionError(f"a multiple of {step}", describe(value))
            return result
        # Lengths count the input (the JSON array), as JSON Schema does.
        size = len(value) if isinstance(value, Sized) else 0
        if shortest is not None and size < shortest:
            raise _ConversionError(
                f"{noun} with at least {_count(shortest, unit)}", describe(value)
            )
        if longest is not None and size > longest:
            raise _ConversionError(f"{noun} with at most {_count(longest, unit)}", describe(value))
        if pattern is not None and isinstance(result, str) and not pattern.search(result):
            raise _ConversionError(f"a string matching {pattern.pattern!r}", describe(value))
        return result

    return check


def add_failed_index(error: _ConversionError, counter: Iterator[int]) -> None:
    """Add the index of the item that failed, read off the counter zipped with the items.

    ``zip(items, counter)`` takes the item first, so when converting item ``i``
    fails the counter has produced ``0..i``. Reading the index this way, instead
    of converting the items again to find the failing one, keeps error reporting
    linear: re-running a failed nested item at every level would cost 2^depth.
    """
    error.segments.append(index_segment(next(counter) - 1))


def array_converter(item: Converter, container: str) -> Converter:
    """A list, tuple, set or frozenset from a JSON array."""
    build: Callable[[list[object]], object] | None = {
        "tuple": tuple,
        "set": set,
        "frozenset": frozenset,
    }.get(container)

    def convert(value: object) -> object:
        items: list[object] | tuple[object, ...]
        if isinstance(value, list | tuple):
            items = value
        elif isinstance(value, set | frozenset):
            items = list(value)
        else:
            raise _ConversionError("an array", describe(value))
        counter = itertools.count()
        try:
            result = [item(element) for element, _ in zip(items, counter, strict=False)]
        except _ConversionError as error:
            add_failed_index(error, counter)
            raise
        if build is None:
            return result
        try:
            return build(result)
        except TypeError:
            raise _ConversionError("an array of hashable items", describe(value)) from None

    return convert


def tuple_converter(items: tuple[Converter, ...]) -> Converter:
    """A fixed-length tuple from a JSON array of exactly that length."""
    count = len(items)
    expected = f"an array of exactly {count} item{'' if count == 1 else 's'}"

    def convert(value: object) -> object:
        if not isinstance(value, list | tuple):
            raise _ConversionError(expected, describe(value))
        if len(value) != count:
            raise _ConversionError(expected, describe(value))
        counter = itertools.count()
        try:
            return tuple(
                [each(element) for each, element, _ in zip(items, value, counter, strict=False)]
            )
        except _ConversionError as error:
            add_failed_index(error, counter)
            raise

    return convert


def _key_converter(node: MapNode) -> Converter:
    if node.key_kind == "str":
        return as_str
    if node.key_kind == "int":

        def int_key(key: object) -> object:
            if isinstance(key, str) and _INT_KEY.fullmatch(key):
                try:
                    return int(key)
                except ValueError:  # more digits than Python converts
                    raise _ConversionError("an integer key", describe(key)) from None
            if isinstance(key, int) and not isinstance(key, bool):
                return key
            raise _ConversionError("an integer key", describe(key))

        return int_key
    table = dict(node.key_choices)
    members = set(table.values())
    expected = choices_text([wire for wire, _ in node.key_choices])

    def choice_key(key: object) -> object:
        if isinstance(key, str) and key in table:
            return table[key]
        if key in members:
            return key
        raise _ConversionError(expected, describe(key))

    return choice_key


def map_converter(node: MapNode, value_converter: Converter) -> Converter:
    """A dict (or read-only mapping) from a JSON object."""
    key_converter = _key_converter(node)
    read_only = node.container == "mapping"

    def convert(value: object) -> object:
        if not isinstance(value, Mapping):
            raise _ConversionError("an object", describe(value))
        result: dict[object, object] = {}
        for key, item in value.items():
            try:
                result[key_converter(key)] = value_converter(item)
            except _ConversionError as error:
                error.segments.append(key_segment(key))
                raise
        return MappingProxyType(result) if read_only else result

    return convert
