"""dump_typed / parse_typed: values whose declared type is open load back as they were."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Annotated, Any, Literal, NewType
from uuid import UUID

import pytest

from tests.serde.helpers import at
from tests.serde.typed_models import (
    Bounded,
    Box,
    Derived,
    Flavor,
    Inner,
    Level,
    ListBox,
    Mood,
    MyPath,
    Node,
    Opaque,
    Record,
    Shape,
    Tree,
    UserId,
    Wide,
    WithCache,
    assert_identical,
)
from weakincentives.errors import ParseError, RecordedError, SchemaError, UnknownTypeError
from weakincentives.serde import dump, dump_typed, parse_typed


def _handler() -> None:
    """A function: never storable."""


UID = UUID("12345678-1234-5678-1234-567812345678")
WHEN = datetime(2026, 3, 1, 12, 30, tzinfo=UTC)


def _round_trip[T](value: T, cls: type[T] | Any = object) -> T:
    """Dump typed, through JSON text, and parse typed again."""
    text = json.dumps(dump_typed(value, cls), allow_nan=False)
    loaded: T = parse_typed(cls, json.loads(text))
    return loaded


def _wide() -> Wide:
    return Wide(
        flag=True,
        count=3,
        ratio=0.5,
        text="hé",
        when=WHEN,
        day=date(2026, 3, 1),
        clock=time(7, 45, 1, 5),
        choice="b",
        level=Level.HIGH,
        scores={"x": 1.5},
        by_flavor={Flavor.SOUR: 1},
        by_number={7: "seven"},
        pair=(1, "one"),
        unique=frozenset({3, 1, 2}),
        json={"raw": [1, None, "x"]},
        either="s",
        maybe=Inner(a=1, tags=("t",)),
    )


class TestPlainWhereTheTypeIsDeclared:
    """Values whose declared type says what they are dump exactly as ``dump`` does."""

    def test_closed_dataclass_dumps_like_dump(self) -> None:
        """Every closed field kind is written in dump's form, with no type names."""
        value = _wide()
        assert dump_typed(value, Wide) == dump(value)

    def test_closed_dataclass_loads_back_identical(self) -> None:
        """The same value, with the same classes (tuple, frozenset, enum keys), comes back."""
        value = _wide()
        assert_identical(_round_trip(value, Wide), value)

    def test_root_declared_object_is_tagged_with_the_class_name(self) -> None:
        """With no declared type the root names its class by module:qualname."""
        assert dump_typed(Inner(a=1)) == {
            "$type": "tests.serde.typed_models:Inner",
            "a": 1,
            "tags": [],
        }

    def test_keys_of_an_int_enum_are_pairs(self) -> None:
        """Only str-valued keys become member names; an IntEnum key map is written as pairs."""
        assert dump_typed({Level.LOW: "x"}, dict[Level, str]) == [[1, "x"]]
        assert_identical(parse_typed(dict[Level, str], [[1, "x"]]), {Level.LOW: "x"})

    def test_generic_dataclass_declared_with_its_argument_is_plain(self) -> None:
        """Box[int] declared: the item is written plainly and read as an int."""
        assert dump_typed(Box(item=3), Box[int]) == {"item": 3, "note": ""}
        assert parse_typed(Box[int], {"item": 3}) == Box(item=3)

    def test_generic_dataclass_in_an_open_field_tags_its_open_item(self) -> None:
        """An unparametrised Box's item is open, so a tuple in it keeps its type."""
        value = Record(name="r", payload=Box(item=(1, 2)))
        assert at(dump_typed(value, Record), "payload") == {
            "$type": "tests.serde.typed_models:Box",
            "item": {"$type": "tuple", "value": [1, 2]},
            "note": "",
        }
        assert_identical(_round_trip(value, Record), value)


OPEN_VALUES: list[tuple[str, object, object]] = [
    ("null", None, None),
    ("bool", True, True),
    ("int", 5, 5),
    ("float", 1.0, 1.0),
    ("str", "s", "s"),
    ("list", [1, "a"], [1, "a"]),
    ("dict", {"k": 1}, {"k": 1}),
    ("tuple", (1, 2), {"$type": "tuple", "value": [1, 2]}),
    ("set", {2, 1}, {"$type": "set", "value": [1, 2]}),
    ("frozenset", frozenset({"b", "a"}), {"$type": "frozenset", "value": ["a", "b"]}),
    ("int keys", {1: "a"}, {"$type": "dict", "value": [[1, "a"]]}),
    (
        "tuple keys",
        {("a", "b"): 1},
        {"$type": "dict", "value": [[{"$type": "tuple", "value": ["a", "b"]}, 1]]},
    ),
    ("$type key", {"$type": "x"}, {"$type": "dict", "value": {"$type": "x"}}),
    ("mappingproxy", MappingProxyType({"k": 1}), {"$type": "mapping", "value": {"k": 1}}),
    ("ordered dict", OrderedDict(k=1), {"$type": "dict", "value": {"k": 1}}),
    ("datetime", WHEN, {"$type": "datetime", "value": "2026-03-01T12:30:00+00:00"}),
    ("date", date(2026, 3, 1), {"$type": "date", "value": "2026-03-01"}),
    ("time", time(7, 45), {"$type": "time", "value": "07:45:00"}),
    ("uuid", UID, {"$type": "uuid", "value": str(UID)}),
    ("decimal", Decimal("1.50"), {"$type": "decimal", "value": "1.50"}),
    ("path", PurePosixPath("a/b"), {"$type": "pure_posix_path", "value": "a/b"}),
    ("str enum", Flavor.SOUR, {"$type": "tests.serde.typed_models:Flavor", "value": "sour"}),
    ("int enum", Level.LOW, {"$type": "tests.serde.typed_models:Level", "value": 1}),
    (
        "tuple-valued enum",
        Mood.CALM,
        {
            "$type": "tests.serde.typed_models:Mood",
            "value": {"$type": "tuple", "value": [1, "calm"]},
        },
    ),
    ("class", Inner, {"$type": "type", "value": "tests.serde.typed_models:Inner"}),
    ("builtin class", int, {"$type": "type", "value": "int"}),
]


class TestOpenPositions:
    """Where the declared type is open, each value is written so that it loads as itself."""

    @pytest.mark.parametrize(
        ("value", "written"),
        [case[1:] for case in OPEN_VALUES],
        ids=[case[0] for case in OPEN_VALUES],
    )
    def test_form(self, value: object, written: object) -> None:
        """The exact JSON written for each kind of value."""
        assert dump_typed(value) == written

    @pytest.mark.parametrize(
        "value", [case[1] for case in OPEN_VALUES], ids=[case[0] for case in OPEN_VALUES]
    )
    def test_loads_back_identical(self, value: object) -> None:
        """Each value comes back equal and of exactly the same class."""
        expected = dict(value) if isinstance(value, OrderedDict) else value  # read as a dict
        assert_identical(_round_trip(value), expected)

    def test_int_subclass_loads_as_its_int_value(self) -> None:
        """A non-enum int subclass is stored as its int value (equal, not the subclass)."""
        assert dump_typed(UserId(7)) == {"$type": "int", "value": 7}
        assert_identical(_round_trip(UserId(7)), 7)

    def test_nested_open_values_keep_their_classes(self) -> None:
        """Containers in containers in dataclasses: every level keeps its class."""
        value = Record(
            name="n",
            payload=[(1, frozenset({Flavor.SWEET})), {"in": Box(item=Inner(a=2))}],
            extra={(1, 2): MappingProxyType({"d": date(2026, 1, 2)})},
        )
        assert_identical(_round_trip(value), value)

    def test_json_value_fields_keep_tuples(self) -> None:
        """A JSONValue field holding a tuple (not JSON, but accepted) loads as a tuple."""
        value = _wide()
        changed = Wide(**{**{f: getattr(value, f) for f in value.__slots__}, "json": (1, 2)})
        assert_identical(_round_trip(changed, Wide), changed)


type Pair[T] = tuple[T, T]
UserKey = NewType("UserKey", str)


class TestDeclaredForms:
    """Less common declared types: each writes the plain form and reads it back."""

    @pytest.mark.parametrize(
        ("hint", "value", "written"),
        [
            (Annotated[int, {"ge": 0}], 5, 5),
            (UserKey, UserKey("k"), "k"),
            (list, [1, (2,)], [1, {"$type": "tuple", "value": [2]}]),
            (tuple, (1, "a"), [1, "a"]),
            (frozenset, frozenset({2, 1}), [1, 2]),
            (dict, {"a": (1,)}, {"a": {"$type": "tuple", "value": [1]}}),
            (dict, {1: "a"}, {"$type": "dict", "value": [[1, "a"]]}),
            (Pair[int], (1, 2), [1, 2]),
            (dict[Literal["a", "b"], int], {"a": 1}, {"a": 1}),
            (dict[Flavor, int], {Flavor.SWEET: 1}, {"sweet": 1}),
            (Callable[[], None], 5, 5),
            (None, None, None),
            (Opaque, (1,), {"$type": "tuple", "value": [1]}),
            (ListBox[int], ListBox(box=Box(item=[1])), {"box": {"item": [1], "note": ""}}),
            (Bounded, Bounded(item=Inner(a=1)), {"item": {"a": 1, "tags": []}}),
            (Derived, Derived(base=2), {"base": 2}),
            (MyPath, MyPath("a/b"), "a/b"),
            (object, MyPath("a/b"), {"$type": "tests.serde.typed_models:MyPath", "value": "a/b"}),
        ],
        ids=lambda case: repr(case)[:40],
    )
    def test_form_and_round_trip(self, hint: Any, value: object, written: object) -> None:
        """The written form, and the identical value read back from it."""
        assert dump_typed(value, hint) == written
        assert_identical(parse_typed(hint, json.loads(json.dumps(written))), value)

    def test_derived_fields_are_computed_again(self) -> None:
        """An init=False field is not written; __post_init__ computes it on loading."""
        assert parse_typed(Derived, {"base": 4}).double == 8


class TestFieldsNotStored:
    """``metadata={"stored": False}`` keeps an in-process field out of stored values."""

    def test_left_out_and_loaded_with_its_default(self) -> None:
        """A function in such a field does not stop the value from being stored."""
        value = WithCache(key="k", cache=_handler)
        written = dump_typed(value)
        assert written == {"$type": "tests.serde.typed_models:WithCache", "key": "k"}
        loaded = parse_typed(WithCache, written)
        assert (loaded.key, loaded.cache) == ("k", None)
        assert loaded == value  # the field does not take part in equality

    def test_a_stored_member_for_it_is_unknown(self) -> None:
        """Data naming the field is refused like any unknown member."""
        with pytest.raises(ParseError, match=r"got unknown field 'cache' at \$\.cache"):
            parse_typed(WithCache, {"key": "k", "cache": 1})

    def test_it_needs_a_default(self) -> None:
        """A required field cannot be left out: it could not be loaded."""

        @dataclass(frozen=True)
        class Broken:
            handle: object = field(metadata={"stored": False})

        with pytest.raises(
            SchemaError, match=r"Broken\.handle: a field that is not stored .* needs a default"
        ):
            dump_typed(Broken(handle=1), Broken)

    def test_the_flag_is_a_bool(self) -> None:
        """Only True or False."""

        @dataclass(frozen=True)
        class Odd:
            handle: object = field(default=None, metadata={"stored": "no"})

        with pytest.raises(
            SchemaError, match=r"Odd\.handle: metadata 'stored' must be True or False, got 'no'"
        ):
            dump_typed(Odd(), Odd)


class TestFallbacks:
    """A value of another class than declared is tagged in every declared form."""

    @pytest.mark.parametrize(
        ("hint", "value"),
        [
            (float, "x"),
            (datetime, date(2026, 1, 1)),
            (Flavor, "sweet"),
            (Literal["a", "b"], 5),
            (type, 5),
            (BaseException, "oops"),
            (tuple[int, str], (1, "a", 2)),
            (dict[str, int], [1]),
            (dict[int, str], {"a": "b"}),
            (dict[Flavor, int], {Flavor.SWEET: 1, "x": 2}),
            (dict[tuple[str, ...], int], 5),
            (list[int], (1,)),
            (Inner, Box(item=1)),
        ],
        ids=lambda case: repr(case)[:40],
    )
    def test_tagged_and_loaded_as_itself(self, hint: Any, value: object) -> None:
        """The value is written with its type name and loads as itself (below the root,
        where the declared type is not checked; a root must be what was asked for)."""
        written = dump_typed([value], list[hint])
        assert isinstance(written, list)
        assert isinstance(written[0], dict)
        assert "$type" in written[0]
        loaded = parse_typed(list[hint], json.loads(json.dumps(written)))
        assert_identical(loaded, [value])

    def test_an_unwritable_key_tags_the_mapping_and_names_the_key(self) -> None:
        """A key a named-key mapping cannot write makes it pairs; a function key is refused."""
        with pytest.raises(
            SchemaError, match=r"cannot dump a value of type function at \$\.value\[0\]\[0\]$"
        ):
            dump_typed({_handler: 1}, dict[Flavor, int])


class TestDeclaredTypeMismatch:
    """A value of another class than declared is tagged, so it still loads as itself."""

    @pytest.mark.parametrize(
        ("labels", "written"),
        [
            (("a",), ["a"]),
            (["a"], {"$type": "list", "value": ["a"]}),
        ],
        ids=["tuple as declared", "list in a Sequence field"],
    )
    def test_sequence_field(self, labels: object, written: object) -> None:
        """Sequence reads back as a tuple, so a list is written with its type."""
        value = Record(name="r", labels=labels)  # type: ignore[arg-type]
        assert at(dump_typed(value, Record), "labels") == written
        assert_identical(_round_trip(value, Record), value)

    @pytest.mark.parametrize(
        ("count", "written"),
        [
            (True, {"$type": "bool", "value": True}),
            (None, {"$type": "none", "value": None}),
            (Level.HIGH, {"$type": "tests.serde.typed_models:Level", "value": 2}),
            (2.5, {"$type": "float", "value": 2.5}),
        ],
        ids=["bool", "None", "IntEnum", "float"],
    )
    def test_int_field(self, count: object, written: object) -> None:
        """An int field holding a bool, None, an enum member or a float keeps it."""
        value = Inner(a=count)  # type: ignore[arg-type]
        assert at(dump_typed(value, Inner), "a") == written
        assert_identical(_round_trip(value, Inner), value)

    def test_subclass_of_the_declared_dataclass(self) -> None:
        """A subclass instance in a field declared as its base is written with its name."""
        value = Wide(**{**{f: getattr(_wide(), f) for f in Wide.__slots__}, "maybe": Box(item=1)})
        assert at(dump_typed(value, Wide), "maybe") == {
            "$type": "tests.serde.typed_models:Box",
            "item": 1,
            "note": "",
        }
        assert_identical(_round_trip(value, Wide), value)

    def test_float_field_holding_an_int_reads_back_a_float(self) -> None:
        """Python lets an int stand for a float; it is read back as the equal float."""
        value = Wide(**{**{f: getattr(_wide(), f) for f in Wide.__slots__}, "ratio": 2})
        loaded = _round_trip(value, Wide)
        assert (loaded.ratio, type(loaded.ratio)) == (2.0, float)


class TestUnions:
    """Unions write JSON scalars plainly and everything else with its type name."""

    @pytest.mark.parametrize(
        ("hint", "value", "written"),
        [
            (int | str, 1, 1),
            (int | str, "1", "1"),
            (int | float, 1, 1),
            (int | float, 1.5, 1.5),
            (float | str, 2, 2),
            (Literal["auto"] | int, "auto", "auto"),
            (Literal[Flavor.SWEET] | None, Flavor.SWEET, "sweet"),
            (
                Inner | Box[int],
                Inner(a=1),
                {"$type": "tests.serde.typed_models:Inner", "a": 1, "tags": []},
            ),
            (int | str | None, None, None),
            (int | str, (1,), {"$type": "tuple", "value": [1]}),
        ],
    )
    def test_form_and_round_trip(self, hint: Any, value: object, written: object) -> None:
        """The written form, and the value read back from it."""
        assert dump_typed(value, hint) == written
        expected = 2.0 if (hint == float | str and value == 2) else value
        assert_identical(parse_typed(hint, written), expected)

    def test_dataclass_members_are_never_confused(self) -> None:
        """Two dataclass members with overlapping fields each load as their own class."""
        for body in (Inner(a=1), Box(item=1)):
            value = Shape(body=body)
            assert_identical(_round_trip(value, Shape), value)

    def test_optional_writes_its_member_plainly(self) -> None:
        """``X | None`` is X's own form or null."""
        assert dump_typed(UID, UUID | None) == str(UID)
        assert parse_typed(UUID | None, None) is None  # type: ignore[arg-type]

    def test_union_refuses_a_value_no_member_reads(self) -> None:
        """An object in an int-or-str position is a ParseError listing what fits."""
        with pytest.raises(
            ParseError,
            match=r"expected an integer, a string or a tagged value, got array of 1 item at \$",
        ) as caught:
            parse_typed(int | str, [1])  # type: ignore[arg-type]
        assert caught.value.path == "$"


class TestExceptions:
    """Exceptions are kept as their type name and message, never as the object."""

    def test_declared_exception_field(self) -> None:
        """The field holds type and message; it loads as a RecordedError."""
        value = Record(name="r", error=ValueError("bad value"))
        written = dump_typed(value, Record)
        assert at(written, "error") == {"type": "builtins:ValueError", "message": "bad value"}
        loaded = parse_typed(Record, written)
        assert isinstance(loaded.error, RecordedError)
        assert (loaded.error.type_name, loaded.error.message) == (
            "builtins:ValueError",
            "bad value",
        )

    def test_recorded_error_dumps_as_the_original(self) -> None:
        """Loading and dumping again writes the original type name, not RecordedError."""
        recorded = RecordedError("boom", type_name="myapp:Oops")
        assert dump_typed(recorded, BaseException) == {"type": "myapp:Oops", "message": "boom"}
        assert dump_typed(recorded) == {
            "$type": "exception",
            "value": {"type": "myapp:Oops", "message": "boom"},
        }

    def test_exception_in_an_open_position(self) -> None:
        """An exception where any value may stand is tagged ``exception``."""
        loaded = _round_trip(KeyError("k"))
        assert isinstance(loaded, RecordedError)
        assert (loaded.type_name, loaded.message) == ("builtins:KeyError", "'k'")

    def test_long_messages_are_cut(self) -> None:
        """A message is kept to 2,000 characters."""
        written = dump_typed(ValueError("x" * 5000), BaseException)
        message = at(written, "message")
        assert isinstance(message, str)
        assert (len(message), message[-3:]) == (2000, "...")

    def test_malformed_exception_record(self) -> None:
        """A record without both strings is a ParseError at its path."""
        with pytest.raises(
            ParseError,
            match=(
                r'expected an object with "type" and "message" strings, '
                r"got object with keys type at \$.error"
            ),
        ):
            parse_typed(Record, {"name": "r", "error": {"type": "x"}})


class TestRefusedValues:
    """What cannot be stored is a SchemaError naming the path, the class and the field."""

    def test_function(self) -> None:
        """A function in an open field: the path leads to it."""
        with pytest.raises(
            SchemaError, match=r"cannot dump a value of type function at \$\.payload\[1\]\.item"
        ) as caught:
            dump_typed(Record(name="r", payload=[1, Box(item=_handler)]), Record)
        assert (caught.value.dataclass_type, caught.value.field_name) == (Box, "item")

    @pytest.mark.parametrize(
        ("mapping", "path"),
        [({("a",): _handler}, r"\$\[0\]\[1\]"), ({_handler: 1}, r"\$\[0\]\[0\]")],
        ids=["value", "key"],
    )
    def test_pairs_name_the_key_or_the_value(self, mapping: object, path: str) -> None:
        """In a mapping written as pairs, the path says whether the key or the value failed."""
        with pytest.raises(SchemaError, match=rf"cannot dump a value of type function at {path}$"):
            dump_typed(mapping, dict[tuple[str, ...], object])

    @pytest.mark.parametrize(
        ("value", "hint", "path"),
        [
            ({"k": Opaque()}, object, r"\$\.k"),
            (MappingProxyType({"k": Opaque()}), object, r"\$\.value\.k"),
            ({1: Opaque()}, object, r"\$\.value\[0\]\[1\]"),
            ((1, Opaque()), object, r"\$\.value\[1\]"),
            (frozenset({Opaque()}), object, r"\$\.value\[0\]"),
            ((1, Opaque()), tuple[int, object], r"\$\[1\]"),
            ([Opaque()], list[object], r"\$\[0\]"),
        ],
        ids=["dict", "mapping", "pairs", "tuple", "frozenset", "fixed tuple", "list"],
    )
    def test_containers_name_the_item(self, value: object, hint: Any, path: str) -> None:
        """Wherever a value sits, the path leads to it."""
        with pytest.raises(SchemaError, match=rf"cannot dump a value of type Opaque at {path}$"):
            dump_typed(value, hint)

    def test_plain_object(self) -> None:
        """An instance of a plain class is refused by its class name."""
        with pytest.raises(SchemaError, match=r"cannot dump a value of type Opaque at \$\.k$"):
            dump_typed({"k": Opaque()}, dict[str, Any])

    @pytest.mark.parametrize("number", [float("nan"), float("inf")])
    def test_non_finite_number(self, number: float) -> None:
        """NaN and infinity have no JSON form."""
        with pytest.raises(
            SchemaError,
            match=(
                rf"cannot dump a non-finite number {number!r} "
                r"\(JSON has no NaN or infinity\) at \$\.ratio"
            ),
        ):
            dump_typed(
                Wide(**{**{f: getattr(_wide(), f) for f in Wide.__slots__}, "ratio": number}), Wide
            )

    def test_class_defined_in_a_function(self) -> None:
        """A local class without a registered name could never be loaded: refused at dump."""

        @dataclass(frozen=True)
        class Local:
            x: int

        with pytest.raises(
            SchemaError,
            match=(
                r"^cannot dump a value of type "
                r"TestRefusedValues\.test_class_defined_in_a_function\.<locals>\.Local "
                r"at \$\.payload: Local is defined inside a function; give it a stable name "
                r"with register_type\('some\.name', Local\)$"
            ),
        ):
            dump_typed(Record(name="r", payload=Local(x=1)), Record)

    def test_local_class_as_a_type_value(self) -> None:
        """A class object is stored by name, so a local one is refused the same way."""

        @dataclass(frozen=True)
        class Local:
            x: int

        with pytest.raises(
            SchemaError,
            match=r"^cannot dump the class .*<locals>\.Local at \$: Local is defined inside a func",
        ):
            dump_typed(Local, type)

    def test_reserved_wire_name(self) -> None:
        """A field whose alias is ``$type`` would be read as a type name: refused."""

        @dataclass(frozen=True)
        class Clash:
            kind: str = field(metadata={"alias": "$type"})

        with pytest.raises(SchemaError, match=r"Clash.kind: the wire name '\$type' is reserved"):
            dump_typed(Clash(kind="x"), Clash)

    def test_deep_nesting_is_an_error_not_a_crash(self) -> None:
        """A value nested past the recursion limit is a SchemaError."""
        value: object = None
        for _ in range(5000):
            value = Tree(child=value)
        with pytest.raises(SchemaError, match="nested deeper than the recursion limit"):
            dump_typed(value)


class TestParseErrors:
    """Data that does not fit is a ParseError (or UnknownTypeError) at its JSON path."""

    def test_wrong_scalar(self) -> None:
        """A string where an int is declared."""
        with pytest.raises(
            ParseError, match=r'expected an integer, got string "x" at \$\.a while parsing Inner'
        ):
            parse_typed(Inner, {"a": "x"})

    def test_unknown_field(self) -> None:
        """Unknown members are refused, naming the fields there are."""
        with pytest.raises(
            ParseError,
            match=(
                r"expected only the fields a, tags \(unknown fields are forbidden\), "
                r"got unknown field 'b' at \$\.b"
            ),
        ):
            parse_typed(Inner, {"a": 1, "b": 2})

    def test_missing_field(self) -> None:
        """A required field that is absent."""
        with pytest.raises(
            ParseError, match=r"expected a value \(required field\), got nothing at \$\.a"
        ):
            parse_typed(Inner, {})

    def test_post_init_refusal(self) -> None:
        """Construction goes through __init__, so __post_init__ checks run."""
        with pytest.raises(
            ParseError,
            match=r"expected a valid Checked, got ValueError: total must not be negative at \$\.",
        ):
            parse_typed(
                Record,
                {
                    "name": "r",
                    "payload": {"$type": "tests.serde.typed_models:Checked", "total": -1},
                },
            )

    def test_type_name_must_be_a_string(self) -> None:
        """``$type`` holding a number."""
        with pytest.raises(
            ParseError,
            match=r"expected a type name \(string\), got integer 3 at \$\.payload\['\$type'\]",
        ):
            parse_typed(Record, {"name": "r", "payload": {"$type": 3}})

    def test_tagged_value_with_extra_member(self) -> None:
        """A tagged tuple may hold only $type and value."""
        with pytest.raises(
            ParseError,
            match=r"""expected only "\$type" and "value" members, got unknown member 'x' at""",
        ):
            parse_typed(object, {"$type": "tuple", "value": [], "x": 1})

    def test_tagged_value_without_value(self) -> None:
        """A tagged tuple without its value."""
        with pytest.raises(
            ParseError, match=r"expected a value \(required member\), got nothing at \$\.value"
        ):
            parse_typed(object, {"$type": "tuple"})

    @pytest.mark.parametrize(
        ("data", "message"),
        [
            (
                {"$type": "datetime", "value": "noon"},
                r'expected an ISO 8601 date-time string, got string "noon" at \$\.value',
            ),
            (
                {"$type": "decimal", "value": "abc"},
                r'expected a decimal number string, got string "abc" at \$\.value',
            ),
            ({"$type": "uuid", "value": 1}, r"expected a UUID string, got integer 1 at \$\.value"),
            (
                {"$type": "frozenset", "value": [[1]]},
                r"expected hashable items, got unhashable type: 'list' at \$\.value",
            ),
            (
                {"$type": "dict", "value": [[[1], 2]]},
                r"expected a hashable key, got array of 1 item at \$\.value\[0\]\[0\]",
            ),
            (
                {"$type": "dict", "value": [[1]]},
                r"expected a \[key, value\] pair, got array of 1 item at \$\.value\[0\]",
            ),
            (
                {"$type": "dict", "value": 3},
                r"expected an object or an array of \[key, value\] pairs, got integer 3 at \$\.v",
            ),
            (
                {"$type": "tests.serde.typed_models:Level", "value": 9},
                r"expected a Level value, got integer 9 at \$\.value",
            ),
            ({"$type": "none", "value": 0}, r"expected null, got integer 0 at \$\.value"),
            ({"$type": "float", "value": "1"}, r'expected a number, got string "1" at \$\.value'),
            ({"$type": "bool", "value": 1}, r"expected a boolean, got integer 1 at \$\.value"),
            ({"$type": "list", "value": {}}, r"expected an array, got empty object at \$\.value"),
            (
                {"$type": "pure_posix_path", "value": 1},
                r"expected a path string, got integer 1 at \$\.value",
            ),
            (
                {"$type": "tests.serde.typed_models:MyPath", "value": 1},
                r"expected a path string, got integer 1 at \$\.value",
            ),
            (
                {"$type": "float", "value": 10**400},
                r"expected a number, got integer with 401 digits at \$\.value",
            ),
            (
                {"k": {"$type": 3}},
                r"expected a type name \(string\), got integer 3 at \$\.k\['\$type'\]",
            ),
        ],
    )
    def test_bad_tagged_values(self, data: object, message: str) -> None:
        """Each built-in tag checks its value."""
        with pytest.raises(ParseError, match=message):
            parse_typed(object, data)

    def test_unknown_type_name(self) -> None:
        """A name that resolves nowhere is an UnknownTypeError with its path and reason."""
        data = {"name": "r", "payload": [{"$type": "no_such_module_xyz:Thing"}]}
        with pytest.raises(UnknownTypeError) as caught:
            parse_typed(Record, data)
        error = caught.value
        assert (error.type_name, error.path) == ("no_such_module_xyz:Thing", "$.payload[0]")
        assert (
            error.reason
            == "module no_such_module_xyz cannot be imported (No module named 'no_such_module_xyz')"
        )
        assert (
            str(error) == f"unknown type 'no_such_module_xyz:Thing' at $.payload[0]: {error.reason}"
        )

    def test_long_unknown_names_are_cut_in_the_message(self) -> None:
        """A stored name is echoed to 200 characters; the attribute keeps all of it."""
        name = "m" * 300 + ":X"
        with pytest.raises(UnknownTypeError) as caught:
            parse_typed(object, {"$type": name})
        assert caught.value.type_name == name
        assert str(caught.value).startswith(f"unknown type '{'m' * 197}...' at $: module ")
        assert len(str(caught.value)) < 700

    def test_root_of_another_type(self) -> None:
        """Asking for an Inner and finding a stored Box is a ParseError at the root."""
        with pytest.raises(ParseError, match=r"expected a Inner, got a stored Box at \$"):
            parse_typed(Inner, {"$type": "tests.serde.typed_models:Box", "item": 1})

    def test_open_position_refuses_python_objects(self) -> None:
        """Only JSON data is read: a tuple handed in from Python is refused."""
        with pytest.raises(ParseError, match=r"expected JSON data, got array of 2 items at \$"):
            parse_typed(object, (1, 2))

    @pytest.mark.parametrize(
        ("cls", "data", "message"),
        [
            (
                tuple[int, str],
                [1],
                r"expected an array of exactly 2 items, got array of 1 item at \$",
            ),
            (dict[int, str], {"01": "x"}, r'expected an integer key, got string "01" at \$'),
            (
                dict[tuple[int, ...], str],
                {},
                r"expected an array of \[key, value\] pairs, got empty object at \$",
            ),
            (dict[str, int], [], r"expected an object, got array of 0 items at \$"),
            (type, 3, r"expected a type name \(string\), got integer 3 at \$"),
            (Literal["a", "b"], "c", r'expected one of "a", "b", got string "c" at \$'),
            (
                Flavor,
                "bitter",
                r'expected a Flavor value \(sweet, sour\), got string "bitter" at \$',
            ),
            (float, True, r"expected a number, got boolean true at \$"),
            (datetime, 5, r"expected an ISO 8601 date-time string, got integer 5 at \$"),
            (list[int], {}, r"expected an array, got empty object at \$"),
            (Inner, [], r"expected an object \(Inner\), got array of 0 items at \$"),
            (float, 10**400, r"expected a number, got integer with 401 digits at \$"),
            (datetime, "noon", r'expected an ISO 8601 date-time string, got string "noon" at \$'),
            (tuple[int, str], [1, 2], r"expected a string, got integer 2 at \$\[1\]"),
            (
                BaseException,
                {"type": 1, "message": "m"},
                r'expected an object with "type" and "message" strings, got object with keys',
            ),
        ],
    )
    def test_declared_forms(self, cls: Any, data: object, message: str) -> None:
        """Each declared form names what it expected."""
        with pytest.raises(ParseError, match=message):
            parse_typed(cls, data)

    def test_deep_data_is_an_error_not_a_crash(self) -> None:
        """Data nested past the recursion limit is a ParseError."""
        data: object = None
        for _ in range(5000):
            data = {"$type": "tests.serde.typed_models:Tree", "child": data}
        with pytest.raises(ParseError, match="nested too deeply to load"):
            parse_typed(object, data)


class TestRecursiveTypes:
    """Recursive dataclasses are planned once and walked lazily."""

    def test_recursive_round_trip(self) -> None:
        """A tree of Nodes comes back identical."""
        value = Node(
            label="root", children=(Node(label="a"), Node(label="b", children=(Node(label="c"),)))
        )
        assert dump_typed(value, Node) == dump(value)
        assert_identical(_round_trip(value, Node), value)


class TestTimeValues:
    """Dates and times keep their offsets."""

    def test_offset_is_kept(self) -> None:
        """A +02:00 datetime comes back with the same offset."""
        value = datetime(2026, 1, 1, 8, tzinfo=timezone(timedelta(hours=2)))
        assert_identical(_round_trip(value), value)

    def test_naive_stays_naive(self) -> None:
        """A naive datetime is not given a zone."""
        value = datetime(2026, 1, 1, 8, 0, 0, 123456)
        assert_identical(_round_trip(value), value)
