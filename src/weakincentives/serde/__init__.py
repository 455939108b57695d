"""Dataclasses to and from JSON, and their JSON Schema, compiled once per type.

``dump`` turns values into JSON-shaped data, ``parse``/``parse_json`` build
typed values back with a JSON path on every error, ``loads`` decodes untrusted
JSON text refusing anything that could break later steps, ``schema`` writes JSON
Schema (OpenAI-strict by default), ``is_strict_compatible`` says whether a
strict schema will be accepted and ``strict_problem`` why not. ``dump_typed`` and
``parse_typed`` store values whose type is open (``object``, ``Any``) with their type
name, ``register_type`` gives a class a stable one, and ``dump_document``/
``load_document`` wrap a value in a versioned envelope (``DocumentKind``), and
``detached`` copies a value for the record only where it holds mutable containers. See
``specs/SERDE.md``.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.serde._detach import detached as detached
from weakincentives.serde._documents import DocumentKind, dump_document, load_document
from weakincentives.serde._dump import dump
from weakincentives.serde._json import JSONObject, JSONValue
from weakincentives.serde._loads import loads
from weakincentives.serde._parse import parse, parse_json
from weakincentives.serde._registry import register_type
from weakincentives.serde._sample import sample as sample
from weakincentives.serde._schema import schema
from weakincentives.serde._sharing import shares_input as shares_input
from weakincentives.serde._strict import (
    is_strict_compatible as is_strict_compatible,
)
from weakincentives.serde._strict import (
    strict_problem as strict_problem,
)
from weakincentives.serde._typed import dump_typed, parse_typed
from weakincentives.serde._validate import (
    SchemaViolation as SchemaViolation,
)
from weakincentives.serde._validate import (
    schema_problems as schema_problems,
)
from weakincentives.serde._validate import (
    validate,
)

__all__ = [
    "DocumentKind",
    "JSONObject",
    "JSONValue",
    "dump",
    "dump_document",
    "dump_typed",
    "load_document",
    "loads",
    "parse",
    "parse_json",
    "parse_typed",
    "register_type",
    "schema",
    "validate",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "SchemaViolation",
    "detached",
    "is_strict_compatible",
    "sample",
    "schema_problems",
    "shares_input",
    "strict_problem",
)

publish("weakincentives.serde", globals(), (*__all__, *_INTERNAL))
