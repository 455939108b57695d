"""Validate JSON values against the JSON Schema subset the library writes and reads.

``schema(T)`` writes this subset and catalogue entries describe their arguments in it,
so the library checks values itself rather than pulling in a full JSON Schema
implementation. Supported keywords: ``$ref`` to ``#`` or ``#/$defs/<name>`` (what
``schema`` emits for nested and recursive dataclasses), ``type`` (a name or a list
of names), ``properties``,
``required``, ``additionalProperties`` (boolean or schema), ``enum``,
``const``, ``items`` and ``prefixItems`` (fixed-length tuples),
``minItems``/``maxItems``, ``minimum``/``maximum``,
``exclusiveMinimum``/``exclusiveMaximum`` (numeric form), ``minLength``/
``maxLength``, ``pattern`` (except one that could take exponential time to match:
see ``_patterns.py``), ``anyOf``, ``oneOf`` and ``allOf``; ``true`` and
``false`` work as schemas. Other keywords (``description``, ``default``,
``format``, vendor ``x-`` keys) are annotations and are ignored, as the
standard allows. Every problem is reported, each with the JSON path of the
offending value (``$.items[2].name``).

Values and schemas may come from a model or a catalogue file, so the walk is
bounded: past :data:`MAX_SCHEMA_NESTING` nested checks (a deep value, or a schema
that refers to itself without descending) it reports a violation instead of
recursing further, and every message quotes keys, values and patterns cut short.
"""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from weakincentives._bounded import ECHO_LIMIT, TEXT_LIMIT, clip, listing, quote
from weakincentives.serde._failure import key_segment
from weakincentives.serde._loads import MAX_JSON_DEPTH
from weakincentives.serde._patterns import pattern_matcher
from weakincentives.serde._portable import portable_problem

__all__ = [
    "MAX_SCHEMA_CHECKS",
    "MAX_SCHEMA_NESTING",
    "SchemaViolation",
    "schema_problems",
    "validate",
]

MAX_SCHEMA_NESTING = MAX_JSON_DEPTH + 64
"""Deepest nesting of checks ``validate`` follows (values, ``$ref`` and combinators).

Room for any value ``loads`` accepts under a few levels of ``anyOf``; it keeps
the recursive walk well inside Python's recursion limit (at most three frames a
level).
"""

MAX_SCHEMA_CHECKS = 100_000
"""Checks one ``validate`` call makes at most (one per value and schema it meets).

Combinators multiply work: ``anyOf`` tries every branch, and ``$ref`` lets a
schema reuse a branch, so a small schema can ask for exponentially many checks
(``anyOf: [{"$ref": "#"}, {"$ref": "#"}]``). Past the budget (about a second of
such a schema; arguments of tens of thousands of values fit) the walk stops and
says so.
"""


@dataclass(slots=True)
class _Walk:
    """The validation in progress: the root for ``$ref``, and the checks still allowed."""

    root: Mapping[str, object]
    left: int


# Set by ``validate`` around each walk (which is the only caller of ``_check``).
_WALK: ContextVar[_Walk] = ContextVar("weakincentives_schema_walk")

_TYPE_NAMES = frozenset({"array", "boolean", "integer", "null", "number", "object", "string"})
_SCHEMA_KEYS = ("additionalProperties", "items")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_BOUNDS: tuple[tuple[str, Callable[[float, float], bool], str], ...] = (
    ("minimum", operator.ge, ">="),
    ("maximum", operator.le, "<="),
    ("exclusiveMinimum", operator.gt, ">"),
    ("exclusiveMaximum", operator.lt, "<"),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchemaViolation:
    """One way a value breaks its schema."""

    path: str
    """JSON path of the offending value, rooted at ``$``."""
    message: str
    """What is wrong, stated so a model can fix its arguments."""

    def render(self) -> str:
        """Return ``"<path>: <message>"``, the form used in error messages."""
        return f"{self.path}: {self.message}"


def validate(schema: object, value: object) -> tuple[SchemaViolation, ...]:
    """Check ``value`` against ``schema`` and return every violation (empty if valid).

    Arrays may be lists or tuples; objects are any ``Mapping`` with string
    keys. ``True`` and ``False`` are booleans, never integers.
    """
    out: list[SchemaViolation] = []
    walk = _Walk(root=schema if isinstance(schema, Mapping) else {}, left=MAX_SCHEMA_CHECKS)
    token = _WALK.set(walk)
    try:
        _check(schema, value, "$", out, 0)
    finally:
        _WALK.reset(token)
    if walk.left < 0:
        message = f"too complex to check in {MAX_SCHEMA_CHECKS:,} steps (the schema's "
        message += "combinators multiply the work); the checks so far are listed"
        out.append(SchemaViolation(path="$", message=message))
    return tuple(out)


def schema_problems(schema: object, *, where: str = "schema") -> tuple[str, ...]:
    """Describe structural problems in a schema this validator would misread.

    Catalogue construction calls it so a broken schema fails when the
    catalogue is built, not when a model first calls the tool. A schema that is
    not portable JSON (``NaN`` or an infinity, a lone surrogate, a key that is not
    a string, nesting deeper than ``MAX_JSON_DEPTH``) gets that one problem, with
    its path.
    """
    found = portable_problem(schema)
    if found is not None:
        path, problem = found
        return (f"{where}{path}: {problem}",)
    out: list[str] = []
    _inspect(schema, where, out)
    return tuple(out)


def _inspect(schema: object, where: str, out: list[str]) -> None:
    if isinstance(schema, bool):
        return
    if not isinstance(schema, Mapping):
        out.append(f"{where} must be an object or a boolean, got {_kind(schema)}")
        return
    declared = schema.get("type")
    names = declared if isinstance(declared, list) else [declared] if declared is not None else []
    for name in names:
        if name not in _TYPE_NAMES:
            shown = quote(name) if isinstance(name, str) else _show(name)
            out.append(f"{where}.type has unknown type {shown}")
    pattern = schema.get("pattern")
    if pattern is not None:
        try:
            re.compile(str(pattern))
        except re.error as exc:
            out.append(
                f"{where}.pattern {quote(str(pattern))} is not a valid regular expression: "
                f"{clip(str(exc), TEXT_LIMIT)}"
            )
    properties = schema.get("properties", {})
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            # key_segment quotes and cuts odd keys; plain ones are joined directly (hot path).
            plain = isinstance(key, str) and len(key) <= ECHO_LIMIT and key.isidentifier()
            _inspect(
                sub,
                f"{where}.properties.{key}" if plain else f"{where}.properties{key_segment(key)}",
                out,
            )
    else:
        out.append(f"{where}.properties must be an object, got {_kind(properties)}")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(k, str) for k in required):
        out.append(f"{where}.required must be a list of property names")
    for key in _SCHEMA_KEYS:
        if key in schema:
            _inspect(schema[key], f"{where}.{key}", out)
    for key in _SCHEMA_LISTS:
        if key in schema:
            branches = schema[key]
            if not isinstance(branches, list) or not branches:
                out.append(f"{where}.{key} must be a non-empty list of schemas")
                continue
            for index, sub in enumerate(branches):
                _inspect(sub, f"{where}.{key}[{index}]", out)


def _check(
    schema: object, value: object, path: str, out: list[SchemaViolation], depth: int
) -> None:
    walk = _WALK.get()
    walk.left -= 1
    if walk.left < 0:  # out of budget: every check from here on returns at once
        return
    if depth > MAX_SCHEMA_NESTING:
        message = f"nested too deeply to check (more than {MAX_SCHEMA_NESTING} levels of checks)"
        out.append(SchemaViolation(path=path, message=message))
        return
    if isinstance(schema, Mapping) and isinstance(schema.get("$ref"), str):
        schema = _resolve(walk.root, str(schema["$ref"]), path, out)
        if schema is None:
            return
    if schema is True:
        return
    if schema is False or not isinstance(schema, Mapping):
        out.append(SchemaViolation(path=path, message="no value is allowed here"))
        return
    declared = schema.get("type")
    if declared is not None:
        names = declared if isinstance(declared, list) else [declared]
        if not any(_is_type(value, str(name)) for name in names):
            wanted = " or ".join(str(name) for name in names)
            out.append(SchemaViolation(path=path, message=f"expected {wanted}, got {_kind(value)}"))
            return
    options_given = schema.get("enum")
    if isinstance(options_given, list) and not any(
        _json_equal(value, option) for option in options_given
    ):
        options = listing([_show(option) for option in options_given[:5]], limit=5)
        rest = len(options_given) - 5
        more = f" and {rest:,} more" if rest > 0 else ""
        out.append(SchemaViolation(path=path, message=f"must be one of {options}{more}"))
    if "const" in schema and not _json_equal(value, schema["const"]):
        out.append(SchemaViolation(path=path, message=f"must equal {_show(schema['const'])}"))
    if isinstance(value, Mapping):
        _check_object(schema, value, path, out, depth)
    elif isinstance(value, list | tuple):
        _check_array(schema, value, path, out, depth)
    elif isinstance(value, str):
        _check_string(schema, value, path, out)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        _check_number(schema, value, path, out)
    _check_combinators(schema, value, path, out, depth)


def _resolve(
    root: Mapping[str, object], ref: str, path: str, out: list[SchemaViolation]
) -> object | None:
    """The schema ``ref`` points at in ``root`` (the one being validated), or None (reported)."""
    if ref == "#":
        return root
    defs = root.get("$defs")
    name = ref.removeprefix("#/$defs/")
    if ref.startswith("#/$defs/") and isinstance(defs, Mapping) and name in defs:
        resolved: object = defs[name]
        return resolved
    out.append(SchemaViolation(path=path, message=f"cannot resolve $ref {quote(ref)}"))
    return None


def _check_object(
    schema: Mapping[str, object],
    value: Mapping[object, object],
    path: str,
    out: list[SchemaViolation],
    depth: int,
) -> None:
    properties = schema.get("properties", {})
    known: Mapping[str, object] = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required", [])
    for name in required if isinstance(required, list) else []:
        if name not in value:
            out.append(
                SchemaViolation(path=path, message=f"missing required property {quote(str(name))}")
            )
    extra = schema.get("additionalProperties", True)
    allowed = ""
    for key, item in value.items():
        child = path + key_segment(key)
        if isinstance(key, str) and key in known:
            _check(known[key], item, child, out, depth + 1)
        elif extra is False:
            allowed = allowed or listing(sorted(known), limit=20) or "none"
            out.append(
                SchemaViolation(
                    path=child, message=f"unexpected property (allowed properties: {allowed})"
                )
            )
        elif extra is not True:
            _check(extra, item, child, out, depth + 1)


def _check_array(
    schema: Mapping[str, object],
    value: Sequence[object],
    path: str,
    out: list[SchemaViolation],
    depth: int,
) -> None:
    _check_size(schema, len(value), path, out, bounds=("minItems", "maxItems"), unit="items")
    prefix = schema.get("prefixItems")
    positional = prefix if isinstance(prefix, list) else []
    for index, (item_schema, item) in enumerate(zip(positional, value, strict=False)):
        _check(item_schema, item, f"{path}[{index}]", out, depth + 1)
    if "items" in schema:
        for index in range(len(positional), len(value)):
            _check(schema["items"], value[index], f"{path}[{index}]", out, depth + 1)


def _check_size(
    schema: Mapping[str, object],
    size: int,
    path: str,
    out: list[SchemaViolation],
    *,
    bounds: tuple[str, str],
    unit: str,
) -> None:
    """Check ``size`` against the schema's lower and upper ``bounds`` keywords."""
    low, high = schema.get(bounds[0]), schema.get(bounds[1])
    if isinstance(low, int) and size < low:
        out.append(SchemaViolation(path=path, message=f"needs at least {low} {unit}"))
    if isinstance(high, int) and size > high:
        out.append(SchemaViolation(path=path, message=f"allows at most {high} {unit}"))


def _check_string(
    schema: Mapping[str, object], value: str, path: str, out: list[SchemaViolation]
) -> None:
    _check_size(schema, len(value), path, out, bounds=("minLength", "maxLength"), unit="characters")
    pattern = schema.get("pattern")
    matcher = pattern_matcher(pattern) if isinstance(pattern, str) else None
    if matcher is not None and matcher.search(value) is None:
        shown = quote(str(pattern), TEXT_LIMIT)
        out.append(SchemaViolation(path=path, message=f"must match pattern {shown}"))


def _check_number(
    schema: Mapping[str, object], value: float, path: str, out: list[SchemaViolation]
) -> None:
    for key, holds, sign in _BOUNDS:
        limit = schema.get(key)
        if (
            isinstance(limit, int | float)
            and not isinstance(limit, bool)
            and not holds(value, limit)
        ):
            out.append(SchemaViolation(path=path, message=f"must be {sign} {_show(limit)}"))


def _check_combinators(
    schema: Mapping[str, object], value: object, path: str, out: list[SchemaViolation], depth: int
) -> None:
    for sub in _branches(schema, "allOf"):
        _check(sub, value, path, out, depth + 1)
    any_of = _branches(schema, "anyOf")
    if any_of and not any(_passes(sub, value, path, depth) for sub in any_of):
        out.append(
            SchemaViolation(path=path, message=f"matches none of the {len(any_of)} anyOf options")
        )
    one_of = _branches(schema, "oneOf")
    if one_of:
        matched = sum(1 for sub in one_of if _passes(sub, value, path, depth))
        if matched != 1:
            out.append(
                SchemaViolation(
                    path=path,
                    message=f"must match exactly one of the {len(one_of)} oneOf options, "
                    f"matched {matched}",
                )
            )


def _branches(schema: Mapping[str, object], key: str) -> list[object]:
    branches = schema.get(key, [])
    return branches if isinstance(branches, list) else []


def _passes(schema: object, value: object, path: str, depth: int) -> bool:
    found: list[SchemaViolation] = []
    _check(schema, value, path, found, depth + 1)
    return not found


def _is_type(value: object, name: str) -> bool:
    match name:
        case "null":
            return value is None
        case "boolean":
            return isinstance(value, bool)
        case "string":
            return isinstance(value, str)
        case "array":
            return isinstance(value, list | tuple)
        case "object":
            return isinstance(value, Mapping)
        case "number":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "integer":
            if isinstance(value, bool):
                return False
            return isinstance(value, int) or (
                isinstance(value, float) and math.isfinite(value) and value.is_integer()
            )
        case _:
            return False


def _json_equal(left: object, right: object) -> bool:
    """Compare as JSON does: ``1 == 1.0`` but ``True != 1``, containers deeply."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list | tuple) and isinstance(right, list | tuple):
        return len(left) == len(right) and all(map(_json_equal, left, right))
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(_json_equal(left[k], right[k]) for k in left)
    if isinstance(left, list | tuple | Mapping) or isinstance(right, list | tuple | Mapping):
        return False
    return left == right


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def _show(value: object) -> str:
    """A schema value (an enum option, a ``const``) as JSON for a message, cut short."""
    try:
        text = json.dumps(value, default=str, ensure_ascii=False)
    except (ValueError, RecursionError):  # NaN is fine here; a huge int or deep value is not
        text = f"<{_kind(value)}>"
    return clip(text)
