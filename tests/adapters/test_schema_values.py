"""Sample values for JSON Schemas: always valid, always the same for a seed."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings

from tests.strategies import dataclass_types
from weakincentives.adapters import sample_value
from weakincentives.serde import JSONValue, parse, schema


@settings(max_examples=60)
@given(dataclass_types())
def test_samples_of_serde_schemas_validate_and_parse(cls: type[Any]) -> None:
    """A sample for a dataclass's schema passes JSON Schema validation and serde parsing."""
    document = schema(cls)
    value = sample_value(document, seed=3)
    jsonschema.Draft202012Validator(document).validate(value)
    assert isinstance(parse(cls, value), cls)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"const": 7}, 7),
        ({"enum": ["b", "a"]}, "b"),
        ({"type": "integer", "default": 4}, 4),
        ({"type": "integer", "minimum": 2, "maximum": 6}, 4),
        ({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}, 2),
        ({"type": "integer", "minimum": 5}, 6),
        ({"type": "integer", "maximum": 5}, 4),
        ({"type": "number", "minimum": 1.0, "maximum": 2.0}, 1.5),
        ({"type": "string", "format": "date-time"}, "2026-01-01T00:00:00+00:00"),
        ({"type": "string", "format": "date"}, "2026-01-01"),
        ({"type": "string", "format": "uuid"}, "00000000-0000-4000-8000-000000000000"),
        ({"type": "string", "maxLength": 3}, "sam"),
        ({"type": "string", "format": "time"}, "12:00:00"),
        ({"type": "string", "pattern": "^[0-9]+$"}, "0"),
        ({"type": "null"}, None),
        ({"type": ["null", "string"], "minLength": 20}, "sample-"),
        ({"anyOf": [{"type": "null"}, {"const": "x"}]}, "x"),
        ({"oneOf": [{"type": "null"}]}, None),
        ({"anyOf": []}, None),
        ({"type": "array", "minItems": 2, "items": {"const": 1}}, [1, 1]),
        ({"type": "array"}, []),
        ({"type": "object"}, {}),
        ({"$ref": "#/$defs/missing"}, None),
    ],
)
def test_samples_follow_the_schema(document: dict[str, JSONValue], expected: JSONValue) -> None:
    """Each keyword steers the sample the way the schema says."""
    value = sample_value(document)
    if isinstance(expected, str) and expected.startswith("sample-") and isinstance(value, str):
        assert value.startswith(expected)
        assert len(value) >= 20
    else:
        assert value == expected


def test_refs_resolve_through_defs() -> None:
    """`$ref` into `$defs` is followed."""
    document: dict[str, JSONValue] = {
        "type": "object",
        "properties": {"child": {"$ref": "#/$defs/Child"}},
        "$defs": {"Child": {"type": "object", "properties": {"flag": {"const": True}}}},
    }
    assert sample_value(document) == {"child": {"flag": True}}


def test_same_seed_same_sample() -> None:
    """Samples are deterministic per seed."""
    document: dict[str, JSONValue] = {"type": "string"}
    assert sample_value(document, seed=1) == sample_value(document, seed=1)
