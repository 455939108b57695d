"""Typed values: JSON that says what type each open value was, so it loads back equal.

``dump`` writes a value's data, and ``parse`` rebuilds it from the type the caller
names; a value held where the declared type is open (``object``, ``Any``, a generic
``ToolResult[Any]``'s payload, a session slice) would come back as plain dicts and
lists. :func:`dump_typed` writes such values with their type name (``{"$type":
"billing.Invoice", ...fields}``) and :func:`parse_typed` reads them back as the same
classes. Where the declared type already says what the value is, the output is what
``dump`` writes. ``specs/SERDE.md`` ("Typed values") lists every form.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PosixPath, PurePath, PurePosixPath, PureWindowsPath, WindowsPath
from types import MappingProxyType
from typing import cast, get_origin
from uuid import UUID

from weakincentives.errors import ParseError, SchemaError, UnknownTypeError
from weakincentives.serde._failure import _ConversionError, describe, key_segment
from weakincentives.serde._json import JSONObject, JSONValue
from weakincentives.serde._registry import (
    BUILTIN_NAMES,
    _UnresolvedError,
    resolve_type,
    type_name,
)
from weakincentives.serde._typed_codecs import (
    TYPE_KEY,
    VALUE_KEY,
    OpenCodec,
    _UnknownNameError,
    _UnwritableError,
    build_collection,
    decode_items,
    decode_pairs,
    encode_items,
    encode_pairs,
    encode_set,
    exception_record,
    finite,
    recorded_exception,
)
from weakincentives.serde._typed_reflect import Plan, codec_for, plan_of

__all__ = ["decode_value", "dump_typed", "encode_value", "parse_typed"]

type _Writer = Callable[[object], JSONObject]
type _Reader = Callable[[JSONValue], object]

_BUILTIN_OF: dict[type[object], str] = {cls: name for name, cls in BUILTIN_NAMES.items()}
_JSON_SCALARS = frozenset({str, int, bool, type(None)})


class _Resolver:
    """Type names for ``type[X]`` values, with failures as the codecs' internal errors."""

    def name_of(self, cls: type[object]) -> str:
        try:
            return type_name(cls)
        except _UnresolvedError as error:
            raise _UnwritableError(f"the class {cls.__qualname__}", error.reason) from None

    def resolve(self, name: str) -> type[object]:
        try:
            return resolve_type(name)
        except _UnresolvedError as error:
            raise _UnknownNameError(name, error.reason) from None


class _Tagger:
    """Writes any supported value with its type name, and reads such objects back."""

    def __init__(self) -> None:
        self._writers: dict[type[object], _Writer] = {}
        self._readers: dict[str, _Reader] = {}
        self._plans: dict[type[object], Plan] = {}

    # -- open positions ------------------------------------------------------------------

    def encode_open(self, value: object) -> JSONValue:
        cls = type(value)
        if cls in _JSON_SCALARS:
            return cast(JSONValue, value)
        if cls is float:
            return finite(cast(float, value))
        if cls is list:
            return encode_items(cast(list[object], value), self.encode_open)
        if cls is dict and _plain_keys(cast(dict[object, object], value)):
            return self._encode_members(cast(dict[str, object], value))
        return self.tag(value)

    def _encode_members(self, value: Mapping[str, object]) -> JSONObject:
        out: JSONObject = {}
        for key, item in value.items():
            try:
                out[key] = self.encode_open(item)
            except _UnwritableError as error:
                error.segments.append(key_segment(key))
                raise
        return out

    def decode_open(self, data: object) -> object:
        cls = type(data)
        if cls in _JSON_SCALARS or cls is float:
            return data
        if type(data) is list:
            return decode_items(data, self.decode_open)
        if type(data) is dict:
            return self.untag(data) if TYPE_KEY in data else self._decode_members(data)
        raise _ConversionError("JSON data", describe(data))

    def _decode_members(self, data: Mapping[str, JSONValue]) -> dict[object, object]:
        out: dict[object, object] = {}
        for key, item in data.items():
            try:
                out[key] = self.decode_open(item)
            except _ConversionError as error:
                error.segments.append(key_segment(key))
                raise
        return out

    # -- writing -------------------------------------------------------------------------

    def tag(self, value: object) -> JSONObject:
        cls = type(value)
        writer = self._writers.get(cls)
        if writer is None:
            writer = self._writers.setdefault(cls, self._writer_for(cls))
        return writer(value)

    def _named(self, cls: type[object]) -> str:
        try:
            return type_name(cls)
        except _UnresolvedError as error:
            raise _UnwritableError(f"a value of type {cls.__qualname__}", error.reason) from None

    def _writer_for(self, cls: type[object]) -> _Writer:
        if dataclasses.is_dataclass(cls):
            plan = plan_of(cls, self, _RESOLVER)
            return lambda value: {TYPE_KEY: self._named(cls), **plan.encode(value)}
        if issubclass(cls, Enum):
            return lambda value: {
                TYPE_KEY: self._named(cls),
                VALUE_KEY: self.encode_open(cast(Enum, value).value),
            }
        if issubclass(cls, PurePath):
            return lambda value: {TYPE_KEY: self._named(cls), VALUE_KEY: str(value)}
        for base, writer in self._builtin_writers():
            if issubclass(cls, base):
                return writer
        if issubclass(cls, BaseException):
            return lambda value: {
                TYPE_KEY: "exception",
                VALUE_KEY: exception_record(cast(BaseException, value)),
            }
        if issubclass(cls, type):
            return lambda value: {
                TYPE_KEY: "type",
                VALUE_KEY: _RESOLVER.name_of(cast(type[object], value)),
            }
        return _refuse

    def _builtin_writers(self) -> Iterable[tuple[type[object], _Writer]]:
        # Most specific first: bool before int, datetime before date.
        yield type(None), lambda value: {TYPE_KEY: "none", VALUE_KEY: None}
        yield bool, lambda value: {TYPE_KEY: "bool", VALUE_KEY: bool(cast(bool, value))}
        yield int, lambda value: {TYPE_KEY: "int", VALUE_KEY: int(cast(int, value))}
        yield float, lambda value: {TYPE_KEY: "float", VALUE_KEY: finite(float(cast(float, value)))}
        yield str, lambda value: {TYPE_KEY: "str", VALUE_KEY: str.__str__(cast(str, value))}
        yield list, self._sequence_writer("list")
        yield tuple, self._sequence_writer("tuple")
        yield set, self._set_writer("set")
        yield frozenset, self._set_writer("frozenset")
        yield MappingProxyType, self._mapping_writer("mapping")
        yield Mapping, self._mapping_writer("dict")
        yield datetime, self._text_writer("datetime")
        yield date, self._text_writer("date")
        yield time, self._text_writer("time")
        yield UUID, self._text_writer("uuid")
        yield Decimal, self._text_writer("decimal")

    def _sequence_writer(self, name: str) -> _Writer:
        return lambda value: {
            TYPE_KEY: name,
            VALUE_KEY: _at_value(encode_items, cast(Iterable[object], value), self.encode_open),
        }

    def _set_writer(self, name: str) -> _Writer:
        return lambda value: {
            TYPE_KEY: name,
            VALUE_KEY: _at_value(encode_set, cast(frozenset[object], value), self.encode_open),
        }

    def _mapping_writer(self, name: str) -> _Writer:
        def write(value: object) -> JSONObject:
            mapping = cast(Mapping[object, object], value)
            try:
                if all(type(key) is str for key in mapping):
                    body: JSONValue = self._encode_members(cast(Mapping[str, object], mapping))
                else:
                    body = encode_pairs(mapping, self.encode_open, self.encode_open)
            except _UnwritableError as error:
                error.segments.append(key_segment(VALUE_KEY))
                raise
            return {TYPE_KEY: name, VALUE_KEY: body}

        return write

    def _text_writer(self, name: str) -> _Writer:
        def write(value: object) -> JSONObject:
            if isinstance(value, date | time):
                return {TYPE_KEY: name, VALUE_KEY: value.isoformat()}
            return {TYPE_KEY: name, VALUE_KEY: str(value)}

        return write

    # -- reading -------------------------------------------------------------------------

    def untag(self, data: JSONObject) -> object:
        name = data[TYPE_KEY]
        if type(name) is not str:
            raise _ConversionError("a type name (string)", describe(name), [key_segment(TYPE_KEY)])
        reader = self._reader(name)
        if reader is None:
            cls = _RESOLVER.resolve(name)
            plan = self._plans.get(cls)
            if plan is None and dataclasses.is_dataclass(cls):
                plan = self._plans.setdefault(cls, plan_of(cls, self, _RESOLVER))
            if plan is not None:
                return plan.decode(data)
            reader = self._class_reader(cls)
        if data.keys() != {TYPE_KEY, VALUE_KEY}:
            extra = sorted(set(data) - {TYPE_KEY, VALUE_KEY})
            if extra:
                raise _ConversionError(
                    f'only "{TYPE_KEY}" and "{VALUE_KEY}" members',
                    f"unknown member {extra[0]!r}",
                    [key_segment(extra[0])],
                )
            raise _ConversionError("a value (required member)", "nothing", [key_segment(VALUE_KEY)])
        try:
            return reader(data[VALUE_KEY])
        except _ConversionError as error:
            error.segments.append(key_segment(VALUE_KEY))
            raise

    def _reader(self, name: str) -> _Reader | None:
        reader = self._readers.get(name)
        if reader is None and name in _BUILTIN_READERS:
            reader = self._readers.setdefault(name, _BUILTIN_READERS[name](self))
        return reader

    def _class_reader(self, cls: type[object]) -> _Reader:
        if issubclass(cls, Enum):
            return lambda data: _enum_member(cls, self.decode_open(data))
        if issubclass(cls, PurePath):
            return lambda data: cls(_string(data, "a path string"))
        # A built-in value type named by its full name (builtins:tuple, datetime:date).
        reader = self._reader(_BUILTIN_OF[cls])
        assert reader is not None  # resolve_type only returns loadable classes
        return reader


def _plain_keys(value: Mapping[object, object]) -> bool:
    return TYPE_KEY not in value and all(type(key) is str for key in value)


def _at_value[V](
    encode: Callable[[V, Callable[[object], JSONValue]], list[JSONValue]],
    value: V,
    item: Callable[[object], JSONValue],
) -> list[JSONValue]:
    try:
        return encode(value, item)
    except _UnwritableError as error:
        error.segments.append(key_segment(VALUE_KEY))
        raise


def _refuse(value: object) -> JSONObject:
    raise _UnwritableError(f"a value of type {type(value).__qualname__}")


def _string(data: JSONValue, expected: str) -> str:
    if type(data) is str:
        return data
    raise _ConversionError(expected, describe(data))


def _enum_member(cls: type[Enum], value: object) -> Enum:
    try:
        return cls(value)
    except ValueError:
        raise _ConversionError(f"a {cls.__qualname__} value", describe(value)) from None


def _exact(cls: type[object], expected: str) -> Callable[[_Tagger], _Reader]:
    def make(_tagger: _Tagger) -> _Reader:
        def read(data: JSONValue) -> object:
            if type(data) is cls:
                return data
            raise _ConversionError(expected, describe(data))

        return read

    return make


def _float(_tagger: _Tagger) -> _Reader:
    def read(data: JSONValue) -> object:
        if type(data) is float:
            return data
        if type(data) is int:
            try:
                return float(data)
            except OverflowError:
                pass
        raise _ConversionError("a number", describe(data))

    return read


def _text_form(read: Callable[[str], object], expected: str) -> Callable[[_Tagger], _Reader]:
    def make(_tagger: _Tagger) -> _Reader:
        def parse_text(data: JSONValue) -> object:
            text = _string(data, expected)
            try:
                return read(text)
            except (ValueError, ArithmeticError):  # Decimal's InvalidOperation is arithmetic
                raise _ConversionError(expected, describe(data)) from None

        return parse_text

    return make


def _collection(cls: type[object]) -> Callable[[_Tagger], _Reader]:
    def make(tagger: _Tagger) -> _Reader:
        def read(data: JSONValue) -> object:
            if type(data) is not list:
                raise _ConversionError("an array", describe(data))
            return build_collection(cls, decode_items(data, tagger.decode_open))

        return read

    return make


def _mapping(read_only: bool) -> Callable[[_Tagger], _Reader]:
    def make(tagger: _Tagger) -> _Reader:
        def read(data: JSONValue) -> object:
            built: dict[object, object]
            if type(data) is dict:
                built = tagger._decode_members(data)
            elif type(data) is list:
                built = decode_pairs(data, tagger.decode_open, tagger.decode_open)
            else:
                raise _ConversionError(
                    "an object or an array of [key, value] pairs", describe(data)
                )
            return MappingProxyType(built) if read_only else built

        return read

    return make


def _none(_tagger: _Tagger) -> _Reader:
    def read(data: JSONValue) -> object:
        if data is None:
            return None
        raise _ConversionError("null", describe(data))

    return read


def _type(_tagger: _Tagger) -> _Reader:
    return lambda data: _RESOLVER.resolve(_string(data, "a type name (string)"))


def _exception(_tagger: _Tagger) -> _Reader:
    return recorded_exception


_BUILTIN_READERS: dict[str, Callable[[_Tagger], _Reader]] = {
    "none": _none,
    "bool": _exact(bool, "a boolean"),
    "int": _exact(int, "an integer"),
    "float": _float,
    "str": _exact(str, "a string"),
    "list": _collection(list),
    "tuple": _collection(tuple),
    "set": _collection(set),
    "frozenset": _collection(frozenset),
    "dict": _mapping(read_only=False),
    "mapping": _mapping(read_only=True),
    "datetime": _text_form(datetime.fromisoformat, "an ISO 8601 date-time string"),
    "date": _text_form(date.fromisoformat, "an ISO 8601 date string"),
    "time": _text_form(time.fromisoformat, "an ISO 8601 time string"),
    "uuid": _text_form(UUID, "a UUID string"),
    "decimal": _text_form(Decimal, "a decimal number string"),
    "pure_posix_path": _text_form(PurePosixPath, "a path string"),
    "pure_windows_path": _text_form(PureWindowsPath, "a path string"),
    "posix_path": _text_form(PosixPath, "a path string"),
    "windows_path": _text_form(WindowsPath, "a path string"),
    "type": _type,
    "exception": _exception,
}

_RESOLVER = _Resolver()
_TAGGER = _Tagger()


def encode_value(value: object, cls: object, segments: Iterable[str] = ()) -> JSONValue:
    """``value`` as typed JSON for the declared type ``cls``; SchemaError with a path if not."""
    codec = codec_for(cls, _TAGGER, _RESOLVER)
    try:
        return codec.encode(value)
    except _UnwritableError as error:
        path = "$" + "".join([*segments, *reversed(error.segments)])
        reason = f": {error.reason}" if error.reason else ""
        raise SchemaError(
            f"cannot dump {error.problem} at {path}{reason}",
            dataclass_type=error.owner,
            field_name=error.field,
        ) from None
    except RecursionError:
        raise SchemaError("cannot dump a value nested deeper than the recursion limit") from None


def decode_value(data: object, cls: object, segments: Iterable[str] = ()) -> object:
    """The value typed JSON stands for; ParseError or UnknownTypeError with a path if none."""
    codec = codec_for(cls, _TAGGER, _RESOLVER)
    target = _target(cls)
    try:
        value = codec.decode(data)
    except _ConversionError as error:
        error.segments.extend(reversed(list(segments)))
        if isinstance(error, _UnknownNameError):
            raise UnknownTypeError(
                type_name=error.name, path=error.path(), reason=error.reason
            ) from None
        raise error.to_error(target) from None
    except RecursionError:
        raise ParseError(
            path="$" + "".join(segments),
            expected="data nested less deeply",
            got="data nested too deeply to load",
            dataclass_type=target,
        ) from None
    # Where the declared type has no form of its own (object, a Protocol, a plain
    # class), whatever the data holds is the answer.
    root = None if isinstance(codec, OpenCodec) else cls if isinstance(cls, type) else target
    if root is not None and not isinstance(value, root):
        raise ParseError(
            path="$" + "".join(segments),
            expected=f"a {root.__qualname__}",
            got=f"a stored {type(value).__qualname__}",
            dataclass_type=target,
        )
    return value


def _target(cls: object) -> type[object] | None:
    origin = get_origin(cls) or cls
    if isinstance(origin, type) and dataclasses.is_dataclass(origin):
        return origin
    return None


def dump_typed(value: object, cls: object = object) -> JSONValue:
    """Write ``value`` as JSON that names the type of every value an open type holds.

    ``cls`` is the declared type of ``value`` (default ``object``: the root itself is
    tagged). Where a declared type says what a value is, the output is what ``dump``
    writes; a value of another class than declared, and every value in an open
    position (``object``, ``Any``, ``JSONValue``, a type variable), carries its type
    name: ``{"$type": "billing.Invoice", ...fields}`` for dataclasses,
    ``{"$type": "tuple", "value": [...]}`` for the rest. Raises SchemaError, with the
    path, for a value that cannot be stored (a function, a class defined inside a
    function without a registered name, NaN).
    """
    return encode_value(value, cls)


def parse_typed[T](cls: type[T], data: object) -> T:
    """Read what :func:`dump_typed` wrote for the declared type ``cls`` back into a value.

    Tagged values come back as the classes they name (through ``__init__``, so
    ``__post_init__`` checks run). Raises ParseError at the first value that does not
    fit, and UnknownTypeError naming a type name that does not resolve, both with the
    JSON path. When ``cls`` has a form of its own (not ``object``, a Protocol or a plain
    class), a root that is not a ``cls`` is a ParseError at ``$``.
    """
    return cast(T, decode_value(data, cls))
