"""Whether OpenAI strict function calling accepts a type's strict schema.

The rules follow OpenAI's published Structured Outputs subset: the root is an
object; every object lists all its properties in ``required`` and sets
``additionalProperties: false`` (so ``dict[str, X]`` fields are out); every
subschema states a ``type`` (or is ``anyOf``/``enum``/``$ref``), so ``Any`` is
out; only the keywords below appear, so ``minLength``/``maxLength``,
``prefixItems`` (fixed tuples), ``examples`` and the like are out; at most
10 levels of object nesting, 5000 properties and 1000 enum values in total.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping

from weakincentives.serde._schema import schema_text

__all__ = ["is_strict_compatible", "strict_problem"]

ALLOWED_KEYWORDS = frozenset(
    {
        "$defs",
        "$ref",
        "additionalProperties",
        "anyOf",
        "const",
        "default",
        "description",
        "enum",
        "exclusiveMaximum",
        "exclusiveMinimum",
        "format",
        "items",
        "maxItems",
        "maximum",
        "minItems",
        "minimum",
        "multipleOf",
        "pattern",
        "properties",
        "required",
        "title",
        "type",
    }
)
ALLOWED_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
MAX_DEPTH = 10
MAX_PROPERTIES = 5000
MAX_ENUM_VALUES = 1000

_CACHE: dict[object, bool] = {}
_LOCK = threading.Lock()


def is_strict_compatible(cls: type[object]) -> bool:
    """Whether OpenAI strict mode accepts ``schema(cls, strict=True)``.

    Tool builders use it to choose ``strict: true`` only when the provider will
    take the schema; see the module docstring for the rules.
    """
    cached = _CACHE.get(cls)
    if cached is None:
        cached = strict_problem(cls) is None
        with _LOCK:
            _CACHE[cls] = cached
    return cached


def strict_problem(cls: object) -> str | None:
    """The first reason strict mode would reject the schema, or None.

    ``cls`` is a type (its strict schema is checked) or a JSON Schema document itself,
    such as a catalogue tool's ``args_schema``, checked as it is.
    """
    if isinstance(cls, Mapping):
        document = json.loads(json.dumps(cls))
    else:
        document = json.loads(schema_text(cls, strict=True))
    if document.get("type") != "object":
        return "the root is not an object"
    counts = {"properties": 0, "enum": 0}
    problem = _check(document, "$", 1, counts)
    if problem is not None:
        return problem
    if counts["properties"] > MAX_PROPERTIES:
        return f"{counts['properties']} properties exceed the limit of {MAX_PROPERTIES}"
    if counts["enum"] > MAX_ENUM_VALUES:
        return f"{counts['enum']} enum values exceed the limit of {MAX_ENUM_VALUES}"
    return None


def _check(node: object, where: str, depth: int, counts: dict[str, int]) -> str | None:
    if not isinstance(node, dict):
        return f"{where} is not a schema object"
    unknown = sorted(set(node) - ALLOWED_KEYWORDS)
    if unknown:
        return f"{where} uses {', '.join(unknown)}"
    if not {"type", "anyOf", "enum", "const", "$ref"} & set(node):
        return f"{where} accepts any value (no type)"
    fmt = node.get("format")
    if fmt is not None and fmt not in ALLOWED_FORMATS:
        return f"{where} uses format {fmt!r}"
    counts["enum"] += len(node.get("enum", ()))
    children: list[tuple[str, object, int]] = []
    if node.get("type") == "object":
        if depth > MAX_DEPTH:
            return f"{where} nests objects deeper than {MAX_DEPTH} levels"
        properties = node.get("properties", {})
        if node.get("additionalProperties") is not False:
            return f"{where} allows additional properties"
        if node.get("required") != list(properties):
            return f"{where} does not require every property"
        counts["properties"] += len(properties)
        children += [(f"{where}.{name}", sub, depth + 1) for name, sub in properties.items()]
    if "items" in node:
        children.append((f"{where}[]", node["items"], depth))
    for index, variant in enumerate(node.get("anyOf", ())):
        children.append((f"{where}|{index}", variant, depth))
    for name, definition in node.get("$defs", {}).items():
        children.append((f"#/$defs/{name}", definition, 1))
    for child_where, child, child_depth in children:
        problem = _check(child, child_where, child_depth, counts)
        if problem is not None:
            return problem
    return None
