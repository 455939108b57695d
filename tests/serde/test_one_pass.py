"""parse_json's one-pass route answers exactly as the reference route: loads, then parse.

The reference is the path parse_json took before it had a route of its own, and it is
still public: ``parse(cls, loads(text))``. For generated types and generated text,
valid and not, both must give an equal value (same repr, so ``1`` never stands in for
``1.0``) or a ParseError with the same path, expectation and description.

Every test here runs twice: with the route reading through jiter (the speedups
extra, installed with the dev extras) and with the stdlib's scanner alone.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import sys
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serde.models import RICH_TYPES, Customer
from tests.strategies import dataclass_types, hostile_json_texts, json_values, values_of
from weakincentives.errors import ParseError
from weakincentives.serde import JSONValue, _onepass, _parse, dump, loads, parse, parse_json

type Outcome = tuple[object, ...]

_TRAPS = (
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    "1" * 5000,
    '"\\ud800"',
    '"\\udc00x"',
    '"\\ud83d\\ude00"',
    '"\ud800"',
    "[" * 130 + "]" * 130,
    '{"a":' * 130 + "1" + "}" * 130,
    "tru",
    "",
)
_names = itertools.count()


_JITER = _onepass.JITER


@pytest.fixture(autouse=True, scope="module", params=["jiter", "stdlib"])
def decoder(request: pytest.FixtureRequest) -> Iterator[str]:
    """Routes built with jiter's reader, or without it; none cached from the other run."""
    assert _JITER is not None, "jiter (the speedups extra) is part of the dev install"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_onepass, "JITER", _JITER if request.param == "jiter" else None)
        for routes in _parse._ROUTES.values():
            routes.clear()
        yield request.param
        for routes in _parse._ROUTES.values():
            routes.clear()


def _outcome(call: Any) -> Outcome:
    try:
        value = call()
    except ParseError as error:
        return ("error", error.path, error.expected, error.got)
    return ("value", value, repr(value))


def _reference(cls: Any, text: str | bytes, extra: Literal["forbid", "ignore"]) -> object:
    return parse(cls, loads(text), extra=extra)


def _assert_same(cls: Any, text: str | bytes, extra: Literal["forbid", "ignore"]) -> None:
    ours = _outcome(lambda: parse_json(cls, text, extra=extra))
    assert ours == _outcome(lambda: _reference(cls, text, extra))


def _member_texts(hint: object) -> st.SearchStrategy[str]:
    """JSON text for one member: a valid value of ``hint``, any JSON value, or a trap."""
    valid = values_of(hint).map(lambda value: json.dumps(dump(value)))
    return valid | json_values().map(json.dumps) | st.sampled_from(_TRAPS)


@st.composite
def _object_texts(draw: st.DrawFn, cls: type) -> str:
    """An object text for ``cls``: some members left out, one unknown maybe, shuffled."""
    hints = typing.get_type_hints(cls, include_extras=True)
    members: list[tuple[str, str]] = []
    for item in dataclasses.fields(cls):
        if draw(st.integers(0, 4)) == 0:
            continue  # left out
        wire = item.metadata.get("alias", item.name)
        members.append((wire, draw(_member_texts(hints[item.name]))))
    if draw(st.integers(0, 4)) == 0:
        members.append((draw(st.text(max_size=4)), draw(_member_texts(Any))))
    members = draw(st.permutations(members))
    text = "{" + ",".join(f"{json.dumps(name)}: {value}" for name, value in members) + "}"
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", " ", "x"]))


@st.composite
def _nested_types(draw: st.DrawFn) -> type:
    """A dataclass holding generated dataclasses: nested, in a tuple and optional."""
    inner = draw(dataclass_types())
    slots = draw(st.booleans())
    fields: list[tuple[str, object] | tuple[str, object, Any]] = [
        ("one", inner),
        ("many", tuple[inner, ...]),  # type: ignore[valid-type]  # a generated class
        ("maybe", inner | None, field(default=None)),
        ("data", JSONValue, field(default=None)),
    ]
    return dataclasses.make_dataclass(
        f"Outer{next(_names)}", fields, frozen=draw(st.booleans()), slots=slots
    )


def _encoded(text: str, how: str) -> str | bytes:
    if how == "str":
        return text
    try:
        return text.encode(how)
    except UnicodeEncodeError:  # a raw lone surrogate: keep it as str
        return text


_ENCODINGS = st.sampled_from(["str", "str", "str", "utf-8", "utf-16"])
_EXTRA: st.SearchStrategy[Literal["forbid", "ignore"]] = st.sampled_from(["forbid", "ignore"])


class TestAgainstTheReference:
    @given(data=st.data())
    def test_valid_documents_give_equal_values(self, data: st.DataObject) -> None:
        """A dumped value of a generated dataclass parses to the same value both ways."""
        cls = data.draw(dataclass_types() | _nested_types())
        text = json.dumps(dump(data.draw(values_of(cls))))
        outcome = _outcome(lambda: parse_json(cls, text))
        assert outcome[0] == "value"
        assert outcome == _outcome(lambda: _reference(cls, text, "forbid"))

    @given(data=st.data())
    def test_any_document_gets_the_reference_answer(self, data: st.DataObject) -> None:
        """Members missing, unknown, of the wrong type or holding traps: the same answer."""
        cls = data.draw(dataclass_types() | _nested_types())
        text = data.draw(_object_texts(cls))
        _assert_same(cls, _encoded(text, data.draw(_ENCODINGS)), data.draw(_EXTRA))

    @pytest.mark.parametrize("cls", RICH_TYPES, ids=lambda cls: cls.__name__)
    @given(data=st.data())
    def test_rich_types_get_the_reference_answer(self, cls: type, data: st.DataObject) -> None:
        """Every kind of field (aliases, constraints, unions, enums, sets, recursion)."""
        text = data.draw(_object_texts(cls) | values_of(cls).map(lambda v: json.dumps(dump(v))))
        _assert_same(cls, _encoded(text, data.draw(_ENCODINGS)), data.draw(_EXTRA))

    @pytest.mark.parametrize(
        "hint",
        [list[int], int | str, str | int, dict[str, float], tuple[int, str], JSONValue, Any],
        ids=repr,
    )
    @given(text=hostile_json_texts() | json_values().map(json.dumps))
    def test_other_roots_get_the_reference_answer(self, hint: Any, text: str) -> None:
        """Roots that are not dataclasses, over hostile text."""
        _assert_same(hint, text, "forbid")

    @given(text=hostile_json_texts())
    def test_hostile_text_gets_the_reference_answer(self, text: str) -> None:
        """Broken syntax, traps and deep nesting: the reference's error, word for word."""
        _assert_same(Customer, text, "forbid")


@dataclass(frozen=True, slots=True)
class Measure:
    """A closed type: every number lands in a check that refuses infinity."""

    value: float
    count: int = 0


@dataclass(frozen=True, slots=True)
class Labelled:
    """Closed, with a string field."""

    value: float
    label: str = ""


@dataclass(frozen=True)
class Loose:
    """Not closed: ``anything`` takes what it is given."""

    anything: Any = None


@dataclass(frozen=True)
class InfinityChoice:
    """Not closed either: infinity is one of the choices."""

    pick: Literal[float("inf")] | None = None  # type: ignore[valid-type]  # on purpose


@dataclass(frozen=True)
class Document:
    """Bounded in type, unbounded in data: a JSONValue field."""

    body: JSONValue = None


@dataclass(frozen=True, slots=True)
class Order:
    """A nested field before a plain one."""

    lines: tuple[Measure, ...]
    count: int


@dataclass(frozen=True)
class Chain:
    """Recursive: no bound on the depth of the data it takes."""

    next: Chain | None = None


def _error(
    cls: Any, text: str | bytes, extra: Literal["forbid", "ignore"] = "forbid"
) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse_json(cls, text, extra=extra)
    return info.value


class TestWhatTheRouteLeavesOut:
    @pytest.mark.parametrize(
        ("cls", "text", "extra"),
        [
            (Measure, '{"value": 1e999}', "forbid"),
            (Measure, '{"value": 1.5, "count": 1e999}', "forbid"),
            (Measure, '{"value": 1.5, "other": 1e999}', "ignore"),
            (Loose, '{"anything": 1e999}', "forbid"),
            (InfinityChoice, '{"pick": 1e999}', "forbid"),
        ],
    )
    def test_an_overflowing_number_is_refused_wherever_it_lands(
        self, cls: type, text: str, extra: Literal["forbid", "ignore"]
    ) -> None:
        """1e999 is never read as infinity: closed types refuse it, open ones keep the hook."""
        error = _error(cls, text, extra)
        assert error.path == "$"
        assert error.got.startswith("number 1e999 (too large for a double at line 1 column ")
        assert error.dataclass_type is cls

    def test_nesting_past_the_limit_inside_a_json_value_is_refused(self) -> None:
        """A JSONValue field takes any depth the type allows, but not past MAX_JSON_DEPTH."""
        text = '{"body": ' + "[" * 200 + "]" * 200 + "}"
        error = _error(Document, text)
        assert (error.path, error.got) == ("$", "JSON nested more than 128 levels deep")

    @pytest.mark.parametrize(
        ("text", "got"),
        [
            ('{"value": NaN}', "invalid JSON (NaN is not a JSON number at line 1 column 11)"),
            ('{"value": 1.5} x', "invalid JSON (Extra data at line 1 column 16)"),
            (
                '{"value": 1.5, "count": ' + "1" * 5000 + "}",
                "an integer of 5,000 digits (Python reads at most 4,300; line 1 column 25)",
            ),
        ],
    )
    def test_what_the_decoder_refuses_is_named_as_loads_names_it(self, text: str, got: str) -> None:
        """The route gives up on text the decoder refuses; the reference names the problem."""
        assert _error(Measure, text).got == got

    @pytest.mark.parametrize(
        ("cls", "extra"), [(Labelled, "forbid"), (Measure, "ignore")], ids=["field", "unknown"]
    )
    @pytest.mark.parametrize(
        ("text", "got"),
        [
            (
                '{"value": 1.5, "label": "\\ud800"}',
                "a lone surrogate escape \\ud800 (UTF-8 cannot encode it; line 1 column 26)",
            ),
            (
                '{"value": 1.5, "label": "\ud800"}',
                "a lone surrogate U+D800 (UTF-8 cannot encode it; line 1 column 26)",
            ),
        ],
        ids=["escape", "raw"],
    )
    def test_a_lone_surrogate_is_refused(
        self, cls: type, extra: Literal["forbid", "ignore"], text: str, got: str
    ) -> None:
        """In a string field or in a member no field reads, a lone surrogate is refused."""
        error = _error(cls, text, extra)
        assert (error.path, error.got) == ("$", got)

    @pytest.mark.parametrize(
        "text",
        [
            ' {"value": 1.5}\n',
            b'{"value": 1.5}',
            '{"value": 1.5}'.encode("utf-16"),
            '{"value": 1.5, "count": 2.0}',
            '{"value": 1.5, "count": 2}',
        ],
    )
    def test_valid_text_in_any_form_parses(self, text: str | bytes) -> None:
        """Surrounding space, bytes in any UTF, integral floats for ints: all parse."""
        value = parse_json(Measure, text)
        assert value.value == 1.5
        assert type(value.count) is int

    def test_an_integer_for_a_float_field_becomes_a_float(self) -> None:
        """Every member present but one needing conversion: the general path widens it."""
        value = parse_json(Measure, '{"value": 2, "count": 3}')
        assert (value, type(value.value)) == (Measure(value=2.0, count=3), float)

    def test_a_recursive_type_nested_deep_is_refused_at_the_root(self) -> None:
        """A recursive type has no depth bound, so the depth check runs."""
        text = '{"next": ' * 150 + "null" + "}" * 150
        error = _error(Chain, text)
        assert (error.path, error.got) == ("$", "JSON nested more than 128 levels deep")


@st.composite
def _full_objects(draw: st.DrawFn, cls: type) -> dict[str, object]:
    """Data holding every member of ``cls`` (no more): values valid or not."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {
        item.metadata.get("alias", item.name): draw(
            values_of(hints[item.name]).map(dump) | json_values()
        )
        for item in dataclasses.fields(cls)
    }


class TestEveryMemberPresent:
    """Data with exactly the declared members takes a shortcut; the answer stays the same."""

    @given(data=st.data())
    def test_the_shortcut_answers_as_the_member_by_member_path(self, data: st.DataObject) -> None:
        """One more member sends the same data down the general path: same answer.

        A failure is reported before the unknown member is; a success is compared with
        ``extra="ignore"``, which (forbid having found no unknown member anywhere) only
        drops the added one.
        """
        cls = data.draw(dataclass_types() | _nested_types() | st.sampled_from(RICH_TYPES))
        document = data.draw(_full_objects(cls))
        general = {**document, "~unknown": None}
        shortcut = _outcome(lambda: parse(cls, document))
        if shortcut[0] == "error":
            assert shortcut == _outcome(lambda: parse(cls, general))
        else:
            assert shortcut == _outcome(lambda: parse(cls, general, extra="ignore"))

    def test_a_failing_nested_member_is_reported_before_a_later_failing_one(self) -> None:
        """Field order decides which failure is reported, as it always did."""
        document = {"lines": [{"value": "x"}], "count": "many"}
        with pytest.raises(ParseError) as info:
            parse(Order, document)
        assert (info.value.path, info.value.expected) == ("$.lines[0].value", "a finite number")


_NUMBERS = st.from_regex(
    r"-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,3})?", fullmatch=True
)


@dataclass(frozen=True, slots=True)
class Numbers:
    """Both kinds of number, unbounded: any literal either decoder reads gets through."""

    real: float = 0.0
    whole: int = 0
    label: str = ""


class TestTheDecoder:
    """jiter and the stdlib's scanner: the same values, or a hand-over."""

    def test_the_route_reads_with_jiter_only_when_it_is_chosen(self, decoder: str) -> None:
        """A closed type of bounded depth is read by jiter when it is installed."""
        route = _onepass.one_pass_route(Measure, "forbid")
        assert ("_jiter" in route.__code__.co_names) is (decoder == "jiter")
        deep = _onepass.one_pass_route(Chain, "forbid")
        assert "_jiter" not in deep.__code__.co_names  # recursive: the depth check runs

    @given(literal=_NUMBERS)
    def test_number_literals_read_as_the_stdlib_reads_them(self, literal: str) -> None:
        """Floats rounded the same way, integers of any size below the digit limit."""
        _assert_same(Numbers, f'{{"real": {literal}}}', "forbid")
        _assert_same(Numbers, f'{{"whole": {literal}}}', "forbid")

    @given(label=st.text(), ascii_only=st.booleans())
    def test_strings_read_as_the_stdlib_reads_them(self, label: str, ascii_only: bool) -> None:
        """Escapes, surrogate pairs, raw non-ASCII and lone surrogates (refused by both)."""
        text = '{"label": ' + json.dumps(label, ensure_ascii=ascii_only) + "}"
        _assert_same(Numbers, text, "forbid")
        _assert_same(Numbers, text.encode("utf-8", "surrogatepass"), "forbid")

    @pytest.mark.parametrize(
        "text",
        [
            r'{"label": "a\nb", "label": "c"}',  # a duplicate: the last one counts
            r'{"label": "\u0001\t\"\\\/\b\f"}',  # every escape
            '{"label": "raw\ttab"}',  # a raw control character: refused
            '{"label": "raw\x7f"}',  # DEL is no control character in JSON
            '\ufeff{"label": "bom"}',
            '{"real": -0.0, "whole": -0}',
            '{"real": 1.7976931348623159e308}',  # rounds to infinity: refused
            '{"real": 4.9e-325}',  # rounds to zero
            '{"whole": 18446744073709551616}',
            '{"whole": 1E2}',  # a float for an int field
            "\t\r\n {}\n",
            "{}\u2003",  # trailing space JSON does not name
        ],
    )
    def test_edge_texts_read_as_the_stdlib_reads_them(self, text: str) -> None:
        """Duplicate members, control characters, a BOM, signed zeros, overflow, spacing."""
        _assert_same(Numbers, text, "forbid")
        _assert_same(Numbers, text.encode("utf-8"), "forbid")

    def test_an_integer_past_a_lowered_digit_limit_is_refused(self) -> None:
        """jiter reads any integer; text that could hold one Python refuses is scanned instead."""
        previous = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(640)
        try:
            text = '{"whole": ' + "7" * 641 + "}"
            error = _error(Numbers, text)
            assert error.got.startswith("an integer of 641 digits (Python reads at most 640")
            assert parse_json(Numbers, '{"whole": ' + "7" * 640 + "}").whole == int("7" * 640)
        finally:
            sys.set_int_max_str_digits(previous)

    @pytest.mark.parametrize("tail", [" x", "  \n", ""])
    def test_text_past_the_digit_limit_is_scanned_whole(self, tail: str) -> None:
        """Long text goes through the stdlib's scanner: trailing data still refused."""
        text = '{"label": "' + "y" * 5000 + '"}' + tail
        _assert_same(Numbers, text, "forbid")
        assert (_outcome(lambda: parse_json(Numbers, text))[0] == "value") is (tail != " x")

    def test_unlimited_digits_read_long_integers(self) -> None:
        """With Python's digit limit off, jiter reads long text too (nothing to refuse)."""
        previous = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            assert parse_json(Numbers, '{"whole": ' + "9" * 5000 + "}").whole == int("9" * 5000)
        finally:
            sys.set_int_max_str_digits(previous)


class TestTheJiterProbe:
    """jiter is used only when it reads the way the route expects."""

    @staticmethod
    def _reader_with(patch: pytest.MonkeyPatch, module: object) -> object:
        patch.setitem(sys.modules, "jiter", module)
        return _onepass._jiter_reader()

    def test_an_installed_jiter_is_used(self) -> None:
        assert _onepass._jiter_reader() is _JITER

    def test_without_jiter_the_stdlib_reads(self, monkeypatch: pytest.MonkeyPatch) -> None:
        assert self._reader_with(monkeypatch, None) is None  # import fails

    @pytest.mark.parametrize(
        "from_json",
        [
            json.loads,  # refuses allow_inf_nan: too old
            lambda data, allow_inf_nan: json.loads(data),  # reads NaN anyway
            lambda data, allow_inf_nan: json.loads(b"x" if b"NaN" in data else b"{}"),
        ],
        ids=["old", "reads-nan", "wrong-values"],
    )
    def test_a_jiter_that_reads_otherwise_is_not_used(
        self, monkeypatch: pytest.MonkeyPatch, from_json: Any
    ) -> None:
        module = types.ModuleType("jiter")
        module.from_json = from_json  # type: ignore[attr-defined]  # a stand-in module
        assert self._reader_with(monkeypatch, module) is None
