"""The JSON Schema subset validator: messages, paths and agreement with jsonschema."""

from __future__ import annotations

from types import MappingProxyType
from typing import cast

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.discovery.conftest import RENAME_SCHEMA
from weakincentives.serde import JSONValue, SchemaViolation, schema_problems, validate


def _messages(schema: object, value: object) -> list[str]:
    return [violation.render() for violation in validate(schema, value)]


class TestExamples:
    def test_valid_arguments_have_no_violations(self) -> None:
        """Arguments that follow the schema pass."""
        value = {"project_root": "/src", "symbol": "a", "new_name": "b", "language": "py"}
        assert validate(RENAME_SCHEMA, value) == ()

    def test_every_problem_is_listed_with_its_path(self) -> None:
        """Missing, extra, mistyped and out-of-enum values are all reported."""
        value = {"symbol": 3, "new_name": "", "language": "rust", "colour": "red"}
        assert _messages(RENAME_SCHEMA, value) == [
            "$: missing required property 'project_root'",
            "$.symbol: expected string, got integer",
            "$.new_name: needs at least 1 characters",
            '$.language: must be one of "ts", "js", "py", "go", "java"',
            "$.colour: unexpected property (allowed properties: dry_run, language, new_name, "
            "project_root, symbol)",
        ]

    def test_nested_paths_use_indexes_and_quoted_keys(self) -> None:
        """Array items and non-identifier keys appear in JSON-path form."""
        schema = {
            "type": "object",
            "properties": {
                "rows": {"type": "array", "items": {"type": "object", "required": ["id"]}},
                "odd key": {"type": "integer"},
            },
        }
        value = {"rows": [{"id": 1}, {}], "odd key": 1.5}
        assert _messages(schema, value) == [
            "$.rows[1]: missing required property 'id'",
            "$['odd key']: expected integer, got number",
        ]

    @pytest.mark.parametrize(
        ("schema", "value", "expected"),
        [
            ({"type": ["string", "null"]}, 3, "$: expected string or null, got integer"),
            ({"type": "integer"}, True, "$: expected integer, got boolean"),
            ({"type": "number"}, None, "$: expected number, got null"),
            ({"type": "object"}, [1], "$: expected object, got array"),
            ({"type": "boolean"}, "yes", "$: expected boolean, got string"),
            ({"const": 3}, 4, "$: must equal 3"),
            ({"minimum": 2}, 1, "$: must be >= 2"),
            ({"maximum": 2}, 3, "$: must be <= 2"),
            ({"exclusiveMinimum": 2}, 2, "$: must be > 2"),
            ({"exclusiveMaximum": 2.5}, 2.5, "$: must be < 2.5"),
            ({"maxLength": 2}, "abc", "$: allows at most 2 characters"),
            ({"pattern": "^a+$"}, "ab", "$: must match pattern '^a+$'"),
            ({"minItems": 2}, [1], "$: needs at least 2 items"),
            ({"maxItems": 1}, (1, 2), "$: allows at most 1 items"),
            ({"anyOf": [{"type": "string"}, {"type": "null"}]}, 1, "$: matches none of the 2 "),
            ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, "$: must match exactly one"),
            ({"allOf": [{"minimum": 0}, {"maximum": 1}]}, 2, "$: must be <= 1"),
            ({"enum": [None, False]}, 0, "$: must be one of null, false"),
            (False, 1, "$: no value is allowed here"),
            (
                {"type": "object", "additionalProperties": {"type": "integer"}},
                {"a": "x"},
                "$.a: expected integer, got string",
            ),
            ({"type": "object", "additionalProperties": False}, {"a": 1}, "$.a: unexpected "),
        ],
    )
    def test_each_keyword_reports_its_violation(
        self, schema: object, value: object, expected: str
    ) -> None:
        """Every supported keyword produces a message naming the rule."""
        (message,) = _messages(schema, value)
        assert message.startswith(expected)

    def test_integer_accepts_integral_floats_and_json_equality(self) -> None:
        """1.0 is an integer, 1 equals 1.0 in enum, but True never equals 1."""
        assert validate({"type": "integer"}, 1.0) == ()
        assert validate({"enum": [1.0]}, 1) == ()
        assert validate({"enum": [[1, {"a": True}]]}, [1, {"a": True}]) == ()
        assert validate({"enum": [1]}, True) != ()
        assert validate({"enum": [{"a": 1}]}, {"b": 1}) != ()
        assert validate({"enum": [[1]]}, 1) != ()

    def test_annotations_and_unknown_keywords_are_ignored(self) -> None:
        """description, default, format and x- keys never reject a value."""
        schema = {"type": "string", "description": "d", "format": "date", "x-original-type": "D"}
        assert validate(schema, "not a date") == ()
        assert validate(True, {"anything": [1]}) == ()

    def test_violation_render_joins_path_and_message(self) -> None:
        """render() is the form used in error messages."""
        assert SchemaViolation(path="$.a", message="bad").render() == "$.a: bad"


class TestSchemaProblems:
    def test_a_good_schema_has_no_problems(self) -> None:
        """The rename schema is structurally sound."""
        assert schema_problems(RENAME_SCHEMA) == ()

    def test_structural_problems_are_described(self) -> None:
        """Bad types, patterns, property maps, required lists and combinators are caught."""
        schema = {
            "type": ["object", "mystery"],
            "properties": {"a": 3, "b": {"pattern": "["}},
            "required": "a",
            "items": [],
            "anyOf": [],
            "oneOf": [{"type": "nope"}],
        }
        problems = schema_problems(schema, where="args")
        assert problems[0] == "args.type has unknown type 'mystery'"
        assert "args.properties.a must be an object or a boolean, got integer" in problems
        assert any(p.startswith("args.properties.b.pattern '[' is not a valid") for p in problems)
        assert "args.required must be a list of property names" in problems
        assert "args.items must be an object or a boolean, got array" in problems
        assert "args.anyOf must be a non-empty list of schemas" in problems
        assert "args.oneOf[0].type has unknown type 'nope'" in problems

    def test_properties_must_be_an_object(self) -> None:
        """A list where a property map belongs is reported."""
        assert schema_problems({"properties": []}) == (
            "schema.properties must be an object, got array",
        )


# --- cross-check against the jsonschema reference implementation ------------------------

_KEYS = st.sampled_from(["a", "b", "c"])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.sampled_from([-1, 0, 1, 2, -1.5, 0.5, 1.0, 2.5])
    | st.sampled_from(["", "a", "ab", "abc", "B1", "zz"])
)
_VALUES = st.recursive(
    _SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=8,
)
_TYPE_NAMES = st.sampled_from(["array", "boolean", "integer", "null", "number", "object", "string"])
_NUMBER = st.sampled_from([-1, 0, 1, 2, 0.5, 1.0])
_SIZE = st.integers(min_value=0, max_value=3)

_KEYWORDS = st.one_of(
    st.tuples(
        st.just("type"),
        _TYPE_NAMES | st.lists(_TYPE_NAMES, min_size=1, max_size=3, unique=True),
    ),
    st.tuples(st.just("enum"), st.lists(_SCALARS, min_size=1, max_size=3)),
    st.tuples(st.just("const"), _SCALARS),
    st.tuples(
        st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), _NUMBER
    ),
    st.tuples(st.sampled_from(["minLength", "maxLength", "minItems", "maxItems"]), _SIZE),
    st.tuples(st.just("pattern"), st.sampled_from(["^a", "b$", "[0-9]", "^$"])),
)
_LEAF_SCHEMAS = st.booleans() | st.lists(_KEYWORDS, min_size=1, max_size=2).map(dict)


def _compound(children: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    branches = st.lists(children, min_size=1, max_size=3)
    keyword = st.one_of(
        st.tuples(st.just("type"), st.just("object")),
        st.tuples(st.just("properties"), st.dictionaries(_KEYS, children, max_size=3)),
        st.tuples(st.just("required"), st.lists(_KEYS, max_size=3, unique=True)),
        st.tuples(st.sampled_from(["additionalProperties", "items"]), children),
        st.tuples(st.sampled_from(["anyOf", "oneOf", "allOf"]), branches),
    )
    return st.lists(keyword, min_size=1, max_size=3).map(dict)


_SCHEMAS = st.recursive(_LEAF_SCHEMAS, _compound, max_leaves=6)


def _agrees(schema: object, value: JSONValue) -> bool:
    reference = jsonschema.Draft202012Validator(cast("dict[str, object] | bool", schema))
    return (validate(schema, value) == ()) == reference.is_valid(value)


@settings(max_examples=1500, deadline=None)
@given(
    schema=_LEAF_SCHEMAS,
    value=_SCALARS | st.lists(_SCALARS, max_size=4) | st.dictionaries(_KEYS, _SCALARS, max_size=2),
)
def test_keywords_agree_with_jsonschema(schema: object, value: JSONValue) -> None:
    """For one or two scalar keywords and any value, we accept exactly what jsonschema accepts."""
    assert _agrees(schema, value)


@settings(max_examples=800, deadline=None)
@given(schema=_SCHEMAS, value=_VALUES)
def test_nested_schemas_agree_with_jsonschema(schema: object, value: JSONValue) -> None:
    """For nested object, array and combinator schemas, validity matches jsonschema."""
    assert _agrees(schema, value)


def test_unknown_types_and_foreign_values_are_named() -> None:
    """An unknown type name never matches, and non-JSON values are named by their class."""
    assert _messages({"type": "weird"}, 1) == ["$: expected weird, got integer"]
    assert _messages({"type": "string"}, {1, 2}) == ["$: expected string, got set"]


class TestBounds:
    """Values and schemas from a model or a file cannot make the validator recurse without end."""

    @pytest.mark.parametrize(
        ("schema", "message"),
        [
            ({"anyOf": [{"$ref": "#"}]}, "matches none of the 1 anyOf options"),
            (
                {"allOf": [{"$ref": "#"}]},
                "nested too deeply to check (more than 192 levels of checks)",
            ),
            (
                {"oneOf": [{"$ref": "#"}, {"type": "null"}]},
                "must match exactly one of the 2 oneOf options, matched 0",
            ),
            (
                {"anyOf": [{"$ref": "#"}, {"$ref": "#"}]},
                "too complex to check in 100,000 steps (the schema's combinators multiply the "
                "work); the checks so far are listed",
            ),
        ],
    )
    def test_a_schema_that_refers_to_itself_in_place_ends_with_a_violation(
        self, schema: dict[str, JSONValue], message: str
    ) -> None:
        """A combinator cycle that never descends stops at the nesting bound or the budget."""
        assert validate(schema, 1) == (SchemaViolation(path="$", message=message),)

    @settings(max_examples=30, deadline=None)
    @given(depth=st.integers(min_value=193, max_value=5_000), kind=st.sampled_from(["a", "o"]))
    def test_values_of_any_depth_end_with_a_violation(self, depth: int, kind: str) -> None:
        """Arrays or objects thousands deep give one violation at the bound's path."""
        value: JSONValue = 0
        for _ in range(depth):
            value = [value] if kind == "a" else {"k": value}
        schema: dict[str, JSONValue] = {
            "items": {"$ref": "#"},
            "additionalProperties": {"$ref": "#"},
        }
        (violation,) = validate(schema, value)
        assert violation.path == "$" + ("[0]" if kind == "a" else ".k") * 193

    def test_messages_quote_keys_options_and_patterns_cut_short(self) -> None:
        """Long keys, many enum options and long patterns make short messages."""
        schema: dict[str, JSONValue] = {
            "type": "object",
            "properties": {
                "e": {"enum": [f"option-{k}" for k in range(1_000)]},
                "p": {"type": "string", "pattern": "^" + "a" * 1_000 + "$"},
            },
            "additionalProperties": False,
        }
        messages = _messages(schema, {"e": "x", "p": "b", "k" * 10_000: 1})
        assert messages[0] == (
            '$.e: must be one of "option-0", "option-1", "option-2", "option-3", "option-4" '
            "and 995 more"
        )
        assert messages[1].startswith("$.p: must match pattern '^aaaa")
        assert messages[2] == f"$['{'k' * 37}...']: unexpected property (allowed properties: e, p)"
        assert max(map(len, messages)) < 400


class TestPortableSchemas:
    @pytest.mark.parametrize(
        ("schema", "problem"),
        [
            ({"maximum": float("nan")}, "s.maximum: nan is not a JSON number"),
            ({"enum": [1, float("inf")]}, "s.enum[1]: inf is not a JSON number"),
            ({"const": 10**5000}, "s.const: integer with more than 4,300 digits cannot be written"),
            ({"default": {2: 1}}, "s.default: key integer 2 is not a string"),
            ({"title": "\ud800"}, "s.title: a lone surrogate U+D800 at character 0"),
            ({"x\udc00": 1}, "s: a lone surrogate U+DC00 at character 1"),
            ({"default": object}, "s.default: type instance is not a JSON value"),
        ],
    )
    def test_a_schema_that_is_not_portable_json_names_the_place(
        self, schema: dict[str, object], problem: str
    ) -> None:
        """What JSON cannot carry is one problem with its path, before any keyword is read."""
        (found,) = schema_problems(schema, where="s")
        assert found.startswith(problem)

    def test_read_only_mappings_and_tuples_are_json(self) -> None:
        """A MappingProxyType object and a tuple array are portable."""
        schema = MappingProxyType({"type": "object", "enum": ({"a": (1, 2.5)},)})
        assert schema_problems(schema) == ()
        assert schema_problems({"type": "number", "maximum": 2.5, "minimum": -1}) == ()

    def test_an_option_json_cannot_write_is_shown_by_its_kind(self) -> None:
        """validate on a schema nobody checked: an unwritable option does not break the message."""
        assert _messages({"enum": [10**5000]}, 1) == ["$: must be one of <integer>"]
