"""parse and parse_json: every supported type, and every way input can be wrong."""

from __future__ import annotations

import threading
from collections.abc import Mapping, MutableMapping, MutableSequence, MutableSet, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from decimal import Decimal
from enum import Enum, IntEnum, StrEnum
from pathlib import Path, PurePosixPath
from types import MappingProxyType
from typing import Annotated, Any, Literal, NewType
from uuid import UUID

import pytest

from tests.serde.models import Address, Circle, Customer, Drawing, Rect, Status, Tree
from weakincentives.errors import ParseError, SerdeError
from weakincentives.serde import JSONObject, JSONValue, parse, parse_json, shares_input

UserId = NewType("UserId", str)


class Mode(Enum):
    FAST = "fast"
    SLOW = 2


class Flag(IntEnum):
    OFF = 0
    ON = 1


class Shade(StrEnum):
    DARK = "dark"
    LIGHT = "light"


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass(frozen=True, kw_only=True)
class Checked:
    """Rejects negative totals in __post_init__."""

    total: int

    def __post_init__(self) -> None:
        if self.total < 0:
            raise ValueError("total must not be negative")


@dataclass(slots=True)
class Box[T]:
    item: T
    items: list[T] = field(default_factory=list)


@dataclass
class Holder:
    boxed: Box[int]


@dataclass
class Empty:
    pass


def _error(cls: Any, data: object, **kwargs: Any) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(cls, data, **kwargs)
    return info.value


class TestScalars:
    @pytest.mark.parametrize(
        ("hint", "data", "expected"),
        [
            (int, 3, 3),
            (int, 3.0, 3),
            (int, Flag.ON, 1),
            (float, 2, 2.0),
            (float, 2.5, 2.5),
            (str, "hi", "hi"),
            (bool, False, False),
            (type(None), None, None),
            (Decimal, "1.50", Decimal("1.50")),
            (Decimal, 2, Decimal(2)),
            (Decimal, 0.1, Decimal("0.1")),
            (Decimal, Decimal("3"), Decimal("3")),
            (
                UUID,
                "12345678-1234-5678-1234-567812345678",
                UUID(int=0x12345678123456781234567812345678),
            ),
            (datetime, "2024-05-01T12:30:00Z", datetime(2024, 5, 1, 12, 30, tzinfo=UTC)),
            (datetime, "2024-05-01T12:30:00", datetime(2024, 5, 1, 12, 30)),
            (date, "2024-05-01", date(2024, 5, 1)),
            (time, "12:30:15.5", time(12, 30, 15, 500000)),
            (Path, "a/b", Path("a/b")),
            (PurePosixPath, "a/b", PurePosixPath("a/b")),
            (Any, {"a": [1]}, {"a": [1]}),
            (object, [None], [None]),
            (UserId, "u1", "u1"),
            (JSONValue, {"k": [1, "2"]}, {"k": [1, "2"]}),
            (JSONObject, {"k": 1}, {"k": 1}),
        ],
    )
    def test_valid_scalars_parse(self, hint: Any, data: object, expected: object) -> None:
        """Each scalar type accepts its JSON form (and documented widenings)."""
        result = parse(hint, data)
        assert result == expected
        assert type(result) is type(expected)

    @pytest.mark.parametrize(
        ("hint", "data", "message"),
        [
            (int, True, "expected an integer, got boolean true at $"),
            (int, 1.5, "expected an integer, got number 1.5 at $"),
            (int, "1", 'expected an integer, got string "1" at $'),
            (float, False, "expected a finite number, got boolean false at $"),
            (float, float("nan"), "expected a finite number, got number nan at $"),
            (
                float,
                10**400,
                "expected a finite number, got integer with 401 digits at $",
            ),
            (str, 1, "expected a string, got integer 1 at $"),
            (bool, 1, "expected a boolean, got integer 1 at $"),
            (bool, "true", 'expected a boolean, got string "true" at $'),
            (type(None), 0, "expected null, got integer 0 at $"),
            (Decimal, "1e", 'expected a decimal number or numeric string, got string "1e" at $'),
            (Decimal, "NaN", 'expected a decimal number or numeric string, got string "NaN" at $'),
            (Decimal, " 1", 'expected a decimal number or numeric string, got string " 1" at $'),
            (Decimal, True, "expected a decimal number or numeric string, got boolean true at $"),
            (
                Decimal,
                Decimal("Infinity"),
                "expected a decimal number or numeric string, got Decimal instance at $",
            ),
            (UUID, "nope", 'expected a UUID string, got string "nope" at $'),
            (UUID, 5, "expected a UUID string, got integer 5 at $"),
            (
                datetime,
                "yesterday",
                'expected an ISO 8601 datetime string, got string "yesterday" at $',
            ),
            (
                date,
                "2024-05-01T00:00:00",
                'expected an ISO 8601 date string, got string "2024-05-01T00:00:00" at $',
            ),
            (
                date,
                datetime(2024, 1, 1),
                "expected an ISO 8601 date string, got datetime instance at $",
            ),
            (Path, 3, "expected a path string, got integer 3 at $"),
        ],
    )
    def test_invalid_scalars_name_what_was_expected(
        self, hint: Any, data: object, message: str
    ) -> None:
        """A wrong scalar gives the expected kind, the value received and the path."""
        error = _error(hint, data)
        assert error.message == message
        assert error.path == "$"
        assert error.dataclass_type is None

    @pytest.mark.parametrize(
        ("hint", "data"),
        [
            (UUID, UUID(int=1)),
            (datetime, datetime(2024, 1, 1)),
            (Path, Path("x")),
            (str, Shade.DARK),
        ],
    )
    def test_instances_are_accepted_from_python_callers(self, hint: Any, data: object) -> None:
        """Values that already have the target type pass through unchanged."""
        assert parse(hint, data) is data


class TestChoices:
    @pytest.mark.parametrize(
        ("hint", "data", "expected"),
        [
            (Literal["a", "b"], "b", "b"),
            (Literal[1, True], True, True),
            (Literal[1, True], 1, 1),
            (Literal[Shade.DARK], "dark", Shade.DARK),
            (Literal[Shade.DARK], Shade.DARK, Shade.DARK),
            (Literal["a"] | None, None, None),
            (Literal[None], None, None),
            (Shade, "light", Shade.LIGHT),
            (Shade, Shade.LIGHT, Shade.LIGHT),
            (Flag, 1, Flag.ON),
            (Mode, 2, Mode.SLOW),
            (Mode, "fast", Mode.FAST),
        ],
    )
    def test_literals_and_enums_parse_by_value(
        self, hint: Any, data: object, expected: object
    ) -> None:
        """Literal values and enum values map to the Python value, type included."""
        result = parse(hint, data)
        assert result == expected
        assert type(result) is type(expected)

    @pytest.mark.parametrize(
        ("hint", "data", "message"),
        [
            (Literal["a", "b"], "c", 'expected one of "a", "b", got string "c" at $'),
            (Literal[1], True, "expected one of 1, got boolean true at $"),
            (Flag, True, "expected one of 0, 1, got boolean true at $"),
            (Shade, ["dark"], 'expected one of "dark", "light", got array of 1 item at $'),
            (
                Literal[tuple(range(12))],
                99,
                "expected one of 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..., got integer 99 at $",
            ),
        ],
    )
    def test_unknown_choices_list_the_allowed_values(
        self, hint: Any, data: object, message: str
    ) -> None:
        """A value outside the choices lists the allowed wire values."""
        assert _error(hint, data).message == message


class TestCollections:
    @pytest.mark.parametrize(
        ("hint", "data", "expected"),
        [
            (list[int], [1, 2], [1, 2]),
            (list[int], (1, 2), [1, 2]),
            (list[int], {3}, [3]),
            (list, [1, "a"], [1, "a"]),
            (MutableSequence[str], ["a"], ["a"]),
            (tuple[int, ...], [1, 2], (1, 2)),
            (Sequence[int], [1], (1,)),
            (tuple, [1, "x"], (1, "x")),
            (tuple[int, str], [1, "x"], (1, "x")),
            (tuple[()], [], ()),
            (set[int], [1, 1, 2], {1, 2}),
            (MutableSet[int], [1], {1}),
            (frozenset[str], ["a"], frozenset({"a"})),
            (AbstractSet[str], ["a"], frozenset({"a"})),
            (dict[str, int], {"a": 1}, {"a": 1}),
            (dict, {"a": [1]}, {"a": [1]}),
            (MutableMapping[str, int], {"a": 1}, {"a": 1}),
            (dict[int, str], {"-3": "x", "4": "y"}, {-3: "x", 4: "y"}),
            (dict[int, str], {5: "x"}, {5: "x"}),
            (dict[Shade, int], {"dark": 1}, {Shade.DARK: 1}),
            (dict[Shade, int], {Shade.DARK: 1}, {Shade.DARK: 1}),
            (dict[Literal["a", "b"], int], {"b": 2}, {"b": 2}),
        ],
    )
    def test_collections_parse_into_their_container(
        self, hint: Any, data: object, expected: object
    ) -> None:
        """Arrays become the declared container; objects become dicts with typed keys."""
        result = parse(hint, data)
        assert result == expected
        assert type(result) is type(expected)

    def test_mapping_fields_become_read_only(self) -> None:
        """A Mapping annotation gives a read-only view, so frozen values stay frozen."""
        hint: Any = Mapping[str, int]
        result = parse(hint, {"a": 1})
        assert isinstance(result, MappingProxyType)
        assert result == {"a": 1}

    @pytest.mark.parametrize(
        ("hint", "data", "message"),
        [
            (list[int], "abc", 'expected an array, got string "abc" at $'),
            (list[int], [1, "2"], 'expected an integer, got string "2" at $[1]'),
            (tuple[int, ...], [1, 2, None], "expected an integer, got null at $[2]"),
            (
                tuple[int, str],
                [1],
                "expected an array of exactly 2 items, got array of 1 item at $",
            ),
            (tuple[int], {}, "expected an array of exactly 1 item, got empty object at $"),
            (tuple[int, str], [1, 2], "expected a string, got integer 2 at $[1]"),
            (set[Any], [[1]], "expected an array of hashable items, got array of 1 item at $"),
            (dict[str, int], [], "expected an object, got array of 0 items at $"),
            (
                dict[str, int],
                {"a": 1, "b c": "x"},
                "expected an integer, got string \"x\" at $['b c']",
            ),
            (dict[str, int], {1: 1}, "expected a string, got integer 1 at $[1]"),
            (dict[int, str], {"x": "y"}, 'expected an integer key, got string "x" at $.x'),
            (
                dict[Shade, int],
                {"pink": 1},
                'expected one of "dark", "light", got string "pink" at $.pink',
            ),
        ],
    )
    def test_collection_errors_point_at_the_item(
        self, hint: Any, data: object, message: str
    ) -> None:
        """The path names the failing index or key."""
        assert _error(hint, data).message == message


class TestUnions:
    @pytest.mark.parametrize(
        ("hint", "data", "expected"),
        [
            (int | None, None, None),
            (int | None, 4, 4),
            (int | float, 1, 1),
            (int | float, 1.5, 1.5),
            (float | int, 1, 1),
            (float | int, 2.0, 2.0),
            (str | int, "1", "1"),
            (Decimal | str, "1.5", Decimal("1.5")),
            (Literal["auto"] | int, "auto", "auto"),
            (list[int] | dict[str, int], {"a": 1}, {"a": 1}),
            (Circle | Rect, {"kind": "rect", "width": 1, "height": 2}, Rect(width=1, height=2)),
            (Any | None, [1], [1]),
        ],
    )
    def test_unions_pick_the_member_matching_the_json_type(
        self, hint: Any, data: object, expected: object
    ) -> None:
        """Exact JSON type matches win over widening; then declaration order decides."""
        result = parse(hint, data)
        assert result == expected
        assert type(result) is type(expected)

    @pytest.mark.parametrize(
        ("hint", "data", "message"),
        [
            (int | None, "x", 'expected an integer or null, got string "x" at $'),
            (int | str, [1], "expected an integer or a string, got array of 1 item at $"),
            (
                Circle | Rect,
                {"kind": "rect", "width": 1},
                "expected a value (required field), got nothing at $.height",
            ),
            (
                Circle | Rect,
                {"kind": "oval"},
                'expected one of "circle", "rect", got string "oval" at $.kind',
            ),
            (
                Circle | None,
                {"radius": "big"},
                'expected a finite number, got string "big" at $.radius',
            ),
            (int | str, Decimal(1), "expected an integer or a string, got Decimal instance at $"),
        ],
    )
    def test_union_errors_report_the_deepest_attempt(
        self, hint: Any, data: object, message: str
    ) -> None:
        """When no member fits, the member that got furthest explains why."""
        assert _error(hint, data).message == message

    def test_union_members_accept_python_instances(self) -> None:
        """A dataclass instance inside a union is kept as it is."""
        rect = Rect(width=1, height=1)
        hint: Any = Circle | Rect
        assert parse(hint, rect) is rect


class TestDataclasses:
    def test_nested_dataclasses_with_defaults_and_aliases(self) -> None:
        """Nested objects parse; missing fields take defaults; aliases are the wire names."""
        result = parse(
            Customer,
            {
                "id": "12345678-1234-5678-1234-567812345678",
                "name": "Ada",
                "age": 36,
                "addresses": [{"street": "Main", "city": "Oslo", "zip": "01234"}],
                "tags": ["x"],
                "preferences": {"theme": "dark", "size": 3},
            },
        )
        assert result.addresses == (Address(street="Main", city="Oslo", zip_code="01234"),)
        assert result.status is Status.ACTIVE
        assert result.score == 0.0
        assert result.tags == frozenset({"x"})
        assert result.preferences == {"theme": "dark", "size": 3}

    def test_default_factories_run_for_each_parse(self) -> None:
        """Each parsed value gets its own default container."""
        first = parse(Tree, {"label": "a"})
        second = parse(Tree, {"label": "b"})
        assert first.children == [] == second.children
        assert first.children is not second.children

    def test_recursive_dataclasses_parse(self) -> None:
        """A dataclass that contains itself parses to any depth the data has."""
        tree = parse(
            Tree, {"label": "r", "children": [{"label": "c", "children": [{"label": "g"}]}]}
        )
        assert tree.children[0].children[0] == Tree(label="g")

    def test_recursive_errors_have_deep_paths(self) -> None:
        """Errors inside recursive data name the whole path."""
        error = _error(
            Tree, {"label": "r", "children": [{"label": "c", "children": [{"label": 1}]}]}
        )
        assert error.path == "$.children[0].children[0].label"
        assert error.dataclass_type is Tree

    def test_generic_dataclasses_are_parametrised(self) -> None:
        """A generic dataclass field uses the type arguments it was given."""
        assert parse(Holder, {"boxed": {"item": 1, "items": [2]}}) == Holder(Box(1, [2]))
        assert _error(Holder, {"boxed": {"item": "x"}}).path == "$.boxed.item"
        assert parse(Box[str], {"item": "s"}) == Box("s")
        assert parse(Box, {"item": [1]}) == Box([1])

    def test_instances_are_returned_as_they_are(self) -> None:
        """Parsing a value that already is an instance returns that very instance."""
        point = Point(1, 2)
        assert parse(Point, point) is point
        assert parse(list[Point], [point])[0] is point

    def test_mappings_other_than_dict_are_read(self) -> None:
        """Any Mapping is read like a JSON object."""
        assert parse(Point, MappingProxyType({"x": 1})) == Point(1)

    def test_post_init_runs_and_its_errors_become_parse_errors(self) -> None:
        """A class with __post_init__ is built through __init__, and its ValueError is reported."""
        assert parse(Checked, {"total": 2}) == Checked(total=2)
        error = _error(list[Checked], [{"total": -1}])
        assert error.message == (
            "expected a valid Checked, got ValueError: total must not be negative at $[0]"
        )

    def test_empty_dataclass_parses_from_empty_object(self) -> None:
        """A dataclass without fields takes an empty object and rejects members."""
        assert parse(Empty, {}) == Empty()
        assert _error(Empty, {"a": 1}).message == (
            "expected no fields (unknown fields are forbidden), got unknown field 'a' "
            "at $.a while parsing Empty"
        )

    def test_missing_required_field(self) -> None:
        """A missing required field is reported at the field's path."""
        error = _error(Point, {"y": 1})
        assert error.message == (
            "expected a value (required field), got nothing at $.x while parsing Point"
        )
        assert (error.path, error.expected, error.got) == (
            "$.x",
            "a value (required field)",
            "nothing",
        )
        assert error.dataclass_type is Point

    def test_unknown_field_is_forbidden_by_default(self) -> None:
        """An unknown member is named, with the list of fields the class has."""
        error = _error(Point, {"x": 1, "z": 2})
        assert error.message == (
            "expected only the fields x, y (unknown fields are forbidden), got unknown field 'z' "
            "at $.z while parsing Point"
        )

    def test_unknown_fields_can_be_ignored(self) -> None:
        """extra='ignore' drops members no field declares, at every level."""
        data = {"shapes": [{"radius": 1, "colour": "red"}], "note": "x"}
        drawing = parse(Drawing, data, extra="ignore")
        assert drawing == Drawing(shapes=[Circle(radius=1)])

    def test_alias_is_the_only_wire_name(self) -> None:
        """With an alias the attribute name is an unknown member."""
        error = _error(Address, {"street": "s", "city": "c", "zip_code": "12345"})
        assert error.path == "$.zip_code"

    def test_not_an_object(self) -> None:
        """A non-object where a dataclass is expected names the class."""
        assert _error(Point, [1, 2]).message == (
            "expected an object (Point), got array of 2 items at $ while parsing Point"
        )

    def test_constraint_errors_name_the_limit(self) -> None:
        """Constraint violations say which bound was broken."""
        assert _error(Address, {"street": "", "city": "c"}).message == (
            'expected a string with at least 1 character, got string "" at $.street '
            "while parsing Address"
        )
        assert _error(Address, {"street": "s", "city": "c", "zip": "1234"}).message == (
            "expected a string matching '^[0-9]{5}$', got string \"1234\" at $.zip "
            "while parsing Address"
        )

    def test_bad_extra_mode_is_rejected(self) -> None:
        """An unknown extra mode is a SerdeError, not silently accepted."""
        with pytest.raises(SerdeError, match="extra must be 'forbid' or 'ignore', got 'allow'"):
            parse(Point, {"x": 1}, extra="allow")  # type: ignore[arg-type]  # the wrong value is the point
        with pytest.raises(SerdeError, match="extra must be 'forbid' or 'ignore', got 'allow'"):
            parse_json(Point, '{"x": 1}', extra="allow")  # type: ignore[arg-type]  # as above

    def test_unhashable_roots_are_compiled_each_time(self) -> None:
        """Annotated roots with dict metadata still parse (they just are not cached)."""
        hint: Any = Annotated[int, {"ge": 0}]
        assert parse(hint, 3) == 3
        assert _error(hint, -1).message == "expected a value >= 0, got integer -1 at $"

    def test_deeply_nested_data_is_a_parse_error(self) -> None:
        """Data nested beyond the recursion limit is reported, not crashed on."""
        data: dict[str, object] = {"label": "x"}
        for _ in range(5000):
            data = {"label": "x", "children": [data]}
        error = _error(Tree, data)
        assert (error.path, error.got) == ("$", "data nested too deeply to parse")

    def test_parsing_from_many_threads_compiles_once(self) -> None:
        """Concurrent first use compiles one plan that every thread uses."""

        @dataclass
        class Fresh:
            value: int

        results: list[object] = []
        barrier = threading.Barrier(8)

        def work() -> None:
            barrier.wait()
            results.append(parse(Fresh, {"value": 1}))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert results == [Fresh(1)] * 8


class TestParseJson:
    def test_text_and_bytes_parse(self) -> None:
        """str, UTF-8 and UTF-16 bytes are all decoded."""
        text = '{"x": 1, "y": 2}'
        assert parse_json(Point, text) == Point(1, 2)
        assert parse_json(Point, text.encode()) == Point(1, 2)
        assert parse_json(Point, text.encode("utf-16")) == Point(1, 2)

    @pytest.mark.parametrize(
        ("text", "got"),
        [
            ('{"x": ', "invalid JSON (Expecting value at line 1 column 7)"),
            ('{"x": 1}\n{"x": 2}', "invalid JSON (Extra data at line 2 column 1)"),
            ('{"x": NaN}', "invalid JSON (NaN is not a JSON number at line 1 column 7)"),
            (
                '{"x": -Infinity}',
                "invalid JSON (-Infinity is not a JSON number at line 1 column 7)",
            ),
            (b'{"x": "\xff"}', "undecodable bytes (invalid start byte at byte 7)"),
            ("[" * 100_000, "JSON nested more than 128 levels deep"),
        ],
    )
    def test_malformed_json_is_a_parse_error_at_the_root(self, text: str | bytes, got: str) -> None:
        """Malformed JSON says what and where, at path $."""
        with pytest.raises(ParseError) as info:
            parse_json(Point, text)
        assert info.value.path == "$"
        assert info.value.expected == "valid JSON"
        assert info.value.got == got
        assert info.value.dataclass_type is Point

    def test_non_text_input_is_a_parse_error(self) -> None:
        """Passing something that is not text is reported like bad JSON."""
        with pytest.raises(
            ParseError, match=r"expected JSON text \(str or bytes\), got integer 5 at \$"
        ):
            parse_json(Point, 5)  # type: ignore[arg-type]  # the wrong type is the point

    def test_overflowing_numbers_are_refused_while_decoding(self) -> None:
        """1e999 would decode to infinity, which JSON cannot carry back: refused at $."""
        with pytest.raises(
            ParseError,
            match=r"expected valid JSON, got number 1e999 \(too large for a double at line 1 "
            r"column 7\) at \$$",
        ):
            parse_json(dict[str, float], '{"x": 1e999}')

    def test_extra_mode_applies(self) -> None:
        """parse_json passes extra= through to parse."""
        assert parse_json(Point, '{"x": 1, "q": 0}', extra="ignore") == Point(1)


class PlainKey(Enum):
    A = "a"


@dataclass(frozen=True)
class Tagged:
    kind: Literal["circle"]
    size: int = 0


@dataclass
class Modal:
    mode: Mode
    pairs: set[Rect] = field(default_factory=set)


@dataclass
class Outer[T]:
    box: Box[list[T]]


class TestMoreShapes:
    @pytest.mark.parametrize(
        ("hint", "data", "message"),
        [
            (int | UUID, [1], "expected an integer or a UUID string, got array of 1 item at $"),
            (Path | None, 1, "expected a path string or null, got integer 1 at $"),
            (
                tuple[int, int] | dict[str, int],
                "x",
                'expected an array or an object, got string "x" at $',
            ),
            (
                Decimal | float | Literal["x"] | Point,
                True,
                "expected a decimal number or numeric string or a finite number or "
                'one of "x" or an object (Point), got boolean true at $',
            ),
            (list[int] | list[str], [1, "a"], 'expected an integer, got string "a" at $[1]'),
        ],
    )
    def test_union_messages_list_every_member(self, hint: Any, data: object, message: str) -> None:
        """Union errors spell out each member; equal-depth failures keep the first."""
        assert _error(hint, data).message == message

    def test_any_member_takes_what_others_refuse(self) -> None:
        """Any in a union catches values the typed members do not take."""
        hint: Any = date | bool | Any
        assert parse(hint, None) is None

    def test_decimal_exponents_beyond_range_are_rejected(self) -> None:
        """A decimal string Decimal() cannot hold is a parse error, not a crash."""
        error = _error(Decimal, "1e99999999999999999999999")
        assert error.expected == "a decimal number or numeric string"

    def test_unions_without_a_discriminator_try_members(self) -> None:
        """A member lacking the tag field, or tags shared by two members, disable dispatch."""
        no_tag: Any = Circle | Point
        assert parse(no_tag, {"x": 1}) == Point(1)
        shared: Any = Circle | Tagged
        assert parse(shared, {"kind": "circle", "size": 2}) == Tagged(kind="circle", size=2)

    def test_tagged_unions_reject_unhashable_tags(self) -> None:
        """A tag that is not a scalar is reported at the tag's path."""
        hint: Any = Circle | Rect
        assert _error(hint, {"kind": ["rect"]}).message == (
            'expected one of "circle", "rect", got array of 1 item at $.kind'
        )

    def test_plain_enum_keys_accept_members(self) -> None:
        """Enum members work as dict keys from Python callers."""
        assert parse(dict[PlainKey, int], {PlainKey.A: 1, "a": 2}) == {PlainKey.A: 2}

    def test_huge_decimals_fail_multiple_checks_cleanly(self) -> None:
        """A decimal too large to divide exactly is not a multiple, not a crash."""
        hint: Any = Annotated[Decimal, {"multiple_of": 0.01}]
        assert _error(hint, "1e999999").expected == "a multiple of 0.01"

    @pytest.mark.parametrize(
        ("hint", "data", "expected"),
        [
            (Literal["a", None], None, None),
            (Literal["a", None], "a", "a"),
            (Literal[None] | None, None, None),
            (None | Literal[None] | int, 3, 3),
        ],
    )
    def test_null_in_literals_is_an_optional(
        self, hint: Any, data: object, expected: object
    ) -> None:
        """None inside Literal works like `| None`, duplicates collapse."""
        assert parse(hint, data) == expected

    def test_mixed_enums_and_hashable_dataclass_sets_in_fields(self) -> None:
        """Enums with mixed value types and sets of frozen dataclasses parse inside classes."""
        result = parse(Modal, {"mode": 2, "pairs": [{"width": 1, "height": 2}]})
        assert result == Modal(Mode.SLOW, {Rect(width=1, height=2)})
        assert _error(Modal, {"mode": "slow"}).path == "$.mode"

    def test_generic_arguments_reach_nested_generics(self) -> None:
        """Type variables inside nested generic arguments are substituted."""
        assert parse(Outer[int], {"box": {"item": [1]}}) == Outer(Box([1]))
        assert _error(Outer[int], {"box": {"item": ["x"]}}).path == "$.box.item[0]"


@dataclass(frozen=True)
class Shouting:
    """A dataclass whose own ``__init__`` changes what it stores."""

    word: str

    def __init__(self, word: str) -> None:
        object.__setattr__(self, "word", word.upper())


def test_a_user_written_init_is_called() -> None:
    """parse goes through an __init__ the user wrote; only generated ones are skipped."""
    assert parse(Shouting, {"word": "hello"}).word == "HELLO"


@dataclass(frozen=True)
class TypedOnly:
    names: list[str]
    counts: dict[str, int]
    pairs: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class HoldsJSON:
    typed: TypedOnly
    raw: JSONValue


def test_shares_input_says_which_types_keep_the_callers_containers() -> None:
    """Typed containers are rebuilt; JSONValue (or Any) fields keep the caller's objects."""
    data: dict[str, JSONValue] = {"names": ["a"], "counts": {"x": 1}, "pairs": [[1, 2]]}
    parsed = parse(TypedOnly, data)
    assert parsed.names is not data["names"]
    assert shares_input(TypedOnly) is False
    wrapper: dict[str, JSONValue] = {"typed": data, "raw": {"kept": [1]}}
    assert parse(HoldsJSON, wrapper).raw is wrapper["raw"]
    assert shares_input(HoldsJSON) is True
