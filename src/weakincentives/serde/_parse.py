"""The public parse entry points: JSON-shaped data or JSON text into typed values."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Literal, cast, get_origin

from weakincentives.errors import ParseError, SerdeError
from weakincentives.serde._compile import Extra, compile_node, converter_for
from weakincentives.serde._convert import Converter
from weakincentives.serde._failure import _ConversionError
from weakincentives.serde._loads import _DecodeError, decode
from weakincentives.serde._onepass import MISS, Route, one_pass_route
from weakincentives.serde._reflect import Where, node_of

__all__ = ["cache_key", "parse", "parse_json"]

_ROOTS: dict[str, dict[object, Converter]] = {"forbid": {}, "ignore": {}}


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
    except _ConversionError as error:
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
    """Decode JSON text with :func:`loads` and :func:`parse` it into ``cls``.

    Text :func:`loads` refuses (malformed, ``NaN``, too deep, ...) is a ParseError
    at ``$`` saying what was wrong and where. Valid text usually takes a one-pass
    route made for ``cls`` (``_onepass.py``); anything else gets exactly the answer
    of decoding with every check and then parsing.
    """
    try:
        route = _ROUTES[extra][cls if isinstance(cls, type) else cache_key(cls)]
    except (KeyError, TypeError):
        route = _one_pass(cls, extra)
    value: T = route(text)  # type: ignore[assignment]  # no cast() call on the hot path
    if value is not MISS:
        return value
    try:
        data = decode(text)
    except _DecodeError as failure:
        raise failure.to_error(_target(cls)) from None
    return parse(cls, data, extra=extra)


_ROUTES: dict[str, dict[object, Route]] = {"forbid": {}, "ignore": {}}


def _one_pass(cls: object, extra: str) -> Route:
    if extra not in _ROUTES:
        raise SerdeError(f"extra must be 'forbid' or 'ignore', got {extra!r}")
    route = one_pass_route(cls, cast(Extra, extra))
    with contextlib.suppress(TypeError):  # an unhashable root is not cached
        _ROUTES[extra][cache_key(cls)] = route
    return route
