"""Field metadata: constraints are in the schema and enforced by parse; misuse is a SchemaError."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, make_dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from types import GenericAlias
from typing import Annotated, Any, Literal
from uuid import UUID

import pytest

from tests.serde.helpers import at
from weakincentives.errors import ParseError, SchemaError
from weakincentives.serde import JSONObject, dump, parse, schema


@dataclass
class Point:
    x: int


def _with(hint: object, metadata: Mapping[str, object]) -> type:
    """A one-field dataclass whose field ``v`` has ``hint`` and ``metadata``."""
    return make_dataclass("Constrained", [("v", hint, field(metadata=metadata))])


class TestConstraints:
    @pytest.mark.parametrize(
        ("hint", "metadata", "keywords", "good", "bad", "expected"),
        [
            (int, {"ge": 1}, {"minimum": 1}, 1, 0, "a value >= 1"),
            (int, {"gt": 1}, {"exclusiveMinimum": 1}, 2, 1, "a value > 1"),
            (int, {"le": 1}, {"maximum": 1}, 1, 2, "a value <= 1"),
            (int, {"lt": 1}, {"exclusiveMaximum": 1}, 0, 1, "a value < 1"),
            (int, {"multiple_of": 5}, {"multipleOf": 5}, 10, 11, "a multiple of 5"),
            (float, {"ge": 0.5}, {"minimum": 0.5}, 0.5, 0.25, "a value >= 0.5"),
            (float, {"multiple_of": 0.1}, {"multipleOf": 0.1}, 0.3, 0.35, "a multiple of 0.1"),
            (float, {"multiple_of": 2}, {"multipleOf": 2}, 4.0, 3.0, "a multiple of 2"),
            (
                float,
                {"multiple_of": 1e-300},
                {"multipleOf": 1e-300},
                1e300,
                1.5e-300,
                "a multiple of 1e-300",
            ),
            (
                str,
                {"min_length": 2},
                {"minLength": 2},
                "ab",
                "a",
                "a string with at least 2 characters",
            ),
            (
                str,
                {"max_length": 1},
                {"maxLength": 1},
                "a",
                "ab",
                "a string with at most 1 character",
            ),
            (str, {"pattern": "b+"}, {"pattern": "b+"}, "abba", "aaa", "a string matching 'b+'"),
            (
                list[int],
                {"min_length": 1},
                {"minItems": 1},
                [1],
                [],
                "an array with at least 1 item",
            ),
            (
                list[int],
                {"max_items": 1},
                {"maxItems": 1},
                [1],
                [1, 2],
                "an array with at most 1 item",
            ),
            (
                set[int],
                {"min_items": 2},
                {"minItems": 2},
                [1, 2],
                [3],
                "an array with at least 2 items",
            ),
            (
                dict[str, int],
                {"max_length": 1},
                {"maxProperties": 1},
                {"a": 1},
                {"a": 1, "b": 2},
                "an object with at most 1 member",
            ),
        ],
    )
    def test_constraints_are_in_the_schema_and_enforced(
        self,
        hint: object,
        metadata: dict[str, object],
        keywords: JSONObject,
        good: object,
        bad: object,
        expected: str,
    ) -> None:
        """The schema carries the keyword, a fitting value parses and a breaking one fails."""
        cls = _with(hint, metadata)
        prop = at(schema(cls), "properties", "v")
        assert isinstance(prop, dict)
        assert {key: prop[key] for key in keywords} == keywords
        assert dump(parse(cls, {"v": good})) == {
            "v": good if not isinstance(good, list) or hint is not set[int] else sorted(good)
        }
        with pytest.raises(ParseError) as info:
            parse(cls, {"v": bad})
        assert (info.value.expected, info.value.path) == (expected, "$.v")

    def test_decimal_constraints_compare_exactly(self) -> None:
        """Decimal bounds and steps use decimal arithmetic, for strings and numbers alike."""
        cls = _with(Decimal, {"ge": 0, "multiple_of": 0.01})
        assert parse(cls, {"v": "0.10"}) == cls(Decimal("0.10"))
        assert at(schema(cls), "properties", "v", "anyOf", 0) == {
            "type": "number",
            "minimum": 0,
            "multipleOf": 0.01,
        }
        with pytest.raises(ParseError, match=r"expected a multiple of 0\.01"):
            parse(cls, {"v": "0.105"})
        with pytest.raises(ParseError, match="expected a value >= 0"):
            parse(cls, {"v": -1})

    def test_optional_fields_constrain_the_value_not_the_null(self) -> None:
        """On X | None the constraint applies to X; null still passes."""
        cls = _with(int | None, {"ge": 0})
        assert parse(cls, {"v": None}) == cls(None)
        assert at(schema(cls), "properties", "v") == {
            "anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]
        }
        with pytest.raises(ParseError, match=r"expected a value >= 0, got integer -1 at \$\.v"):
            parse(cls, {"v": -1})

    def test_annotated_mappings_constrain_nested_items(self) -> None:
        """Annotated[T, {...}] puts constraints and notes on items inside containers."""
        item = Annotated[str, {"max_length": 2, "description": "short code"}]
        cls = _with(GenericAlias(list, (item,)), {"min_length": 1})
        assert at(schema(cls), "properties", "v") == {
            "type": "array",
            "items": {"description": "short code", "type": "string", "maxLength": 2},
            "minItems": 1,
        }
        with pytest.raises(ParseError, match=r'got string "abc" at \$\.v\[1\]'):
            parse(cls, {"v": ["ab", "abc"]})

    def test_field_metadata_wins_over_annotated(self) -> None:
        """When both set a limit, the field's metadata decides."""
        cls = _with(Annotated[int, {"ge": 5, "title": "Inner"}], {"ge": 1, "title": "Outer"})
        assert at(schema(cls), "properties", "v") == {
            "title": "Outer",
            "type": "integer",
            "minimum": 1,
        }

    def test_unknown_metadata_keys_are_ignored(self) -> None:
        """Metadata that belongs to other libraries does not disturb serde."""
        cls = _with(int, {"sa_column": object(), "ge": 0})
        assert at(schema(cls), "properties", "v") == {"type": "integer", "minimum": 0}

    def test_alias_renames_the_wire_field(self) -> None:
        """alias is the JSON name in dump, parse and schema."""
        cls = _with(int, {"alias": "value"})
        assert dump(parse(cls, {"value": 1})) == {"value": 1}
        assert at(schema(cls), "properties") == {"value": {"type": "integer"}}


class TestMisuse:
    @pytest.mark.parametrize(
        ("hint", "metadata", "problem"),
        [
            (str, {"ge": 0}, "constraint 'ge' does not apply to a str value"),
            (bool, {"le": 1}, "constraint 'le' does not apply to a bool value"),
            (int, {"min_length": 1}, "constraint 'min_length' does not apply to a int value"),
            (str, {"min_items": 1}, "constraint 'min_items' does not apply to a str value"),
            (list[str], {"pattern": "x"}, "constraint 'pattern' does not apply to a list value"),
            (
                Literal["a"],
                {"max_length": 1},
                "constraint 'max_length' does not apply to a Literal/Enum value",
            ),
            (
                tuple[int, int],
                {"min_length": 1},
                "constraint 'min_length' does not apply to a fixed-length tuple value",
            ),
            (int | str, {"ge": 0}, "constraint 'ge' does not apply to a str value"),
            (Any, {"multiple_of": 2}, "constraint 'multiple_of' does not apply to a Any value"),
            (Decimal, {"pattern": "1"}, "constraint 'pattern' does not apply to a Decimal value"),
            (type(None), {"ge": 1}, "constraint 'ge' does not apply to a None value"),
            (date, {"ge": 1}, "constraint 'ge' does not apply to a date value"),
            (UUID, {"max_length": 1}, "constraint 'max_length' does not apply to a UUID value"),
            (Path, {"max_length": 1}, "constraint 'max_length' does not apply to a Path value"),
            (
                dict[str, int],
                {"pattern": "x"},
                "constraint 'pattern' does not apply to a dict value",
            ),
            (Point, {"ge": 1}, "constraint 'ge' does not apply to a dataclass value"),
            (int, {"ge": "0"}, "constraint 'ge' must be a finite int or float, got '0'"),
            (int, {"ge": True}, "constraint 'ge' must be a finite int or float, got True"),
            (float, {"le": float("inf")}, "constraint 'le' must be a finite int or float, got inf"),
            (int, {"multiple_of": 0}, "constraint 'multiple_of' must be positive, got 0"),
            (str, {"min_length": -1}, "constraint 'min_length' must be an int >= 0, got -1"),
            (str, {"max_length": 1.5}, "constraint 'max_length' must be an int >= 0, got 1.5"),
            (
                list[int],
                {"min_length": 1, "min_items": 1},
                "give only one of 'min_length' and 'min_items'; they mean the same",
            ),
            (str, {"min_length": 3, "max_length": 2}, "minimum length 3 exceeds maximum length 2"),
            (str, {"pattern": 5}, "constraint 'pattern' must be a str, got 5"),
            (
                str,
                {"pattern": "("},
                "constraint 'pattern' '(' is not a valid regex: missing ), "
                "unterminated subpattern at position 0",
            ),
            (str, {"description": 3}, "metadata 'description' must be a str, got int"),
            (str, {"title": ["t"]}, "metadata 'title' must be a str, got list"),
            (str, {"examples": "x"}, "metadata 'examples' must be a list or tuple, got 'x'"),
            (str, {"alias": ""}, "metadata 'alias' must be a non-empty str, got ''"),
        ],
    )
    def test_bad_metadata_is_a_schema_error_naming_class_and_field(
        self, hint: object, metadata: dict[str, object], problem: str
    ) -> None:
        """Misused metadata is reported when the type is first used, with class and field."""
        cls = _with(hint, metadata)
        with pytest.raises(SchemaError) as info:
            parse(cls, {"v": 1})
        assert info.value.message.startswith(f"Constrained.v: {problem}")
        assert (info.value.dataclass_type, info.value.field_name) == (cls, "v")

    def test_misfit_messages_say_what_fits(self) -> None:
        """The message lists which kinds each constraint applies to."""
        with pytest.raises(SchemaError, match=re.escape("'pattern' to str; 'min_items'")):
            schema(_with(int, {"pattern": "x"}))

    def test_duplicate_wire_names_are_rejected(self) -> None:
        """Two fields may not share a JSON name."""

        @dataclass
        class Clash:
            a: int = field(metadata={"alias": "b"})
            b: int = 0

        with pytest.raises(SchemaError) as info:
            schema(Clash)
        assert info.value.message == (
            f"{Clash.__qualname__}.b: wire name 'b' is already used by field 'a'"
        )
