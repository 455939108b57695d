"""JSON Schema (Draft 2020-12) from the reflected type model, cached per (type, strict).

Nested dataclasses are written inline, except those on a reference cycle,
which go to ``$defs`` (a recursive root refers to itself as ``#``). The cache
keeps JSON text and every call decodes a fresh copy, so a caller that edits
the returned dict cannot change what the next caller gets.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from typing import assert_never, get_args, get_origin

from weakincentives.errors import SchemaError
from weakincentives.serde import _nodes
from weakincentives.serde._convert import DECIMAL_PATTERN
from weakincentives.serde._dump import dump
from weakincentives.serde._json import JSONObject, JSONValue
from weakincentives.serde._nodes import MISSING, FieldModel, Limits, Node, Notes
from weakincentives.serde._reflect import Where, model_of, node_of

__all__ = ["schema", "schema_text"]

_CACHE: dict[tuple[object, bool], str] = {}
_LOCK = threading.RLock()
_UNSAFE = re.compile(r"\W+")
_JSON_TYPE = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}
_FORMATS = {"datetime": "date-time", "date": "date", "time": "time"}
_EMPTY_FACTORIES: dict[object, JSONValue] = {list: [], tuple: [], set: [], frozenset: [], dict: {}}


def schema(cls: type[object], *, strict: bool = True) -> JSONObject:
    """The JSON Schema of ``cls``, as a fresh dict the caller may change.

    ``strict=True`` writes what OpenAI strict function calling asks for: every
    property listed in ``required`` (optional values are unions with null),
    ``additionalProperties: false`` on every dataclass object, and no ``default``
    keywords. ``strict=False`` lists only the fields without defaults in
    ``required`` and shows the defaults. Raises SchemaError for types serde does
    not support.
    """
    result = json.loads(schema_text(cls, strict=strict))
    if not isinstance(result, dict):  # json.dumps of a dict always decodes to a dict
        raise AssertionError(result)
    return result


def schema_text(cls: object, *, strict: bool) -> str:
    """The cached schema of ``cls`` as compact JSON text."""
    key = (cls if isinstance(cls, type) else (cls, repr(cls)), strict)
    text = _CACHE.get(key)
    if text is None:
        with _LOCK:
            text = _CACHE.get(key)
            if text is None:
                document = _Writer(cls, strict).document()
                text = json.dumps(document, separators=(",", ":"), allow_nan=False)
                _CACHE[key] = text
    return text


def _is_dataclass_key(key: object) -> bool:
    return dataclasses.is_dataclass(get_origin(key) or key)


def _references(node: Node) -> list[object]:
    """Dataclass keys a node refers to directly."""
    match node:
        case _nodes.DataclassNode(key=key):
            return [key]
        case _nodes.ArrayNode(item=item):
            return _references(item)
        case _nodes.TupleNode(items=items):
            return [key for item in items for key in _references(item)]
        case _nodes.MapNode(value=value):
            return _references(value)
        case _nodes.UnionNode(members=members):
            return [key for member in members for key in _references(member)]
        case _:
            return []


def _cyclic(root: object) -> set[object]:
    """Dataclass keys reachable from ``root`` that can reach themselves."""
    edges: dict[object, list[object]] = {}
    stack = [root]
    while stack:
        key = stack.pop()
        if key in edges:
            continue
        edges[key] = [ref for field in model_of(key).fields for ref in _references(field.node)]
        stack.extend(edges[key])
    cyclic: set[object] = set()
    for start, targets in edges.items():
        seen: set[object] = set()
        frontier = list(targets)
        while frontier:
            key = frontier.pop()
            if key == start:
                cyclic.add(start)
                break
            if key not in seen:
                seen.add(key)
                frontier.extend(edges[key])
    return cyclic


class _Writer:
    """Writes one schema document."""

    def __init__(self, root: object, strict: bool) -> None:
        self.root = root
        self.strict = strict
        self.cyclic: set[object] = _cyclic(root) if _is_dataclass_key(root) else set()
        self.defs: dict[str, JSONObject] = {}
        self.def_names: dict[object, str] = {}

    def document(self) -> JSONObject:
        if _is_dataclass_key(self.root):
            result = self.dataclass(self.root)
        else:
            result = self.node(node_of(self.root, Where()))
        if self.defs:
            result["$defs"] = dict(sorted(self.defs.items()))
        return result

    def node(self, node: Node) -> JSONObject:
        result = self.bare(node)
        if node.notes is not None:
            result = self.annotate(result, node.notes)
        return result

    def annotate(self, result: JSONObject, notes: Notes) -> JSONObject:
        if "$ref" in result:
            # Keywords next to $ref are not accepted everywhere; wrap the reference.
            result = {"anyOf": [result]}
        head: JSONObject = {}
        if notes.title is not None:
            head["title"] = notes.title
        if notes.description is not None:
            head["description"] = notes.description
        # Annotations go first (easier to read in a prompt) and win over the class docstring.
        result = {**head, **{key: value for key, value in result.items() if key not in head}}
        if notes.examples is not None:
            result["examples"] = [dump(example) for example in notes.examples]
        return result

    def bare(self, node: Node) -> JSONObject:
        match node:
            case _nodes.AnyNode():
                return {}
            case _nodes.NoneNode():
                return {"type": "null"}
            case _nodes.BoolNode():
                return {"type": "boolean"}
            case _nodes.NumberNode(kind=kind, limits=limits):
                return _numeric({"type": "integer" if kind == "int" else "number"}, limits)
            case _nodes.DecimalNode(limits=limits):
                number = _numeric({"type": "number"}, limits)
                return {"anyOf": [number, {"type": "string", "pattern": DECIMAL_PATTERN}]}
            case _nodes.StrNode(limits=limits):
                return _string(limits)
            case _nodes.ChoiceNode(choices=choices):
                wires: list[JSONValue] = [wire for wire, _ in choices]
                types: list[JSONValue] = list(
                    dict.fromkeys(_JSON_TYPE[wire.__class__] for wire, _ in choices)
                )
                return {"type": types[0] if len(types) == 1 else types, "enum": wires}
            case _nodes.TemporalNode(cls=cls):
                return {"type": "string", "format": _FORMATS[cls.__name__]}
            case _nodes.UUIDNode():
                return {"type": "string", "format": "uuid"}
            case _nodes.PathNode():
                return {"type": "string"}
            case _nodes.ArrayNode(item=item, limits=limits):
                return _sized({"type": "array", "items": self.node(item)}, limits, "Items")
            case _nodes.TupleNode(items=items):
                count = len(items)
                return {
                    "type": "array",
                    "prefixItems": [self.node(item) for item in items],
                    "items": False,
                    "minItems": count,
                    "maxItems": count,
                }
            case _nodes.MapNode():
                return self.mapping(node)
            case _nodes.UnionNode(members=members):
                variants: list[JSONValue] = []
                for member in members:
                    written = self.node(member)
                    nested = written.get("anyOf")
                    if len(written) == 1 and isinstance(nested, list):
                        variants.extend(nested)
                    else:
                        variants.append(written)
                return {"anyOf": variants}
            case _nodes.DataclassNode(key=key):
                return self.reference(key)
            case _:
                assert_never(node)

    def mapping(self, node: _nodes.MapNode) -> JSONObject:
        result: JSONObject = {"type": "object", "additionalProperties": self.node(node.value)}
        if node.key_kind == "int":
            result["propertyNames"] = {"pattern": "^-?[0-9]+$"}
        elif node.key_kind in ("enum", "literal"):
            result["propertyNames"] = {"enum": [wire for wire, _ in node.key_choices]}
        return _sized(result, node.limits, "Properties")

    def reference(self, key: object) -> JSONObject:
        if key not in self.cyclic:
            return self.dataclass(key)
        if key == self.root:
            return {"$ref": "#"}
        name = self.def_names.get(key)
        if name is None:
            name = self.def_name(key)
            self.def_names[key] = name
            self.defs[name] = {}  # reserve the name before recursing
            self.defs[name] = self.dataclass(key)
        return {"$ref": f"#/$defs/{name}"}

    def def_name(self, key: object) -> str:
        origin = get_origin(key) or key
        base = getattr(origin, "__name__", "Model")
        if get_args(key):
            names = ", ".join(
                arg.__name__ if isinstance(arg, type) else repr(arg) for arg in get_args(key)
            )
            base = _UNSAFE.sub("_", f"{base}[{names}]").strip("_")
        name, suffix = base, 2
        while name in self.defs:
            name, suffix = f"{base}_{suffix}", suffix + 1
        return name

    def dataclass(self, key: object) -> JSONObject:
        model = model_of(key)
        result: JSONObject = {"type": "object"}
        if model.description is not None:
            result["description"] = model.description
        properties: JSONObject = {}
        for field in model.fields:
            properties[field.wire] = self.property(field, model.cls)
        result["properties"] = properties
        result["required"] = [field.wire for field in model.fields if self.strict or field.required]
        result["additionalProperties"] = False
        return result

    def property(self, field: FieldModel, owner: type[object]) -> JSONObject:
        try:
            result = self.node(field.node)
        except SchemaError as error:
            if error.dataclass_type is not None:
                raise
            raise Where(owner, field.name).error(error.message) from None
        if self.strict:
            # Strict schemas carry no default: every property is required, so the model
            # sends a value anyway, and some Responses-compatible servers reject the
            # keyword in strict mode.
            return result
        found, default = _default_of(field)
        if not found:
            return result
        if "$ref" in result:
            result = {"anyOf": [result]}
        result["default"] = default
        return result


def _default_of(field: FieldModel) -> tuple[bool, JSONValue]:
    """The field's default as JSON, when it has one that JSON can carry."""
    if field.default is MISSING:
        if field.factory in _EMPTY_FACTORIES:
            return True, _EMPTY_FACTORIES[field.factory]
        return False, None
    try:
        dumped = dump(field.default)
        json.dumps(dumped, allow_nan=False)
    except (SchemaError, ValueError):
        return False, None
    return True, dumped


def _numeric(result: JSONObject, limits: Limits) -> JSONObject:
    if limits.ge is not None:
        result["minimum"] = limits.ge
    if limits.gt is not None:
        result["exclusiveMinimum"] = limits.gt
    if limits.le is not None:
        result["maximum"] = limits.le
    if limits.lt is not None:
        result["exclusiveMaximum"] = limits.lt
    if limits.multiple_of is not None:
        result["multipleOf"] = limits.multiple_of
    return result


def _string(limits: Limits) -> JSONObject:
    result: JSONObject = {"type": "string"}
    if limits.min_length is not None:
        result["minLength"] = limits.min_length
    if limits.max_length is not None:
        result["maxLength"] = limits.max_length
    if limits.pattern is not None:
        result["pattern"] = limits.pattern.pattern
    return result


def _sized(result: JSONObject, limits: Limits, noun: str) -> JSONObject:
    if limits.min_length is not None:
        result[f"min{noun}"] = limits.min_length
    if limits.max_length is not None:
        result[f"max{noun}"] = limits.max_length
    return result
