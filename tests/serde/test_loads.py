"""loads: the one decoder for untrusted JSON text, and the traps it refuses."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import hostile_json_texts, json_values, trapped_json_texts
from weakincentives.errors import ParseError
from weakincentives.serde import JSONValue, loads
from weakincentives.serde._loads import MAX_JSON_DEPTH


def _depth(value: JSONValue) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


def _refusal(text: str | bytes) -> str:
    with pytest.raises(ParseError) as info:
        loads(text)
    error = info.value
    assert (error.path, error.expected, error.dataclass_type) == ("$", "valid JSON", None)
    return error.got


class TestValidJson:
    def test_text_and_bytes_decode(self) -> None:
        """str, UTF-8 (with or without BOM), UTF-16 and UTF-32 bytes all decode."""
        text = '{"a": [1, 2.5, "é", null, true]}'
        expected = {"a": [1, 2.5, "é", None, True]}
        assert loads(text) == expected
        assert loads(text.encode()) == expected
        assert loads(text.encode("utf-8-sig")) == expected
        assert loads(text.encode("utf-16")) == expected
        assert loads(bytearray(text.encode("utf-32"))) == expected

    def test_surrogate_pairs_and_escaped_backslashes_are_fine(self) -> None:
        """A pair of surrogate escapes is one character; a backslash before 'ud800' is text."""
        assert loads('["\\ud83d\\ude00", "\\uD83D\\uDE00"]') == ["\U0001f600", "\U0001f600"]
        assert loads('"\\\\ud800"') == "\\ud800"

    def test_brackets_inside_strings_do_not_count_as_nesting(self) -> None:
        """Only real arrays and objects count towards the depth limit."""
        text = json.dumps({"a": "[" * 500, "b": '\\"{{{' * 100, "c": [[1]]})
        assert loads(text) == json.loads(text)

    @given(document=json_values())
    def test_agrees_with_the_standard_decoder_on_json(self, document: JSONValue) -> None:
        """For ordinary JSON, loads returns exactly what json.loads returns."""
        for text in (json.dumps(document), json.dumps(document, ensure_ascii=False, indent=1)):
            assert loads(text) == json.loads(text)


class TestNesting:
    @pytest.mark.parametrize(("opener", "closer"), [("[", "]"), ('{"k":', "}")])
    def test_the_limit_is_inclusive(self, opener: str, closer: str) -> None:
        """MAX_JSON_DEPTH levels decode; one more is refused, arrays and objects alike."""
        at_limit = opener * MAX_JSON_DEPTH + "1" + closer * MAX_JSON_DEPTH
        assert _depth(loads(at_limit)) == MAX_JSON_DEPTH
        beyond = opener + at_limit + closer
        assert _refusal(beyond) == "JSON nested more than 128 levels deep"

    def test_nesting_beyond_the_recursion_limit_is_a_parse_error(self) -> None:
        """The issue's example: ten thousand brackets raise ParseError, not RecursionError."""
        assert _refusal("[" * 10000 + "]" * 10000) == "JSON nested more than 128 levels deep"

    @given(
        depth=st.integers(min_value=1, max_value=300),
        core=json_values(),
        key=st.text(alphabet='[]{}"\\ab', max_size=6),
    )
    def test_refused_exactly_when_deeper_than_the_limit(
        self, depth: int, core: JSONValue, key: str
    ) -> None:
        """Accepted iff the decoded value is at most MAX_JSON_DEPTH deep, whatever keys hold."""
        document: JSONValue = core
        for level in range(depth):
            document = [document, key] if level % 2 else {key: document}
        text = json.dumps(document)
        if _depth(document) <= MAX_JSON_DEPTH:
            assert loads(text) == document
        else:
            assert _refusal(text) == "JSON nested more than 128 levels deep"


class TestNumbers:
    @pytest.mark.parametrize(
        ("text", "got"),
        [
            ('{"x": NaN}', "invalid JSON (NaN is not a JSON number at line 1 column 7)"),
            ("[1,\n Infinity]", "invalid JSON (Infinity is not a JSON number at line 2 column 2)"),
            (
                '["NaN", -Infinity]',
                "invalid JSON (-Infinity is not a JSON number at line 1 column 9)",
            ),
            ("[1e999]", "number 1e999 (too large for a double at line 1 column 2)"),
            ('["1e999", -2e308]', "number -2e308 (too large for a double at line 1 column 11)"),
        ],
    )
    def test_non_finite_numbers_are_refused_with_their_position(self, text: str, got: str) -> None:
        """NaN/Infinity are not JSON and 1e999 would become infinity: both say where."""
        assert _refusal(text) == got

    def test_integers_beyond_the_digit_limit_are_refused(self) -> None:
        """The issue's 5,000-digit count: a ParseError naming size, limit and position."""
        text = '{"note": "' + "7" * 5000 + '", "count": ' + "7" * 5000 + "}"
        assert _refusal(text) == (
            "an integer of 5,000 digits (Python reads at most 4,300; line 1 column 5023)"
        )

    def test_the_digit_limit_is_pythons(self) -> None:
        """With the interpreter's limit lifted, long integers decode."""
        previous = sys.get_int_max_str_digits()
        sys.set_int_max_str_digits(0)
        try:
            assert loads("7" * 5000) == int("7" * 5000)
        finally:
            sys.set_int_max_str_digits(previous)

    def test_long_floats_are_fine(self) -> None:
        """A float with many digits is no integer: Python reads it without a limit."""
        assert loads("0." + "1" * 5000) == pytest.approx(0.1111111111)


class TestText:
    @pytest.mark.parametrize(
        ("text", "got"),
        [
            (
                '{"a": "\\ud800"}',
                "a lone surrogate escape \\ud800 (UTF-8 cannot encode it; line 1 column 8)",
            ),
            (
                '"x\\uDC00"',
                "a lone surrogate escape \\uDC00 (UTF-8 cannot encode it; line 1 column 3)",
            ),
            (
                '"\\\\\\ud800"',
                "a lone surrogate escape \\ud800 (UTF-8 cannot encode it; line 1 column 4)",
            ),
            (
                '"\\ud800\\ud800"',
                "a lone surrogate escape \\ud800 (UTF-8 cannot encode it; line 1 column 2)",
            ),
            (
                '["é", "\ud800"]',
                "a lone surrogate U+D800 (UTF-8 cannot encode it; line 1 column 8)",
            ),
            (b'["\xed\xa0\x80"]', "undecodable bytes (invalid continuation byte at byte 2)"),
            (b'{"x": "\xff"}', "undecodable bytes (invalid start byte at byte 7)"),
        ],
    )
    def test_text_utf8_cannot_encode_is_refused(self, text: str | bytes, got: str) -> None:
        """Lone surrogates, raw or escaped, and invalid UTF-8 bytes are refused where they are."""
        assert _refusal(text) == got

    @pytest.mark.parametrize(
        ("text", "got"),
        [
            ("", "invalid JSON (Expecting value at line 1 column 1)"),
            ('{"x": 1}{', "invalid JSON (Extra data at line 1 column 9)"),
            ('{"x" 1}', "invalid JSON (Expecting ':' delimiter at line 1 column 6)"),
        ],
    )
    def test_malformed_json_says_where(self, text: str, got: str) -> None:
        """The decoder's own complaint and position are kept."""
        assert _refusal(text) == got

    def test_non_text_is_refused(self) -> None:
        """Anything but str or bytes is a ParseError too."""
        with pytest.raises(ParseError) as info:
            loads(5)  # type: ignore[arg-type]  # the wrong type is the point
        assert (info.value.expected, info.value.got) == ("JSON text (str or bytes)", "integer 5")


def _outcome(text: str | bytes) -> JSONValue | ParseError:
    """The decoded value, or the ParseError raised (any other error escapes)."""
    try:
        return loads(text)
    except ParseError as error:
        return error


def _check_outcome(text: str | bytes) -> None:
    outcome = _outcome(text)
    if isinstance(outcome, ParseError):
        assert outcome.path == "$"
        assert len(outcome.message) < 300
        return
    assert _depth(outcome) <= MAX_JSON_DEPTH
    json.dumps(outcome, allow_nan=False, ensure_ascii=False).encode("utf-8")


@settings(max_examples=300)  # each trap class must turn up alone in some example
@given(text=trapped_json_texts())
def test_trapped_json_is_refused_or_encodes_back(text: str) -> None:
    """JSON holding traps is refused, or decodes to a value strict encoding accepts.

    The value is within the depth limit and survives ``allow_nan=False`` and UTF-8
    (no NaN, no infinity, no lone surrogate); every refusal is short.
    """
    _check_outcome(text)


@given(text=hostile_json_texts())
def test_hostile_text_only_ever_raises_parse_error(text: str) -> None:
    """Whatever the text or its UTF-8 bytes, loads raises ParseError or returns clean JSON."""
    _check_outcome(text)
    _check_outcome(text.encode("utf-8", "surrogatepass"))
