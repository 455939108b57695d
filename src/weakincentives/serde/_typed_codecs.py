"""Codecs for typed values: what one declared type writes, and how it reads that back.

Each codec writes the value's plain form when its class is exactly what the
declared type reads back (an ``int`` field holding an int, a ``tuple[str, ...]``
holding a tuple) and otherwise hands it to :class:`Tagged`, which writes it with
its type name (``{"$type": "list", "value": [...]}``), so the value loads back
as the very class it was. Reading, every codec accepts such a tagged object in
place of its plain form. Failures carry no path; each container adds its segment
while the failure unwinds (as in the parse path).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import Literal, Protocol, TypeGuard

from weakincentives._bounded import clip, listing, safe_str
from weakincentives.errors import RecordedError
from weakincentives.serde._failure import _ConversionError, describe, index_segment, key_segment
from weakincentives.serde._json import JSONObject, JSONValue

__all__ = [
    "TYPE_KEY",
    "VALUE_KEY",
    "ArrayCodec",
    "Codec",
    "EnumCodec",
    "ExactCodec",
    "ExceptionCodec",
    "FixedTupleCodec",
    "FloatCodec",
    "KeyMode",
    "LiteralCodec",
    "MapCodec",
    "OpenCodec",
    "OptionalCodec",
    "StringFormCodec",
    "Tagged",
    "TypeCodec",
    "UnionCodec",
    "build_collection",
    "decode_items",
    "decode_pairs",
    "encode_items",
    "encode_pairs",
    "encode_set",
    "exception_name",
    "exception_record",
    "finite",
    "is_tagged",
    "recorded_exception",
]

TYPE_KEY = "$type"
"""The member that marks an object as a tagged value; no dataclass field may use it."""
VALUE_KEY = "value"
"""The member holding a tagged value that is not a dataclass."""

_MESSAGE_LIMIT = 2_000
"""Characters of an exception's message kept in a stored value."""
_INT_KEY = re.compile(r"-?(0|[1-9][0-9]*)")


class _UnwritableError(Exception):
    """A value that cannot be stored; the path is built while the failure unwinds.

    ``problem`` names the value (``a value of type Opaque``); ``reason``, when there
    is one, says why and what to do, after the path.
    """

    def __init__(self, problem: str, reason: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.reason = reason
        self.segments: list[str] = []
        self.owner: type[object] | None = None
        self.field: str | None = None


class _UnknownNameError(_ConversionError):
    """A stored type name that does not resolve; becomes an UnknownTypeError at the top."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__("a loadable type name", f"type name {clip(name)}")
        self.name = name
        self.reason = reason


class Codec(Protocol):
    """Writes values of one declared type as JSON and reads them back."""

    @property
    def expected(self) -> str:
        """What the plain form is, for error messages: ``an integer``, ``an array``."""
        ...

    def encode(self, value: object) -> JSONValue:
        """JSON for ``value``; raises ``_UnwritableError`` for what cannot be stored."""
        ...

    def decode(self, data: object) -> object:
        """The value ``data`` stands for; raises ``_ConversionError`` when it does not fit."""
        ...


class Tagged(Protocol):
    """Values written with their type name: every codec's fallback, and open positions."""

    def tag(self, value: object) -> JSONObject:
        """``value`` as a tagged object, whatever its class."""
        ...

    def untag(self, data: JSONObject) -> object:
        """The value a tagged object stands for."""
        ...

    def encode_open(self, value: object) -> JSONValue:
        """``value`` where any type may stand: JSON scalars, lists and plain objects as is."""
        ...

    def decode_open(self, data: object) -> object:
        """The value written by :meth:`encode_open`."""
        ...


def is_tagged(data: object) -> TypeGuard[JSONObject]:
    """Whether ``data`` is a tagged object (a dict with a ``$type`` member)."""
    return type(data) is dict and TYPE_KEY in data


def finite(value: float) -> float:
    """``value`` when it is finite; JSON has no NaN or infinity."""
    if value - value == 0.0:
        return value
    raise _UnwritableError(f"a non-finite number {value!r} (JSON has no NaN or infinity)")


def exception_name(error: BaseException) -> str:
    """``module:qualname`` of an exception's class (the recorded name of a recorded one)."""
    if isinstance(error, RecordedError):
        return error.type_name
    cls = type(error)
    return f"{cls.__module__}:{cls.__qualname__}"


def exception_record(error: BaseException) -> JSONObject:
    """What is kept of an exception: its type name and its (bounded) message."""
    if isinstance(error, RecordedError):
        message = clip(error.message, _MESSAGE_LIMIT)
    else:
        message = safe_str(error, _MESSAGE_LIMIT)
    return {"type": exception_name(error), "message": message}


def recorded_exception(data: object) -> RecordedError:
    """The exception an :func:`exception_record` stands for."""
    if type(data) is dict and data.keys() == {"type", "message"}:
        name, message = data["type"], data["message"]
        if type(name) is str and type(message) is str:
            return RecordedError(message, type_name=name)
    raise _ConversionError('an object with "type" and "message" strings', describe(data))


@dataclass(frozen=True, slots=True)
class ExactCodec:
    """``bool``, ``int``, ``str`` and ``None``: the JSON scalar of exactly that class."""

    cls: type[object]
    expected: str
    tagged: Tagged

    def encode(self, value: object) -> JSONValue:
        if type(value) is self.cls:
            return value  # type: ignore[return-value]  # self.cls is bool, int, str or None
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if type(data) is self.cls:
            return data
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


@dataclass(frozen=True, slots=True)
class FloatCodec:
    """``float``: a finite number; an int is written as is and read back as a float."""

    tagged: Tagged

    expected = "a number"

    def encode(self, value: object) -> JSONValue:
        if type(value) is float:
            return finite(value)
        if type(value) is int:
            return value
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if type(data) is float:
            return data
        if type(data) is int:
            try:
                return float(data)
            except OverflowError:
                raise _ConversionError(self.expected, describe(data)) from None
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


@dataclass(frozen=True, slots=True)
class StringFormCodec:
    """Dates, times, UUIDs, Decimals and paths: a string ``write``/``read`` round-trip."""

    cls: type[object]
    expected: str
    write: Callable[[object], str]
    read: Callable[[str], object]
    tagged: Tagged

    def encode(self, value: object) -> JSONValue:
        if type(value) is self.cls:
            return self.write(value)
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if type(data) is str:
            try:
                return self.read(data)
            except (ValueError, ArithmeticError):  # Decimal's InvalidOperation is arithmetic
                raise _ConversionError(self.expected, describe(data)) from None
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


class EnumCodec:
    """An enum: its member's value."""

    __slots__ = ("cls", "expected", "tagged")

    def __init__(self, cls: type[Enum], tagged: Tagged) -> None:
        self.cls = cls
        self.tagged = tagged
        values = [safe_str(member.value, 20) for member in cls]
        self.expected = f"a {cls.__qualname__} value ({listing(values)})"

    def encode(self, value: object) -> JSONValue:
        if type(value) is self.cls and isinstance(value, Enum):
            return self.tagged.encode_open(value.value)
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if is_tagged(data):
            return self.tagged.untag(data)
        try:
            return self.cls(self.tagged.decode_open(data))
        except ValueError:
            raise _ConversionError(self.expected, describe(data)) from None


class LiteralCodec:
    """``Literal[...]``: one of the listed values (enum members by their value)."""

    __slots__ = ("choices", "expected", "tagged")

    def __init__(self, choices: Iterable[object], tagged: Tagged) -> None:
        self.choices: tuple[tuple[JSONValue, object], ...] = tuple(
            (choice.value if isinstance(choice, Enum) else choice, choice)  # type: ignore[misc]  # Literal values are JSON scalars
            for choice in choices
        )
        self.tagged = tagged
        self.expected = "one of " + listing([json.dumps(wire) for wire, _ in self.choices])

    def wire_of(self, value: object) -> tuple[bool, JSONValue]:
        """(True, wire) when ``value`` is one of the choices, else (False, None)."""
        for wire, choice in self.choices:
            if type(value) is type(choice) and value == choice:
                return True, wire
        return False, None

    def choice_of(self, data: object) -> tuple[bool, object]:
        """(True, choice) when ``data`` is a choice's wire value, else (False, None)."""
        for wire, choice in self.choices:
            if type(data) is type(wire) and data == wire:
                return True, choice
        return False, None

    def encode(self, value: object) -> JSONValue:
        found, wire = self.wire_of(value)
        return wire if found else self.tagged.tag(value)

    def decode(self, data: object) -> object:
        found, choice = self.choice_of(data)
        if found:
            return choice
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


@dataclass(frozen=True, slots=True)
class TypeCodec:
    """``type[X]``: a class, by its type name."""

    name_of: Callable[[type[object]], str]
    resolve: Callable[[str], type[object]]
    tagged: Tagged

    expected = "a type name (string)"

    def encode(self, value: object) -> JSONValue:
        if isinstance(value, type):
            return self.name_of(value)
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if type(data) is str:
            return self.resolve(data)
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


@dataclass(frozen=True, slots=True)
class ExceptionCodec:
    """An exception: ``{"type": "module:qualname", "message": ...}``, read as RecordedError."""

    tagged: Tagged

    expected = 'an object with "type" and "message" strings'

    def encode(self, value: object) -> JSONValue:
        if isinstance(value, BaseException):
            return exception_record(value)
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if is_tagged(data):
            return self.tagged.untag(data)
        return recorded_exception(data)


@dataclass(frozen=True, slots=True)
class OptionalCodec:
    """``X | None``: null, or ``X``'s own form."""

    inner: Codec

    @property
    def expected(self) -> str:
        return f"{self.inner.expected} or null"

    def encode(self, value: object) -> JSONValue:
        return None if value is None else self.inner.encode(value)

    def decode(self, data: object) -> object:
        return None if data is None else self.inner.decode(data)


_SCALAR_NAMES: dict[type[object], str] = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
}


class UnionCodec:
    """A union: JSON scalars plain when a member takes exactly them, anything else tagged.

    Only ``None``, ``bool``, ``int``, ``float``, ``str`` and Literal values are written
    plain: their JSON type says which member reads them back. Every other value
    carries its type name, so no member can misread another's object.
    """

    __slots__ = ("expected", "literals", "scalars", "tagged")

    def __init__(
        self, scalars: frozenset[type[object]], literals: tuple[LiteralCodec, ...], tagged: Tagged
    ) -> None:
        self.scalars = scalars
        self.literals = literals
        self.tagged = tagged
        parts = [name for cls, name in _SCALAR_NAMES.items() if cls in scalars]
        parts += [literal.expected for literal in literals]
        parts += ["null"] if type(None) in scalars else []
        self.expected = ", ".join(parts) + " or a tagged value"

    def encode(self, value: object) -> JSONValue:
        cls = type(value)
        if cls in self.scalars:
            return finite(value) if type(value) is float else value  # type: ignore[return-value]  # a JSON scalar
        if cls is int and float in self.scalars:
            return value  # type: ignore[return-value]  # an int, read back as a float
        for literal in self.literals:
            found, wire = literal.wire_of(value)
            if found:
                return wire
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        cls = type(data)
        if cls in self.scalars:
            return data
        for literal in self.literals:
            found, choice = literal.choice_of(data)
            if found:
                return choice
        if type(data) is int and float in self.scalars:
            return float(data)
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


def encode_items(items: Iterable[object], encode: Callable[[object], JSONValue]) -> list[JSONValue]:
    """Each item encoded; a failure names its index."""
    out: list[JSONValue] = []
    for index, item in enumerate(items):
        try:
            out.append(encode(item))
        except _UnwritableError as error:
            error.segments.append(index_segment(index))
            raise
    return out


def decode_items(data: list[JSONValue], decode: Callable[[object], object]) -> list[object]:
    """Each item decoded; a failure names its index."""
    out: list[object] = []
    for index, item in enumerate(data):
        try:
            out.append(decode(item))
        except _ConversionError as error:
            error.segments.append(index_segment(index))
            raise
    return out


def encode_set(
    value: AbstractSet[object], encode: Callable[[object], JSONValue]
) -> list[JSONValue]:
    """A set's items in an order that does not depend on hashing (str hashes are salted).

    Sorted by value when the items can be ordered (as ``dump`` does), else by their JSON text.
    """
    try:
        items = sorted(value)  # type: ignore[type-var]  # unorderable items raise TypeError
    except TypeError:
        encoded = encode_items(value, encode)
        encoded.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return encoded
    return encode_items(items, encode)


def build_collection(cls: type[object], items: list[object]) -> object:
    """``items`` as a ``cls`` (list, tuple, set, frozenset); set items must be hashable."""
    if cls is list:
        return items
    try:
        return cls(items)  # type: ignore[call-arg]  # cls is tuple, set or frozenset
    except TypeError as error:  # set items that are not hashable
        raise _ConversionError("hashable items", safe_str(error)) from None


@dataclass(frozen=True, slots=True)
class ArrayCodec:
    """``list[X]``, ``tuple[X, ...]``, ``set[X]``, ``frozenset[X]``: a JSON array."""

    cls: type[object]
    item: Codec
    tagged: Tagged

    expected = "an array"

    def encode(self, value: object) -> JSONValue:
        if type(value) is not self.cls:
            return self.tagged.tag(value)
        if isinstance(value, AbstractSet):
            return encode_set(value, self.item.encode)
        return encode_items(value, self.item.encode)  # type: ignore[arg-type]  # a list or tuple

    def decode(self, data: object) -> object:
        if type(data) is list:
            return build_collection(self.cls, decode_items(data, self.item.decode))
        if is_tagged(data):
            return self.tagged.untag(data)
        raise _ConversionError(self.expected, describe(data))


@dataclass(frozen=True, slots=True)
class FixedTupleCodec:
    """``tuple[X, Y]``: an array of exactly that many items."""

    items: tuple[Codec, ...]
    tagged: Tagged

    @property
    def expected(self) -> str:
        count = len(self.items)
        return f"an array of exactly {count} item{'' if count == 1 else 's'}"

    def encode(self, value: object) -> JSONValue:
        if type(value) is not tuple or len(value) != len(self.items):
            return self.tagged.tag(value)
        out: list[JSONValue] = []
        for index, (codec, item) in enumerate(zip(self.items, value, strict=True)):
            try:
                out.append(codec.encode(item))
            except _UnwritableError as error:
                error.segments.append(index_segment(index))
                raise
        return out

    def decode(self, data: object) -> object:
        if is_tagged(data):
            return self.tagged.untag(data)
        if type(data) is not list or len(data) != len(self.items):
            raise _ConversionError(self.expected, describe(data))
        out: list[object] = []
        for index, (codec, item) in enumerate(zip(self.items, data, strict=True)):
            try:
                out.append(codec.decode(item))
            except _ConversionError as error:
                error.segments.append(index_segment(index))
                raise
        return tuple(out)


type KeyMode = Literal["str", "int", "named", "pairs"]
"""How a mapping's keys are written: as object member names (``str``; ``int`` as decimal
text; ``named``, a str enum's value or a str Literal) or, for any other key type, as
``[key, value]`` pairs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class MapCodec:
    """``dict[K, V]`` and ``Mapping[K, V]``: an object, or ``[[key, value], ...]`` pairs."""

    mode: KeyMode
    key: Codec
    value: Codec
    container: type[object]
    tagged: Tagged

    @property
    def expected(self) -> str:
        return "an array of [key, value] pairs" if self.mode == "pairs" else "an object"

    def encode(self, value: object) -> JSONValue:
        if not isinstance(value, Mapping):
            return self.tagged.tag(value)
        if self.mode == "pairs":
            return encode_pairs(value, self.key.encode, self.value.encode)
        result: JSONObject = {}
        for key, item in value.items():
            name = self._member(key)
            if name is None:  # a key this mode cannot write: tag the whole mapping instead
                return self.tagged.tag(value)
            try:
                result[name] = self.value.encode(item)
            except _UnwritableError as error:
                error.segments.append(key_segment(key))
                raise
        return result

    def _member(self, key: object) -> str | None:
        if self.mode == "str":
            return key if type(key) is str and key != TYPE_KEY else None
        if self.mode == "int":
            return str(key) if type(key) is int else None
        try:
            encoded = self.key.encode(key)
        except _UnwritableError:
            return None
        return encoded if type(encoded) is str and encoded != TYPE_KEY else None

    def decode(self, data: object) -> object:
        if is_tagged(data):
            return self.tagged.untag(data)
        built: dict[object, object]
        if self.mode == "pairs" and type(data) is list:
            built = decode_pairs(data, self.key.decode, self.value.decode)
        elif self.mode != "pairs" and type(data) is dict:
            built = {}
            for name, item in data.items():
                try:
                    built[self._key(name)] = self.value.decode(item)
                except _ConversionError as error:
                    error.segments.append(key_segment(name))
                    raise
        else:
            raise _ConversionError(self.expected, describe(data))
        return built if self.container is dict else MappingProxyType(built)

    def _key(self, name: str) -> object:
        if self.mode == "int":
            if not _INT_KEY.fullmatch(name):
                raise _ConversionError("an integer key", describe(name))
            return int(name)
        return name if self.mode == "str" else self.key.decode(name)


def encode_pairs(
    value: Mapping[object, object],
    encode_key: Callable[[object], JSONValue],
    encode_value: Callable[[object], JSONValue],
) -> list[JSONValue]:
    """``[[key, value], ...]`` in the mapping's order; a failure names the pair's index."""
    pairs: list[JSONValue] = []
    for index, (key, item) in enumerate(value.items()):
        try:
            pairs.append([_encode_at(encode_key, key, 0), _encode_at(encode_value, item, 1)])
        except _UnwritableError as error:
            error.segments.append(index_segment(index))
            raise
    return pairs


def _encode_at(encode: Callable[[object], JSONValue], value: object, position: int) -> JSONValue:
    try:
        return encode(value)
    except _UnwritableError as error:
        error.segments.append(index_segment(position))
        raise


def decode_pairs(
    data: list[JSONValue],
    decode_key: Callable[[object], object],
    decode_value: Callable[[object], object],
) -> dict[object, object]:
    """A dict from ``[[key, value], ...]``; keys must come back hashable."""
    built: dict[object, object] = {}
    for index, pair in enumerate(data):
        try:
            if type(pair) is not list or len(pair) != 2:
                raise _ConversionError("a [key, value] pair", describe(pair))
            key = _decode_at(decode_key, pair, 0)
            item = _decode_at(decode_value, pair, 1)
            try:
                built[key] = item
            except TypeError:
                raise _ConversionError("a hashable key", describe(pair[0]), ["[0]"]) from None
        except _ConversionError as error:
            error.segments.append(index_segment(index))
            raise
    return built


def _decode_at(decode: Callable[[object], object], pair: list[JSONValue], position: int) -> object:
    try:
        return decode(pair[position])
    except _ConversionError as error:
        error.segments.append(index_segment(position))
        raise


@dataclass(frozen=True, slots=True)
class OpenCodec:
    """``object``, ``Any``, ``JSONValue``, unbound type variables: the value says what it is."""

    tagged: Tagged

    expected = "any value"

    def encode(self, value: object) -> JSONValue:
        return self.tagged.encode_open(value)

    def decode(self, data: object) -> object:
        return self.tagged.decode_open(data)
