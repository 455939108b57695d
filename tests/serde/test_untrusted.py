"""parse on untrusted data: only ParseError, JSONValue fields hold JSON, messages stay short."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serde.models import RICH_TYPES, Tree
from tests.strategies import hostile_json_values
from weakincentives.errors import ParseError
from weakincentives.serde import JSONObject, JSONValue, parse
from weakincentives.serde._loads import MAX_JSON_DEPTH

HUGE = 7 * 10**5000  # more digits than Python's default limit lets str() print
MESSAGE_CAP = 1200  # what any ParseError message stays under, whatever the data


@dataclass(frozen=True)
class Payload:
    """A params dataclass with the fields untrusted data most often reaches."""

    data: JSONValue = None
    extras: JSONObject = field(default_factory=dict)
    maybe: JSONValue | None = None
    count: int = field(default=0, metadata={"ge": 0})
    ratio: float = 0.0
    price: Decimal = field(default=Decimal(0), metadata={"multiple_of": 0.01})
    names: dict[int, str] = field(default_factory=dict)
    either: int | str = 0
    anything: Any = None


REPRESENTATIVE: tuple[type, ...] = (*RICH_TYPES, Payload)


def _error(cls: Any, data: object) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(cls, data)
    return info.value


def _nested(depth: int) -> JSONValue:
    value: JSONValue = 1
    for _ in range(depth):
        value = [value]
    return value


class TestJsonValueFields:
    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"data": float("nan")}, "expected a finite number, got number nan at $.data"),
            (
                {"data": {"a": [1, {"b": float("inf")}]}},
                "expected a finite number, got number inf at $.data.a[1].b",
            ),
            (
                {"extras": {"x": -float("inf")}},
                "expected a finite number, got number -inf at $.extras.x",
            ),
            ({"maybe": [float("nan")]}, "expected a finite number, got number nan at $.maybe[0]"),
            (
                {"data": [HUGE]},
                "expected an integer of at most 4,300 digits, got integer with more than "
                "4,300 digits at $.data[0]",
            ),
            (
                {"data": {1: "x"}},
                "expected an object with string keys, got key integer 1 at $.data[1]",
            ),
            (
                {"data": {"when": object()}},
                "expected any JSON value, got object instance at $.data.when",
            ),
            ({"data": {1, 2}}, "expected any JSON value, got set instance at $.data"),
        ],
    )
    def test_what_json_cannot_carry_is_refused_with_its_path(
        self, data: dict[str, object], message: str
    ) -> None:
        """NaN, infinity, unprintable integers, non-string keys and objects are not JSON."""
        assert _error(Payload, data).message == message + " while parsing Payload"

    def test_nesting_beyond_the_limit_is_refused(self) -> None:
        """A JSONValue holds at most MAX_JSON_DEPTH levels, checked without recursion."""
        assert parse(Payload, {"data": _nested(MAX_JSON_DEPTH)}).data == _nested(MAX_JSON_DEPTH)
        error = _error(Payload, {"data": _nested(100_000)})
        assert error.expected == "JSON nested at most 128 levels deep"
        assert error.got == "array of 1 item nested deeper"
        assert error.path == "$.data[0][0][0]...(113 more)...[0][0][0][0][0][0][0][0][0][0][0][0]"

    def test_json_is_returned_as_it_is(self) -> None:
        """The check copies nothing: the very objects given come back."""
        document = {"a": [1, 2.5, "x", None, True, {"b": []}]}
        assert parse(Payload, {"data": document}).data is document

    def test_tuples_and_read_only_mappings_count_as_json(self) -> None:
        """Python data may use tuples and mappings where JSON has arrays and objects."""
        document = MappingProxyType({"a": (1, 2)})
        parsed: object = parse(Payload, {"data": document}).data
        assert parsed is document

    def test_any_still_takes_anything(self) -> None:
        """Only JSONValue promises JSON; Any and object pass values through unchecked."""
        odd = {1: float("nan")}
        assert parse(Payload, {"anything": odd}).anything is odd


class TestHugeIntegers:
    def test_int_fields_take_them(self) -> None:
        """An integer is an integer, however long: int fields keep it."""
        assert parse(Payload, {"count": HUGE}).count == HUGE

    @pytest.mark.parametrize(
        ("cls", "data", "message"),
        [
            (str, HUGE, "expected a string, got integer with more than 4,300 digits at $"),
            (
                Payload,
                {"ratio": HUGE},
                "expected a finite number, got integer with more than 4,300 digits at $.ratio "
                "while parsing Payload",
            ),
            (
                Payload,
                {"either": [HUGE]},
                "expected an integer or a string, got array of 1 item at $.either "
                "while parsing Payload",
            ),
            (
                Payload,
                {"count": -HUGE},
                "expected a value >= 0, got integer with more than 4,300 digits at $.count "
                "while parsing Payload",
            ),
            (
                Payload,
                {"price": HUGE + 1},
                "expected a multiple of 0.01, got integer with more than 4,300 digits at $.price "
                "while parsing Payload",
            ),
            (
                Payload,
                {"names": {"9" * 5000: "x"}},
                'expected an integer key, got string "999999999999999999999999999999999999... '
                "at $.names['9999999999999999999999999999999999999...'] while parsing Payload",
            ),
            (
                dict[str, int],
                {HUGE: 1},
                "expected a string, got integer with more than 4,300 digits "
                "at $[<integer with more than 4,300 digits>]",
            ),
            (bool, 10**50, "expected a boolean, got integer with 51 digits at $"),
        ],
        ids=["str", "float", "union", "ge", "multiple_of", "int_key", "key", "bool"],
    )
    def test_messages_describe_them_by_size(self, cls: Any, data: object, message: str) -> None:
        """No message prints a huge integer: str() of one raises, so its size is given."""
        assert _error(cls, data).message == message


class TestBoundedMessages:
    def test_a_long_string_is_cut(self) -> None:
        """A megabyte string appears as its first characters."""
        error = _error(int, "x" * 1_000_000)
        assert error.got == 'string "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'

    def test_an_object_with_many_keys_lists_a_few(self) -> None:
        """Ten thousand keys: the message names what fits in a short listing."""
        error = _error(int, {f"key{index}": index for index in range(10_000)})
        assert error.got == "object with keys key0, key1, key2, key3, key4, key5, k..."

    def test_an_unknown_long_field_name_is_cut(self) -> None:
        """extra='forbid' quotes the unknown member, cut, and its path is cut too."""
        error = _error(Payload, {"z" * 100_000: 1})
        assert error.got == "unknown field 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz...'"
        assert error.path == "$['zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz...']"

    def test_a_deep_path_keeps_its_ends(self) -> None:
        """A failure thousands of levels down shows the first and last path segments."""
        data: dict[str, object] = {"label": 5}
        for _ in range(100):
            data = {"label": "x", "children": [data]}
        error = _error(Tree, data)
        assert error.path == (
            "$.children[0].children[0]...(185 more)...[0].children[0].children[0].children[0]"
            ".children[0].children[0].label"
        )

    def test_a_post_init_message_is_cut(self) -> None:
        """A construction error quoting the whole input is cut to a bounded length."""

        @dataclass
        class Echo:
            text: str

            def __post_init__(self) -> None:
                raise ValueError(f"bad text {self.text}")

        error = _error(Echo, {"text": "y" * 100_000})
        assert error.got.startswith("ValueError: bad text yyy")
        assert len(error.got) < 320

    def test_a_post_init_error_that_cannot_be_printed_is_still_reported(self) -> None:
        """An exception whose __str__ raises still becomes a ParseError naming its type."""

        class UnprintableError(ValueError):
            def __str__(self) -> str:
                raise RuntimeError("no")

        @dataclass
        class Strict:
            value: int

            def __post_init__(self) -> None:
                raise UnprintableError

        error = _error(Strict, {"value": 1})
        assert error.got == "UnprintableError: <UnprintableError object; str() failed>"


BUILT: list[int] = []


@dataclass(frozen=True)
class Mark:
    """Counts how often parse builds it: one per attempt at the object holding it."""

    def __post_init__(self) -> None:
        BUILT.append(1)


@dataclass(frozen=True)
class Branch:
    mark: Mark
    children: list[Branch | Twig]


@dataclass(frozen=True)
class Twig:
    mark: Mark
    children: list[Branch | Twig]
    note: str = ""


@dataclass(frozen=True)
class Chain:
    """Three ways to nest: generated list code, the array converter, a fixed tuple."""

    mark: Mark
    children: list[Chain] = field(default_factory=list)
    limited: list[Chain] = field(default_factory=list, metadata={"max_length": 1})
    fixed: tuple[Chain] | None = None


def _chain(depth: int, key: str, bottom: object) -> dict[str, object]:
    document: dict[str, object] = {"mark": {}, key: bottom}
    for _ in range(depth):
        document = {"mark": {}, key: [document]}
    return document


class TestFailingDeepIsLinear:
    """A failure deep inside nested data is found without converting anything twice.

    Counting the objects built (not timing) shows the work: re-running a failed
    item to locate it, or trying every union member again at every level, would
    build 2**depth of them.
    """

    @pytest.mark.parametrize("key", ["children", "limited", "fixed"])
    def test_arrays_of_nested_objects(self, key: str) -> None:
        """Lists and tuples find the failing index by counting, on every code path."""
        BUILT.clear()
        error = _error(Chain, _chain(12, key, 5))
        assert error.got == "integer 5"
        assert len(BUILT) <= 2 * 13  # 2**12 when each level converts its failing item again

    def test_unions_of_recursive_members(self) -> None:
        """Members that all fail deep are tried once per nested value, not once per path."""
        BUILT.clear()
        error = _error(Branch, _chain(12, "children", 5))
        assert error.expected == "an array"
        assert len(BUILT) <= 2 * 13  # two members per level; 2**12 without the memo


def _outcome(call: Callable[[], object]) -> ParseError | None:
    try:
        call()
    except ParseError as error:
        return error
    return None


@pytest.mark.parametrize("cls", REPRESENTATIVE, ids=lambda cls: cls.__name__)
@given(data=st.data())
def test_hostile_data_only_ever_raises_short_parse_errors(cls: type, data: st.DataObject) -> None:
    """Deep, huge or non-finite data, also under a field's key, gives only a bounded ParseError."""
    value = data.draw(hostile_json_values())
    key = data.draw(st.sampled_from([each.name for each in dataclasses.fields(cls)]))
    document = data.draw(st.sampled_from([value, {key: value}, [value]]))
    error = _outcome(lambda: parse(cls, document))
    if error is not None:
        assert error.path.startswith("$")
        assert len(error.message) < MESSAGE_CAP
