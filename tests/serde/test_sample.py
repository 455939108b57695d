"""Sample values for JSON Schemas: always valid, always the same for a seed."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings

from tests.strategies import dataclass_types
from weakincentives.serde import JSONValue, parse, sample, schema, validate


@settings(max_examples=60)
@given(dataclass_types())
def test_samples_of_serde_schemas_validate_and_parse(cls: type[Any]) -> None:
    """A sample for a dataclass's schema passes JSON Schema validation and serde parsing."""
    document = schema(cls)
    value = sample(document, seed=3)
    jsonschema.Draft202012Validator(document).validate(value)
    assert isinstance(parse(cls, value), cls)


@settings(max_examples=60)
@given(dataclass_types())
def test_the_schema_family_agrees_with_itself(cls: type[Any]) -> None:
    """validate(schema(T), sample(schema(T))) is empty: one family writes, samples, checks."""
    document = schema(cls)
    assert validate(document, sample(document, seed=1)) == ()


def test_a_pattern_and_a_minimum_length_hold_together() -> None:
    """The sampler used to drop minLength when a pattern was present."""
    document: JSONValue = {"type": "string", "pattern": "^[a-z]+$", "minLength": 5}
    value = sample({"type": "object", "properties": {"s": document}, "required": ["s"]})
    assert value == {"s": "aaaaa"}
    assert validate(document, "aaaaa") == ()


def test_recursive_schemas_sample_and_validate() -> None:
    """$ref to $defs and to the root resolve in both the sampler and the validator."""
    document: JSONValue = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#"}, "maxItems": 0}},
        "required": ["children"],
    }
    assert isinstance(document, dict)
    assert validate(document, sample(document)) == ()
    assert validate(document, {"children": [{"children": 1}]})[0].path == "$.children"


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
    value = sample(document)
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
    assert sample(document) == {"child": {"flag": True}}


def test_same_seed_same_sample() -> None:
    """Samples are deterministic per seed."""
    document: dict[str, JSONValue] = {"type": "string"}
    assert sample(document, seed=1) == sample(document, seed=1)
