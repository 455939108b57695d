"""Compile type models into parse functions, once per (type, extra mode).

Each dataclass gets a function generated from source, like the ``__init__``
that ``dataclasses`` writes: the field names, wire names, defaults and the
simple scalar checks are written straight into the code, and everything else
is a call to a prebuilt converter. The source is registered with
:mod:`linecache`, so tracebacks and debuggers can show it.
"""

from __future__ import annotations

import re
import threading
from typing import Literal, assert_never, cast, get_origin

from weakincentives.serde import _nodes
from weakincentives.serde._codegen import generate_parser, parser_body, parser_namespace
from weakincentives.serde._convert import (
    Converter,
    LateConverter,
    array_converter,
    as_bool,
    as_decimal,
    as_float,
    as_int,
    as_none,
    as_path,
    as_str,
    as_uuid,
    choice_converter,
    choices_text,
    limited,
    map_converter,
    passthrough,
    temporal_converter,
    tuple_converter,
)
from weakincentives.serde._json_check import check_json_value
from weakincentives.serde._nodes import NO_LIMITS, Model, Node
from weakincentives.serde._reflect import model_of
from weakincentives.serde._union import tagged_union_converter, union_converter

__all__ = ["Extra", "compile_node", "converter_for", "expected_text", "unlocated_body"]

type Extra = Literal["forbid", "ignore"]

_LOCK = threading.RLock()
# Keyed by (extra mode, located): located parsers report where data fails; the others
# only that it does (parse_json's one-pass route; see _onepass.py).
_DATACLASS: dict[tuple[Extra, bool], dict[object, Converter]] = {
    (extra, located): {} for extra in ("forbid", "ignore") for located in (True, False)
}
_MISSING = object()
_UNSAFE = re.compile(r"\W")


def expected_text(node: Node) -> str:
    """What a node expects, in the words of the error messages."""
    match node:
        case _nodes.AnyNode():
            return "any JSON value"
        case _nodes.NoneNode():
            return "null"
        case _nodes.BoolNode():
            return "a boolean"
        case _nodes.NumberNode(kind="int"):
            return "an integer"
        case _nodes.NumberNode():
            return "a finite number"
        case _nodes.DecimalNode():
            return "a decimal number or numeric string"
        case _nodes.StrNode():
            return "a string"
        case _nodes.ChoiceNode(choices=choices):
            return choices_text([wire for wire, _ in choices])
        case _nodes.TemporalNode(cls=cls):
            return f"an ISO 8601 {cls.__name__} string"
        case _nodes.UUIDNode():
            return "a UUID string"
        case _nodes.PathNode():
            return "a path string"
        case _nodes.ArrayNode() | _nodes.TupleNode():
            return "an array"
        case _nodes.MapNode():
            return "an object"
        case _nodes.DataclassNode(key=key):
            return f"an object ({_class_of(key).__name__})"
        case _nodes.UnionNode(members=members):
            return " or ".join(expected_text(member) for member in members)
        case _:
            assert_never(node)


def _class_of(key: object) -> type[object]:
    origin = get_origin(key)
    return origin if isinstance(origin, type) else cast(type[object], key)


class _Compiler:
    """One compilation run; knows which dataclasses are being compiled right now."""

    def __init__(self, extra: Extra, located: bool = True) -> None:
        self.extra = extra
        self.located = located
        self.cache = _DATACLASS[extra, located]
        self.pending: dict[object, list[Converter]] = {}

    def convert(self, node: Node) -> Converter:
        match node:
            case _nodes.AnyNode(json_only=json_only):
                return check_json_value if json_only else passthrough
            case _nodes.NoneNode():
                return as_none
            case _nodes.BoolNode():
                return as_bool
            case _nodes.NumberNode(kind=kind, limits=limits):
                base = as_int if kind == "int" else as_float
                return base if limits is NO_LIMITS else limited(base, limits, "", "")
            case _nodes.DecimalNode(limits=limits):
                return as_decimal if limits is NO_LIMITS else limited(as_decimal, limits, "", "")
            case _nodes.StrNode(limits=limits):
                if limits is NO_LIMITS:
                    return as_str
                return limited(as_str, limits, "a string", "character")
            case _nodes.ChoiceNode():
                return choice_converter(node)
            case _nodes.TemporalNode(cls=cls):
                return temporal_converter(cls)
            case _nodes.UUIDNode():
                return as_uuid
            case _nodes.PathNode(cls=cls):
                return as_path(cls)
            case _nodes.ArrayNode(item=item, container=container, limits=limits):
                array = array_converter(self.convert(item), container)
                if limits is NO_LIMITS:
                    return array
                return limited(array, limits, "an array", "item")
            case _nodes.TupleNode(items=items):
                return tuple_converter(tuple(self.convert(item) for item in items))
            case _nodes.MapNode(value=value, limits=limits):
                mapping = map_converter(node, self.convert(value))
                if limits is NO_LIMITS:
                    return mapping
                return limited(mapping, limits, "an object", "member")
            case _nodes.UnionNode(members=members):
                converters = tuple(self.convert(member) for member in members)
                general = union_converter(members, converters, expected_text(node))
                return _tagged(members, converters, general) or general
            case _nodes.DataclassNode(key=key):
                return self.dataclass(key)
            case _:
                assert_never(node)

    def dataclass(self, key: object) -> Converter:
        done = self.cache.get(key)
        if done is not None:
            return done
        cell = self.pending.get(key)
        if cell is not None:
            # A recursive reference: call through a cell filled once compiled.
            return LateConverter(cell)
        cell = self.pending[key] = []
        function = generate_parser(
            model_of(key), self.convert, self.extra == "forbid", located=self.located
        )
        cell.append(function)
        self.cache[key] = function
        del self.pending[key]
        return function


def _tagged(
    members: tuple[Node, ...], converters: tuple[Converter, ...], general: Converter
) -> Converter | None:
    """Dispatch on a discriminator field when the union's dataclasses have one.

    A discriminator is a field with the same wire name in every dataclass member,
    typed as a Literal/Enum, whose values no two members share. An object that
    carries it goes straight to its member (so errors come from the right
    class); anything else goes through the general union converter.
    """
    classes = [
        (model_of(member.key), convert)
        for member, convert in zip(members, converters, strict=True)
        if isinstance(member, _nodes.DataclassNode)
    ]
    if len(classes) < 2:
        return None
    for candidate in classes[0][0].fields:
        table: dict[tuple[type, object], Converter] = {}
        for model, convert in classes:
            tag = next((f for f in model.fields if f.wire == candidate.wire), None)
            if tag is None or not isinstance(tag.node, _nodes.ChoiceNode):
                break
            keys = [(wire.__class__, wire) for wire, _ in tag.node.choices]
            if any(key in table for key in keys):
                break
            table.update(dict.fromkeys(keys, convert))
        else:
            return tagged_union_converter(candidate.wire, table, general)
    return None


def converter_for(key: object, extra: Extra, *, located: bool = True) -> Converter:
    """The compiled converter of a dataclass key, compiling it on first use."""
    function = _DATACLASS[extra, located].get(key)
    if function is None:
        with _LOCK:
            function = _Compiler(extra, located).dataclass(key)
    return function


def compile_node(node: Node, extra: Extra, *, located: bool = True) -> Converter:
    """A converter for any node (used for non-dataclass roots)."""
    with _LOCK:
        return _Compiler(extra, located).convert(node)


def unlocated_body(key: object, extra: Extra) -> tuple[Model, dict[str, object], list[str]]:
    """The body of ``key``'s parse function that does not locate failures, and its constants.

    For ``parse_json``'s one-pass route, which writes the body into a function of
    its own; nested dataclasses are the cached parsers that do not locate either.
    """
    with _LOCK:
        model = model_of(key)
        namespace = parser_namespace(model)
        convert = _Compiler(extra, located=False).convert
        return model, namespace, parser_body(model, convert, extra == "forbid", False, namespace)
