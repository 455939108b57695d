"""schema: JSON Schema for dataclasses and type hints, strict and relaxed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, make_dataclass
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum, StrEnum
from pathlib import Path
from typing import Any, Literal
from uuid import UUID

import pytest
from jsonschema import Draft202012Validator

from tests.serde.helpers import at
from tests.serde.models import Address, OpenSectionsParams, Tree
from weakincentives.errors import SchemaError
from weakincentives.serde import JSONObject, JSONValue, dump, schema

DECIMAL_BRANCHES: list[JSONValue] = [
    {"type": "number"},
    {"type": "string", "pattern": "^-?(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"},
]
NUMBER_OR_DECIMAL_STRING: JSONObject = {"anyOf": DECIMAL_BRANCHES}


class Shade(StrEnum):
    DARK = "dark"
    LIGHT = "light"


class Mixed(Enum):
    ONE = 1
    NAME = "name"
    HALF = 0.5
    NOTHING = None


class Opaque:
    pass


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Documented:
    """First line.

    More detail.
    """

    point: Point = field(metadata={"description": "Where it is", "title": "Position"})
    other: Point | None = field(default=None, metadata={"description": "Maybe elsewhere"})


@dataclass
class Parent:
    name: str
    kids: list[Child] = field(default_factory=list)


@dataclass
class Child:
    name: str
    parent: Parent | None = None
    best_friend: Child | None = field(default=None, metadata={"description": "A friend"})


@dataclass
class Family:
    head: Parent
    helper: Parent = field(metadata={"description": "Helps"})


@dataclass
class Box[T]:
    item: T
    again: Box[T] | None = None


@dataclass
class Boxes:
    ints: Box[int]
    strs: Box[str]


@dataclass
class Defaults:
    when: date = date(2024, 1, 1)
    opaque: object = field(default_factory=Opaque)
    obj: Any = field(default=Opaque())
    tags: frozenset[str] = field(default_factory=frozenset)
    made: list[int] = field(default_factory=lambda: [1])
    nan: float = float("nan")
    amount: Decimal = Decimal("2.50")


@dataclass
class Unsupported:
    value: Opaque


@dataclass
class BadExample:
    value: int = field(metadata={"examples": [Opaque()]})


class TestTypes:
    @pytest.mark.parametrize(
        ("hint", "expected"),
        [
            (int, {"type": "integer"}),
            (float, {"type": "number"}),
            (str, {"type": "string"}),
            (bool, {"type": "boolean"}),
            (type(None), {"type": "null"}),
            (Any, {}),
            (Decimal, NUMBER_OR_DECIMAL_STRING),
            (datetime, {"type": "string", "format": "date-time"}),
            (date, {"type": "string", "format": "date"}),
            (time, {"type": "string", "format": "time"}),
            (UUID, {"type": "string", "format": "uuid"}),
            (Path, {"type": "string"}),
            (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
            (Shade, {"type": "string", "enum": ["dark", "light"]}),
            (
                Mixed,
                {"type": ["integer", "string", "number", "null"], "enum": [1, "name", 0.5, None]},
            ),
            (int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            (Decimal | None, {"anyOf": [*DECIMAL_BRANCHES, {"type": "null"}]}),
            (list[str], {"type": "array", "items": {"type": "string"}}),
            (frozenset[int], {"type": "array", "items": {"type": "integer"}}),
            (
                tuple[int, str],
                {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "items": False,
                    "minItems": 2,
                    "maxItems": 2,
                },
            ),
            (dict[str, int], {"type": "object", "additionalProperties": {"type": "integer"}}),
            (
                dict[int, str],
                {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "propertyNames": {"pattern": "^-?[0-9]+$"},
                },
            ),
            (
                Mapping[Shade, Any],
                {
                    "type": "object",
                    "additionalProperties": {},
                    "propertyNames": {"enum": ["dark", "light"]},
                },
            ),
        ],
    )
    def test_types_map_to_json_schema(self, hint: Any, expected: JSONObject) -> None:
        """Each supported type has one JSON Schema form, valid under Draft 2020-12."""
        assert schema(hint) == expected
        Draft202012Validator.check_schema(expected)

    def test_union_order_is_kept(self) -> None:
        """int | str and str | int are equal hints but list their members in their own order."""
        int_first: Any = int | str
        str_first: Any = str | int
        assert schema(int_first) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        assert schema(str_first) == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


class TestDataclasses:
    def test_open_sections_params_strict_schema(self) -> None:
        """The seed's OpenSectionsParams gives the exact strict schema a provider sees."""
        assert schema(OpenSectionsParams) == {
            "type": "object",
            "description": "Parameters for the open_sections tool.",
            "properties": {
                "section_keys": {
                    "description": (
                        "Section keys to open. Each key identifies a summarized section. "
                        "Use the keys shown in section summaries. Nested sections use "
                        "dot notation (e.g., 'parent.child')."
                    ),
                    "type": "array",
                    "items": {"type": "string"},
                },
                "reason": {
                    "description": (
                        "Brief explanation of why these sections need to be expanded. "
                        "Helps the caller understand the model's information needs."
                    ),
                    "type": "string",
                },
            },
            "required": ["section_keys", "reason"],
            "additionalProperties": False,
        }

    def test_strict_schemas_carry_no_defaults(self) -> None:
        """No default keyword anywhere in a strict schema; relaxed schemas keep them."""
        assert "default" not in json.dumps(schema(Defaults))
        assert at(schema(Defaults, strict=False), "properties", "tags", "default") == []
        assert "default" not in json.dumps(schema(Family))
        assert "default" in json.dumps(schema(Family, strict=False))

    def test_strict_and_relaxed_schemas_differ_in_required_and_null_defaults(self) -> None:
        """Strict requires every field and drops defaults; relaxed keeps the natural form."""
        strict = schema(Address)
        relaxed = schema(Address, strict=False)
        assert strict["required"] == ["street", "city", "zip"]
        assert relaxed["required"] == ["street", "city"]
        assert at(strict, "properties", "zip") == {
            "anyOf": [{"type": "string", "pattern": "^[0-9]{5}$"}, {"type": "null"}]
        }
        assert at(relaxed, "properties", "zip", "default") is None

    def test_nested_objects_are_inlined_with_field_annotations_first(self) -> None:
        """Nested dataclasses are inlined; the field's description replaces the docstring."""
        assert schema(Documented, strict=False) == {
            "type": "object",
            "description": "First line.\n\nMore detail.",
            "properties": {
                "point": {
                    "title": "Position",
                    "description": "Where it is",
                    "type": "object",
                    "properties": {
                        "x": {"type": "integer"},
                        "y": {"type": "integer", "default": 0},
                    },
                    "required": ["x"],
                    "additionalProperties": False,
                },
                "other": {
                    "description": "Maybe elsewhere",
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {
                                "x": {"type": "integer"},
                                "y": {"type": "integer", "default": 0},
                            },
                            "required": ["x"],
                            "additionalProperties": False,
                        },
                        {"type": "null"},
                    ],
                    "default": None,
                },
            },
            "required": ["point"],
            "additionalProperties": False,
        }

    def test_generated_docstrings_are_not_descriptions(self) -> None:
        """The 'Point(x: int, y: int = 0)' docstring dataclasses writes is skipped."""
        assert "description" not in schema(Point)
        generated = make_dataclass("Made", [("a", int)])
        assert "description" not in schema(generated)

    def test_self_recursive_root_refers_to_itself(self) -> None:
        """A recursive root uses '#' for itself and needs no $defs."""
        document = schema(Tree)
        assert at(document, "properties", "children") == {
            "type": "array",
            "items": {"$ref": "#"},
            "maxItems": 2,
        }
        assert "$defs" not in document

    def test_mutual_recursion_goes_through_defs(self) -> None:
        """Dataclasses on a reference cycle are defined once in $defs and referenced."""
        document = schema(Family)
        child_ref = {"$ref": "#/$defs/Child"}
        parent_ref = {"$ref": "#/$defs/Parent"}
        assert document["properties"] == {
            "head": parent_ref,
            "helper": {"anyOf": [parent_ref], "description": "Helps"},
        }
        assert document["$defs"] == {
            "Child": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "parent": {"anyOf": [parent_ref, {"type": "null"}]},
                    "best_friend": {
                        "description": "A friend",
                        "anyOf": [child_ref, {"type": "null"}],
                    },
                },
                "required": ["name", "parent", "best_friend"],
                "additionalProperties": False,
            },
            "Parent": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "kids": {"type": "array", "items": child_ref},
                },
                "required": ["name", "kids"],
                "additionalProperties": False,
            },
        }
        Draft202012Validator.check_schema(document)
        Draft202012Validator(document).validate(
            dump(Family(head=Parent("p", [Child("c", Parent("q"))]), helper=Parent("h")))
        )

    def test_generic_dataclasses_get_distinct_definitions(self) -> None:
        """Box[int] and Box[str] are different definitions with readable names."""
        document = schema(Boxes)
        assert document["properties"] == {
            "ints": {"$ref": "#/$defs/Box_int"},
            "strs": {"$ref": "#/$defs/Box_str"},
        }
        definitions = at(document, "$defs")
        assert isinstance(definitions, dict)
        assert sorted(definitions) == ["Box_int", "Box_str"]

    def test_same_named_definitions_are_numbered(self) -> None:
        """Two different recursive classes with one name get distinct $defs names."""
        first = make_dataclass("Node", [("next", "Node | None")])
        second = make_dataclass("Node", [("next", "Node | None")])
        first.__annotations__["next"] = first | None
        second.__annotations__["next"] = second | None
        holder = make_dataclass("Holder", [("a", first), ("b", second)])
        assert schema(holder)["properties"] == {
            "a": {"$ref": "#/$defs/Node"},
            "b": {"$ref": "#/$defs/Node_2"},
        }

    def test_defaults_are_emitted_only_when_json_can_carry_them(self) -> None:
        """JSON-representable defaults appear; objects, factories with effects and NaN do not."""
        properties = schema(Defaults, strict=False)["properties"]
        assert properties == {
            "when": {"type": "string", "format": "date", "default": "2024-01-01"},
            "opaque": {},
            "obj": {},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "made": {"type": "array", "items": {"type": "integer"}},
            "nan": {"type": "number"},
            "amount": {**NUMBER_OR_DECIMAL_STRING, "default": "2.50"},
        }

    def test_examples_are_dumped(self) -> None:
        """examples metadata is emitted as JSON values."""
        cls = make_dataclass(
            "WithExamples", [("day", date, field(metadata={"examples": (date(2024, 2, 3),)}))]
        )
        assert schema(cls)["properties"] == {
            "day": {"type": "string", "format": "date", "examples": ["2024-02-03"]}
        }

    def test_examples_that_cannot_be_dumped_are_schema_errors(self) -> None:
        """An example serde cannot represent names the class and field."""
        with pytest.raises(SchemaError) as info:
            schema(BadExample)
        assert info.value.message == ("BadExample.value: cannot dump a value of type Opaque at $")
        assert (info.value.dataclass_type, info.value.field_name) == (BadExample, "value")

    def test_unsupported_field_types_are_schema_errors(self) -> None:
        """A field typed with a plain class is rejected, naming class and field."""
        with pytest.raises(
            SchemaError, match=r"^Unsupported.value: unsupported type .*Opaque"
        ) as info:
            schema(Unsupported)
        assert (info.value.dataclass_type, info.value.field_name) == (Unsupported, "value")


class TestCache:
    def test_returned_schemas_are_fresh_copies(self) -> None:
        """Changing a returned schema does not change the next one."""
        first = schema(Address)
        street = at(first, "properties", "street")
        required = at(first, "required")
        assert isinstance(street, dict)
        assert isinstance(required, list)
        street["type"] = "integer"
        required.append("bogus")
        second = schema(Address)
        assert at(second, "properties", "street", "type") == "string"
        assert second["required"] == ["street", "city", "zip"]
        assert first is not second


@dataclass(frozen=True)
class Link:
    label: str
    next: Link | None = None


@dataclass
class Chain:
    first: Link = Link("a", Link("b"))


@dataclass
class HoldsUnsupported:
    inner: Unsupported


@dataclass
class HoldsBadExample:
    inner: BadExample


class TestEdges:
    def test_reference_defaults_are_wrapped(self) -> None:
        """A default next to a $ref sits on an anyOf wrapper (relaxed schemas only)."""
        assert at(schema(Chain), "properties", "first") == {"$ref": "#/$defs/Link"}
        assert at(schema(Chain, strict=False), "properties", "first") == {
            "anyOf": [{"$ref": "#/$defs/Link"}],
            "default": {"label": "a", "next": {"label": "b", "next": None}},
        }

    def test_errors_in_nested_classes_keep_their_own_context(self) -> None:
        """An unsupported field deep inside names the nested class, not the outer one."""
        with pytest.raises(SchemaError) as info:
            schema(HoldsUnsupported)
        assert (info.value.dataclass_type, info.value.field_name) == (Unsupported, "value")
        with pytest.raises(SchemaError) as info:
            schema(HoldsBadExample)
        assert (info.value.dataclass_type, info.value.field_name) == (BadExample, "value")
