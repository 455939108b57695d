"""The public parse entry points: JSON-shaped data or JSON text into typed values."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from typing import Literal, cast, get_origin

from weakincentives.errors import ParseError, SerdeError
from weakincentives.serde._compile import Extra, compile_node, converter_for
from weakincentives.serde._convert import Converter
from weakincentives.serde._failure import ConversionError, describe
from weakincentives.serde._reflect import Where, node_of

__all__ = ["cache_key", "parse", "parse_json"]

_ROOTS: dict[str, dict[object, Converter]] = {"forbid": {}, "ignore": {}}


class _NonFiniteError(ValueError):
    """Raised while decoding JSON that spells NaN or Infinity (not JSON numbers)."""


def _reject_constant(name: str) -> object:
    raise _NonFiniteError(name)


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _root(cls: object, extra: str) -> Converter:
    if extra not in _ROOTS:
        raise SerdeError(f"extra must be 'forbid' or 'ignore', got {extra!r}")
    mode = cast(Extra, extra)
    origin = get_origin(cls)
    if dataclasses.is_dataclass(cls) or dataclasses.is_dataclass(origin):
        converter = converter_for(cls, mode)
    else:
        converter = compile_node(node_of(cls, Where()), mode)
    # An unhashable root such as Annotated[int, {...}] is simply not cached.
    with contextlib.suppress(TypeError):
        _ROOTS[mode][cache_key(cls)] = converter
    return converter


def cache_key(hint: object) -> object:
    """A cache key that tells ``int | str`` from ``str | int`` (equal, but parsed differently)."""
    return hint if isinstance(hint, type) else (hint, repr(hint))


def _target(cls: object) -> type[object] | None:
    origin = get_origin(cls) or cls
    if isinstance(origin, type) and dataclasses.is_dataclass(origin):
        return origin
    return None


def parse[T](cls: type[T], data: object, *, extra: Literal["forbid", "ignore"] = "forbid") -> T:
    """Build a ``cls`` value from JSON-shaped data, checking every type and constraint.

    ``extra="forbid"`` rejects object members no field declares; ``"ignore"`` drops
    them. A value that already is a ``cls`` instance is returned as it is. Raises
    :class:`~weakincentives.errors.ParseError` at the first problem, with its JSON
    path, and :class:`~weakincentives.errors.SchemaError` if ``cls`` is unsupported.
    """
    try:
        converter = _ROOTS[extra][cls if isinstance(cls, type) else cache_key(cls)]
    except (KeyError, TypeError):
        converter = _root(cls, extra)
    try:
        return cast(T, converter(data))
    except ConversionError as error:
        raise error.to_error(_target(cls)) from None
    except RecursionError:
        raise ParseError(
            path="$",
            expected="data nested less deeply",
            got="data nested too deeply to parse",
            dataclass_type=_target(cls),
        ) from None


def parse_json[T](
    cls: type[T], text: str | bytes, *, extra: Literal["forbid", "ignore"] = "forbid"
) -> T:
    """Decode JSON text (UTF-8/16/32 bytes or str) and :func:`parse` it into ``cls``.

    Malformed JSON, including ``NaN`` and ``Infinity``, is a ParseError at ``$``
    saying where decoding stopped.
    """
    try:
        if not isinstance(text, str):
            if not isinstance(text, bytes | bytearray):
                raise ConversionError("JSON text (str or bytes)", describe(text))
            text = bytes(text).decode(json.detect_encoding(text), "surrogatepass")
        data = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        got = f"invalid JSON ({error.msg} at line {error.lineno} column {error.colno})"
        raise ParseError(
            path="$", expected="valid JSON", got=got, dataclass_type=_target(cls)
        ) from None
    except _NonFiniteError as error:
        got = f"invalid JSON ({error.args[0]} is not a JSON number)"
        raise ParseError(
            path="$", expected="valid JSON", got=got, dataclass_type=_target(cls)
        ) from None
    except UnicodeDecodeError as error:
        got = f"undecodable bytes ({error.reason} at byte {error.start})"
        raise ParseError(
            path="$", expected="valid JSON", got=got, dataclass_type=_target(cls)
        ) from None
    except ConversionError as error:
        raise error.to_error(_target(cls)) from None
    except RecursionError:
        raise ParseError(
            path="$",
            expected="valid JSON",
            got="JSON nested too deeply to decode",
            dataclass_type=_target(cls),
        ) from None
    return parse(cls, data, extra=extra)
