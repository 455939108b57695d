"""Unions: pick the members that can take a value's JSON type, try them in order.

Every conversion is a pure function of the value, so a member that failed on a
value fails on it again; the outermost union conversion remembers such failures
for nested values, which keeps unions of recursive dataclasses linear in the size
of the data instead of exponential in its depth.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import assert_never, cast

from weakincentives.serde import _nodes
from weakincentives.serde._convert import Converter, choices_text, resolved
from weakincentives.serde._failure import _ConversionError, describe, key_segment
from weakincentives.serde._nodes import Node, Scalar

__all__ = ["tagged_union_converter", "union_converter"]


def union_converter(
    members: tuple[Node, ...], converters: tuple[Converter, ...], expected: str
) -> Converter:
    """Try the members that can take the value's JSON type, exact matches first.

    For ``int | float`` an integer goes to ``int`` and ``1.5`` to ``float``; among
    equally good members declaration order decides. When every candidate fails,
    the error of the one that got deepest into the value is reported.
    """
    table = _dispatch(members, converters)

    def convert(value: object) -> object:
        candidates = table.get(value.__class__)
        if candidates is None:
            if value.__class__ in _JSON_TYPES:
                raise _ConversionError(expected, describe(value))
            candidates = converters
        elif len(candidates) == 1:
            return candidates[0](value)
        if value.__class__ in _SCALAR_TYPES:
            best = _first_success(value, candidates, None)
        else:
            memo = _FAILURES.get()
            if memo is None:
                token = _FAILURES.set({})
                try:
                    best = _first_success(value, candidates, _FAILURES.get())
                finally:
                    _FAILURES.reset(token)
            else:
                best = _first_success(value, candidates, memo)
        if isinstance(best, _Success):
            return best.value
        if best is None or best.depth() == 0:
            raise _ConversionError(expected, describe(value))
        raise best

    return convert


type _Memo = dict[tuple[int, int], tuple[object, _ConversionError]]

# Failures of union members on nested values, for the duration of the outermost
# union conversion. Without it, a union of recursive members that all fail deep
# would try every member again at every level: members ** depth conversions.
_FAILURES: ContextVar[_Memo | None] = ContextVar("weakincentives_union_failures", default=None)
_SCALAR_TYPES = (type(None), bool, int, float, str)


@dataclass(frozen=True, slots=True)
class _Success:
    value: object


def _first_success(
    value: object, candidates: tuple[Converter, ...], memo: _Memo | None
) -> _Success | _ConversionError | None:
    """The first candidate's result, else the failure that got deepest."""
    best: _ConversionError | None = None
    for candidate in candidates:
        # Keyed by the function a reference resolves to: the same class reached from
        # two fields may be a compiled function in one and a late reference in the other.
        key = (id(value), id(resolved(candidate)))
        known = None if memo is None else memo.get(key)
        if known is not None:
            error = known[1].copy()
        else:
            try:
                return _Success(candidate(value))
            except _ConversionError as failure:
                error = failure
                if memo is not None:
                    # The value is kept alive with the entry, so its id cannot be reused.
                    memo[key] = (value, failure.copy())
        if best is None or error.depth() > best.depth():
            best = error
    return best


_JSON_TYPES = (type(None), bool, int, float, str, list, dict)


def tagged_union_converter(
    wire: str, table: dict[tuple[type, object], Converter], general: Converter
) -> Converter:
    """A union of dataclasses told apart by the value of their ``wire`` member."""
    expected = choices_text([cast(Scalar, value) for _, value in table])
    missing = object()

    def convert(value: object) -> object:
        if not isinstance(value, dict):
            return general(value)
        tag = value.get(wire, missing)
        if tag is missing:
            return general(value)
        try:
            member = table[(tag.__class__, tag)]
        except (KeyError, TypeError):
            raise _ConversionError(expected, describe(tag), [key_segment(wire)]) from None
        return member(value)

    return convert


def _accepted(node: Node) -> tuple[tuple[type, ...], tuple[type, ...]]:
    """JSON types a node takes as they are, and those it takes by widening."""
    match node:
        case _nodes.AnyNode():
            return _JSON_TYPES, ()
        case _nodes.NoneNode():
            return (type(None),), ()
        case _nodes.BoolNode():
            return (bool,), ()
        case _nodes.NumberNode(kind="int"):
            return (int,), (float,)
        case _nodes.NumberNode():
            return (float,), (int,)
        case _nodes.DecimalNode():
            return (str,), (int, float)
        case _nodes.StrNode() | _nodes.TemporalNode() | _nodes.UUIDNode() | _nodes.PathNode():
            return (str,), ()
        case _nodes.ChoiceNode(choices=choices):
            return tuple({wire.__class__ for wire, _ in choices}), ()
        case _nodes.ArrayNode() | _nodes.TupleNode():
            return (list,), ()
        case _nodes.MapNode() | _nodes.DataclassNode():
            return (dict,), ()
        case _nodes.UnionNode():
            raise AssertionError("unions are flattened during reflection")
        case _:
            assert_never(node)


def _dispatch(
    members: tuple[Node, ...], converters: tuple[Converter, ...]
) -> dict[type, tuple[Converter, ...]]:
    pairs = list(zip(members, converters, strict=True))
    table: dict[type, tuple[Converter, ...]] = {}
    for json_type in _JSON_TYPES:
        exact = [conv for member, conv in pairs if json_type in _accepted(member)[0]]
        loose = [conv for member, conv in pairs if json_type in _accepted(member)[1]]
        if exact or loose:
            table[json_type] = tuple(exact + loose)
    return table
