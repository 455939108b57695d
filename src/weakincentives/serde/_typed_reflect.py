"""Declared types to typed-value codecs, and the field plan of each dataclass; built once.

Reflection never refuses a declared type: what serde has no plain form for (a
Protocol, a plain class, ``Callable``) is an open position, where the value itself
says what it is and a value that cannot be stored is refused with its path.
"""

from __future__ import annotations

import dataclasses
import threading
import types
import typing
from collections.abc import (
    Callable,
    Mapping,
    MutableMapping,
    MutableSequence,
    MutableSet,
    Sequence,
)
from collections.abc import Set as AbstractSet
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from types import MappingProxyType
from typing import Annotated, Any, Literal, TypeAliasType, TypeVar, get_args, get_origin
from uuid import UUID

from weakincentives._bounded import exception_text, listing, quote
from weakincentives._direct import direct_constructor
from weakincentives.serde._failure import _ConversionError, describe, key_segment
from weakincentives.serde._json import JSONObject, JSONValue
from weakincentives.serde._limits import read_alias
from weakincentives.serde._reflect import Where, _hints
from weakincentives.serde._typed_codecs import (
    TYPE_KEY,
    ArrayCodec,
    Codec,
    EnumCodec,
    ExactCodec,
    ExceptionCodec,
    FixedTupleCodec,
    FloatCodec,
    KeyMode,
    LiteralCodec,
    MapCodec,
    OpenCodec,
    OptionalCodec,
    StringFormCodec,
    Tagged,
    TypeCodec,
    UnionCodec,
    _UnwritableError,
    is_tagged,
)

__all__ = ["DataclassCodec", "Plan", "Resolver", "codec_for", "plan_of"]

_ARRAYS: dict[object, type[object]] = {
    list: list,
    MutableSequence: list,
    Sequence: tuple,
    tuple: tuple,
    set: set,
    MutableSet: set,
    frozenset: frozenset,
    AbstractSet: frozenset,
}
_MAPS: dict[object, type[object]] = {
    dict: dict,
    MutableMapping: dict,
    Mapping: MappingProxyType,
}
_STRING_FORMS: dict[type[object], tuple[str, typing.Callable[[str], object]]] = {
    datetime: ("an ISO 8601 date-time string", datetime.fromisoformat),
    date: ("an ISO 8601 date string", date.fromisoformat),
    time: ("an ISO 8601 time string", time.fromisoformat),
    UUID: ("a UUID string", UUID),
    Decimal: ("a decimal number string", Decimal),
}
_EXACT: dict[type[object], str] = {
    bool: "a boolean",
    int: "an integer",
    str: "a string",
    type(None): "null",
}

_CODECS: dict[object, Codec] = {}
_PLANS: dict[object, Plan] = {}
_LOCK = threading.RLock()


class Resolver(typing.Protocol):
    """Type names both ways, for ``type[X]`` values (see ``_registry``)."""

    def name_of(self, cls: type[object]) -> str:
        """The name ``cls`` is written under; raises ``_UnwritableError`` when none would load."""
        ...

    def resolve(self, name: str) -> type[object]:
        """The class ``name`` stands for; raises ``_UnknownNameError`` when none."""
        ...


def codec_for(hint: object, tagged: Tagged, resolver: Resolver) -> Codec:
    """The codec of a declared type, cached per type (``int | str`` apart from ``str | int``)."""
    key = hint if isinstance(hint, type) else (hint, repr(hint))
    try:
        return _CODECS[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable hint (Annotated with a dict) is built every time
        return _Builder(tagged, resolver, {}).build(hint)
    with _LOCK:
        codec = _CODECS.get(key)
        if codec is None:
            codec = _CODECS[key] = _Builder(tagged, resolver, {}).build(hint)
    return codec


def plan_of(key: object, tagged: Tagged, resolver: Resolver) -> Plan:
    """The field plan of a dataclass (or of a parametrised generic one such as ``Box[int]``)."""
    plan = _PLANS.get(key)
    if plan is None:
        with _LOCK:
            plan = _PLANS.get(key)
            if plan is None:
                plan = _PLANS[key] = _build_plan(key, tagged, resolver)
    return plan


class _Builder:
    """Turns one declared type into a codec; ``typevars`` binds a generic's parameters."""

    def __init__(
        self, tagged: Tagged, resolver: Resolver, typevars: Mapping[object, object]
    ) -> None:
        self.tagged = tagged
        self.resolver = resolver
        self.typevars = typevars
        self.expanding: set[TypeAliasType] = set()

    def build(self, hint: object) -> Codec:
        if isinstance(hint, TypeAliasType):
            # JSONValue and other recursive aliases: the value says what it is.
            if hint is JSONValue or hint is JSONObject or hint in self.expanding:
                return self.open()
            self.expanding.add(hint)
            try:
                return self.build(hint.__value__)
            finally:
                self.expanding.discard(hint)
        if isinstance(hint, TypeVar):
            bound = self.typevars.get(hint, hint.__bound__)
            return self.open() if bound is None else self.build(bound)
        if isinstance(hint, typing.NewType):
            return self.build(hint.__supertype__)
        if hint is Any or hint is object:
            return self.open()
        if hint is None:
            return self.build(type(None))
        if isinstance(hint, type):
            return self.build_class(hint)
        return self.build_generic(hint, get_origin(hint), get_args(hint))

    def open(self) -> Codec:
        return OpenCodec(self.tagged)

    def build_class(self, cls: type[object]) -> Codec:
        if cls in _EXACT:
            return ExactCodec(cls, _EXACT[cls], self.tagged)
        if cls is float:
            return FloatCodec(self.tagged)
        if cls in _STRING_FORMS:
            expected, read = _STRING_FORMS[cls]
            return StringFormCodec(cls, expected, _text, read, self.tagged)
        if issubclass(cls, PurePath):
            return StringFormCodec(cls, "a path string", str, cls, self.tagged)
        if issubclass(cls, Enum):
            return EnumCodec(cls, self.tagged)
        if dataclasses.is_dataclass(cls):
            return DataclassCodec(cls, self.tagged, self.resolver)
        if issubclass(cls, BaseException):
            return ExceptionCodec(self.tagged)
        if cls is type:
            return TypeCodec(self.resolver.name_of, self.resolver.resolve, self.tagged)
        if cls in _ARRAYS:
            return ArrayCodec(_ARRAYS[cls], self.open(), self.tagged)
        if cls in _MAPS:
            return self.build_map(str, Any, _MAPS[cls])
        return self.open()  # a Protocol or a class serde has no form for: the value decides

    def build_generic(self, hint: object, origin: object, args: tuple[Any, ...]) -> Codec:
        if origin is Annotated:
            return self.build(args[0])
        if origin is Literal:
            return LiteralCodec(args, self.tagged)
        if origin is typing.Union or origin is types.UnionType:
            return self.build_union(args)
        if origin is type:
            return TypeCodec(self.resolver.name_of, self.resolver.resolve, self.tagged)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return FixedTupleCodec(tuple(self.build(arg) for arg in args), self.tagged)
        if origin in _ARRAYS:
            item = self.build(args[0]) if args else self.open()
            return ArrayCodec(_ARRAYS[origin], item, self.tagged)
        if origin in _MAPS:
            key, value = args if len(args) == 2 else (str, Any)
            return self.build_map(key, value, _MAPS[origin])
        if isinstance(origin, type) and dataclasses.is_dataclass(origin):
            concrete = tuple(self.substitute(arg) for arg in args)
            return DataclassCodec(typing.cast(Any, origin)[concrete], self.tagged, self.resolver)
        if isinstance(origin, TypeAliasType):  # a generic alias: type Pair[T] = tuple[T, T]
            bound: dict[object, object] = dict(zip(origin.__type_params__, args, strict=False))
            return _Builder(self.tagged, self.resolver, {**self.typevars, **bound}).build(
                origin.__value__
            )
        return self.open()  # Callable[...] and the like: the value decides

    def substitute(self, hint: object) -> object:
        """``hint`` with the type variables this builder binds replaced."""
        if isinstance(hint, TypeVar):
            return self.typevars.get(hint, hint.__bound__ or Any)
        parameters = getattr(hint, "__parameters__", ())
        if parameters:
            return typing.cast(Any, hint)[tuple(self.substitute(p) for p in parameters)]
        return hint

    def build_union(self, args: tuple[object, ...]) -> Codec:
        members = [self.build(arg) for arg in args]
        if any(isinstance(member, OpenCodec) for member in members):
            return self.open()
        others = [arg for arg in args if arg is not type(None)]
        if len(others) == 1:
            return OptionalCodec(self.build(others[0]))
        scalars = frozenset(arg for arg in args if arg in (bool, int, float, str, type(None)))
        literals = tuple(member for member in members if isinstance(member, LiteralCodec))
        return UnionCodec(typing.cast(frozenset[type[object]], scalars), literals, self.tagged)

    def build_map(self, key: object, value: object, container: type[object]) -> Codec:
        key_codec = self.build(key)
        mode: KeyMode
        if key is str or isinstance(key_codec, OpenCodec):
            mode = "str"  # keys that are not all str tag the whole mapping
        elif key is int:
            mode = "int"
        elif _named_keys(key_codec):
            mode = "named"
        else:
            mode = "pairs"
        return MapCodec(
            mode=mode,
            key=key_codec,
            value=self.build(value),
            container=container,
            tagged=self.tagged,
        )


def _named_keys(codec: Codec) -> bool:
    """Whether every key the codec writes is a string: a str enum or a Literal of strings."""
    if isinstance(codec, EnumCodec):
        return all(isinstance(member.value, str) for member in codec.cls)
    if isinstance(codec, LiteralCodec):
        return all(isinstance(wire, str) for wire, _ in codec.choices)
    return False


def _text(value: object) -> str:
    isoformat = getattr(value, "isoformat", None)
    return isoformat() if callable(isoformat) else str(value)


class DataclassCodec:
    """A dataclass: an object of its fields, each written by its own declared type."""

    __slots__ = ("_plan", "cls", "expected", "key", "resolver", "tagged")

    def __init__(self, key: object, tagged: Tagged, resolver: Resolver) -> None:
        self.key = key
        self.cls: type[object] = typing.cast(type[object], get_origin(key) or key)
        self.tagged = tagged
        self.resolver = resolver
        self.expected = f"an object ({self.cls.__qualname__})"
        self._plan: Plan | None = None

    def plan(self) -> Plan:
        """The field plan, built on first use (so recursive dataclasses can refer to themselves)."""
        if self._plan is None:
            self._plan = plan_of(self.key, self.tagged, self.resolver)
        return self._plan

    def encode(self, value: object) -> JSONValue:
        if type(value) is self.cls:
            return self.plan().encode(value)
        return self.tagged.tag(value)

    def decode(self, data: object) -> object:
        if is_tagged(data):
            return self.tagged.untag(data)
        if type(data) is dict:
            return self.plan().decode(data)
        raise _ConversionError(self.expected, describe(data))


@dataclasses.dataclass(frozen=True, slots=True)
class _Field:
    name: str
    wire: str
    codec: Codec
    required: bool


type _Writer = tuple[str, str, type[object] | None, Callable[[object], JSONValue]]
type _Reader = tuple[str, type[object] | None, Callable[[object], object]]


class Plan:
    """How one dataclass's init fields are written and read, in declaration order.

    Fields declared ``str``, ``int`` or ``bool`` holding exactly that class are copied
    without a codec call, which is most fields of most records.
    """

    __slots__ = ("build", "cls", "fields", "known", "readers", "writers")

    def __init__(self, cls: type[object], fields: tuple[_Field, ...]) -> None:
        self.cls = cls
        self.fields = fields
        # Built exactly as __init__ would, minus the frozen __setattr__ per field, when
        # __init__ would do nothing else (no __post_init__, generated, slotted).
        try:
            self.build: Callable[..., object] = direct_constructor(cls)
        except TypeError:
            self.build = cls
        self.writers: tuple[_Writer, ...] = tuple(
            (field.name, field.wire, _plain_class(field.codec), field.codec.encode)
            for field in fields
        )
        self.readers: dict[str, _Reader] = {
            field.wire: (field.name, _plain_class(field.codec), field.codec.decode)
            for field in fields
        }
        self.known = listing([field.wire for field in fields], limit=10)

    def encode(self, value: object) -> JSONObject:
        """The fields of ``value`` as an object keyed by wire name."""
        out: JSONObject = {}
        for name, wire, plain, encode in self.writers:
            item = getattr(value, name)
            if type(item) is plain:
                out[wire] = item  # type: ignore[assignment]  # str, int or bool
                continue
            try:
                out[wire] = encode(item)
            except _UnwritableError as error:
                error.segments.append(key_segment(wire))
                if error.owner is None:
                    error.owner, error.field = self.cls, name
                raise
        return out

    def decode(self, data: JSONObject) -> object:
        """A new instance built through ``__init__`` from an object of its fields.

        The ``$type`` member of a tagged object is skipped; any other unknown member is
        an error, and so is a missing field without a default.
        """
        arguments: dict[str, object] = {}
        readers = self.readers
        for wire, item in data.items():
            reader = readers.get(wire)
            if reader is None:
                if wire == TYPE_KEY:
                    continue
                raise _ConversionError(
                    f"only the fields {self.known} (unknown fields are forbidden)",
                    f"unknown field {quote(wire)}",
                    [key_segment(wire)],
                )
            name, plain, decode = reader
            if type(item) is plain:
                arguments[name] = item
                continue
            try:
                arguments[name] = decode(item)
            except _ConversionError as error:
                error.segments.append(key_segment(wire))
                raise
        if len(arguments) < len(self.fields):
            for field in self.fields:
                if field.required and field.name not in arguments:
                    raise _ConversionError(
                        "a value (required field)", "nothing", [key_segment(field.wire)]
                    )
        try:
            return self.build(**arguments)
        except (TypeError, ValueError) as error:
            raise _ConversionError(
                f"a valid {self.cls.__qualname__}", exception_text(error)
            ) from None


def _plain_class(codec: Codec) -> type[object] | None:
    """The class a field's value is copied as is for: ``str``, ``int`` or ``bool``, if declared."""
    if isinstance(codec, ExactCodec) and codec.cls is not type(None):
        return codec.cls
    return None


def _build_plan(key: object, tagged: Tagged, resolver: Resolver) -> Plan:
    cls = typing.cast(Any, get_origin(key) or key)
    typevars: dict[object, object] = {}
    if key is not cls:
        typevars = dict(zip(getattr(cls, "__parameters__", ()), get_args(key), strict=False))
    builder = _Builder(tagged, resolver, typevars)
    hints = _hints(cls)
    fields: list[_Field] = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        where = Where(cls, field.name, typevars)
        wire = read_alias(field.metadata, where) or field.name
        if wire == TYPE_KEY:
            raise where.error(f"the wire name {TYPE_KEY!r} is reserved for stored type names")
        required = (
            field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        )
        if not _stored(field.metadata, where):
            if required:
                raise where.error(
                    "a field that is not stored (metadata stored=False) needs a default "
                    "to be loaded with"
                )
            continue
        fields.append(_Field(field.name, wire, builder.build(hints[field.name]), required))
    return Plan(cls, tuple(fields))


def _stored(metadata: Mapping[object, object], where: Where) -> bool:
    """The ``stored`` field metadata: False keeps a field out of typed values and documents."""
    stored = metadata.get("stored", True)
    if not isinstance(stored, bool):
        raise where.error(f"metadata 'stored' must be True or False, got {stored!r}")
    return stored
