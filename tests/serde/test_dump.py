"""dump: values of every supported type to JSON-shaped data."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any
from uuid import UUID

import pytest

from tests.serde.models import Address, Circle, Drawing, Rect, Tree
from weakincentives.errors import SchemaError
from weakincentives.serde import dump


class Shade(StrEnum):
    DARK = "dark"


class Flag(IntEnum):
    ON = 1


class Nested(Enum):
    PAIR = (1, 2)


class MyInt(int):
    pass


class MyFloat(float):
    pass


class MyStr(str):
    __slots__ = ()


class Opaque:
    pass


@dataclass
class Computed:
    base: int
    double: int = field(init=False)

    def __post_init__(self) -> None:
        self.double = self.base * 2


@dataclass
class Bag:
    anything: Any = None
    note: str | None = None


@dataclass
class Empty:
    pass


class TestValues:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (None, None),
            (True, True),
            (3, 3),
            (2.5, 2.5),
            ("s", "s"),
            (MyInt(4), 4),
            (MyFloat(1.5), 1.5),
            (MyStr("x"), "x"),
            (Shade.DARK, "dark"),
            (Flag.ON, 1),
            (Nested.PAIR, [1, 2]),
            (datetime(2024, 5, 1, 12, 0, tzinfo=UTC), "2024-05-01T12:00:00+00:00"),
            (date(2024, 5, 1), "2024-05-01"),
            (time(8, 15), "08:15:00"),
            (UUID(int=1), "00000000-0000-0000-0000-000000000001"),
            (Decimal("1.50"), "1.50"),
            (PurePosixPath("a/b"), "a/b"),
            ([1, (2, 3)], [1, [2, 3]]),
            ((Shade.DARK,), ["dark"]),
            ({"b", "a", "c"}, ["a", "b", "c"]),
            (frozenset({3, 1}), [1, 3]),
            (frozenset({(1, 2)}), [[1, 2]]),
            ({"k": date(2024, 1, 1)}, {"k": "2024-01-01"}),
            ({1: "x", Shade.DARK: "y", Flag.ON: "z"}, {"1": "z", "dark": "y"}),
            (MappingProxyType({"a": 1}), {"a": 1}),
            (OrderedDict(a=[1]), {"a": [1]}),
        ],
    )
    def test_values_dump_to_json_shapes(self, value: object, expected: object) -> None:
        """Each supported value becomes its JSON form; sets come out sorted."""
        assert dump(value) == expected

    def test_unorderable_sets_keep_their_items(self) -> None:
        """A set whose items cannot be ordered is still dumped, item for item."""
        result = dump({1, "a"})
        assert isinstance(result, list)
        assert sorted(map(str, result)) == ["1", "a"]

    def test_dataclasses_dump_with_wire_names(self) -> None:
        """Dataclasses become objects keyed by alias or field name, nested all the way."""
        drawing = Drawing(
            shapes=[Circle(radius=1.0), Rect(width=2, height=3)],
            labels={"x": [1]},
        )
        assert dump(drawing) == {
            "shapes": [
                {"kind": "circle", "radius": 1.0},
                {"kind": "rect", "width": 2, "height": 3},
            ],
            "origin": [0, 0],
            "at": None,
            "labels": {"x": [1]},
        }
        assert dump(Address(street="s", city="c", zip_code="12345")) == {
            "street": "s",
            "city": "c",
            "zip": "12345",
        }

    def test_exclude_none_drops_null_fields(self) -> None:
        """exclude_none leaves out dataclass fields that are None, at every level."""
        value = Tree(label="r", children=[Tree(label="c")])
        assert dump(value, exclude_none=True) == {
            "label": "r",
            "weight": 0,
            "children": [{"label": "c", "weight": 0, "children": []}],
        }

    def test_exclude_none_keeps_nulls_inside_plain_data(self) -> None:
        """Only dataclass fields are dropped; None inside lists and dicts is data."""
        assert dump(Bag(anything={"k": None, "l": [None]}), exclude_none=True) == {
            "anything": {"k": None, "l": [None]}
        }

    def test_init_false_fields_are_not_dumped(self) -> None:
        """Fields computed in __post_init__ are left out, so parse can rebuild them."""
        assert dump(Computed(2)) == {"base": 2}

    def test_empty_dataclass_dumps_to_empty_object(self) -> None:
        """A dataclass without fields is an empty object."""
        assert dump(Empty()) == {}
        assert dump(Empty(), exclude_none=True) == {}

    def test_dumped_containers_are_fresh(self) -> None:
        """The result shares no list or dict with the value."""
        labels = {"x": [1]}
        result = dump(Drawing(shapes=[], labels=labels))
        assert isinstance(result, dict)
        assert result["labels"] == labels
        assert result["labels"] is not labels


class TestErrors:
    def test_unsupported_value_names_the_path_and_field(self) -> None:
        """A value serde cannot represent is a SchemaError naming where it sits."""
        with pytest.raises(SchemaError) as info:
            dump(Tree(label="r", children=[Tree(label="c", extra=[1, Opaque()])]))
        assert info.value.message == "cannot dump a value of type Opaque at $.children[0].extra[1]"
        assert info.value.dataclass_type is Tree
        assert info.value.field_name == "extra"

    def test_unsupported_top_level_value(self) -> None:
        """An unsupported value outside any dataclass has no field context."""
        with pytest.raises(SchemaError, match=r"cannot dump a value of type bytes at \$") as info:
            dump(b"raw")
        assert info.value.dataclass_type is None

    def test_unsupported_dict_keys(self) -> None:
        """JSON object keys must come from str, int or enum keys."""
        with pytest.raises(SchemaError) as info:
            dump({"ok": {("a", "b"): "full"}})
        assert info.value.message == (
            "cannot dump a dict key of type tuple (keys must be str, int or enum) "
            "at $.ok[('a', 'b')]"
        )
