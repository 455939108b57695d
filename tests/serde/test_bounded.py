"""Bounded text for messages quoting untrusted input."""

from __future__ import annotations

import pytest

from weakincentives._bounded import (
    ECHO_LIMIT,
    TEXT_LIMIT,
    clip,
    exception_text,
    listing,
    quote,
    safe_str,
)


class TestClip:
    def test_short_text_is_kept(self) -> None:
        """Text within the limit comes back as it is."""
        assert clip("abc") == "abc"
        assert clip("x" * ECHO_LIMIT) == "x" * ECHO_LIMIT

    def test_long_text_is_cut_to_the_limit(self) -> None:
        """Longer text keeps limit - 3 characters and ends in '...'."""
        assert clip("x" * 10_000, 10) == "xxxxxxx..."

    def test_lone_surrogates_become_escapes(self) -> None:
        """The result always encodes as UTF-8, even from text with lone surrogates."""
        assert clip("é\ud800") == "é\\ud800"
        clip("é\ud800" * 50).encode("utf-8")


class TestQuote:
    @pytest.mark.parametrize(
        ("text", "limit", "quoted"),
        [
            ("nope", ECHO_LIMIT, "'nope'"),
            ("a" * 50, 10, "'aaaaaaa...'"),
            ("\ud800", 5, "'\\ud800'"),
        ],
    )
    def test_quotes_with_repr_after_cutting(self, text: str, limit: int, quoted: str) -> None:
        """repr of the cut text: escapes stay readable and short."""
        assert quote(text, limit) == quoted


class TestListing:
    def test_lists_a_few_and_counts_the_rest(self) -> None:
        """10,000 items: five are named, the rest counted with a thousands separator."""
        names = [f"key{index}" for index in range(10_000)]
        assert listing(names) == "key0, key1, key2, key3, key4 and 9,995 more"

    def test_short_lists_are_complete(self) -> None:
        """Up to the limit every item is named; nothing gives an empty string."""
        assert listing(["a", "b"]) == "a, b"
        assert listing([]) == ""

    def test_items_are_cut_and_can_be_quoted(self) -> None:
        """Each item is bounded too, and quoted on request."""
        assert listing(["x" * 100, "y"], width=6, quoted=True) == "'xxx...', 'y'"


class TestSafeStr:
    def test_str_is_cut(self) -> None:
        """str() of the value, cut to the text limit."""
        assert safe_str(12) == "12"
        assert len(safe_str("z" * 100_000)) == TEXT_LIMIT

    def test_a_failing_str_is_described_by_type(self) -> None:
        """An object whose __str__ raises (or cannot print) never breaks the message."""

        class Broken:
            def __str__(self) -> str:
                raise RuntimeError("no")

        assert safe_str(Broken()) == "<Broken object; str() failed>"
        assert safe_str(7 * 10**5000) == "<int object; str() failed>"


class TestExceptionText:
    def test_type_and_message(self) -> None:
        """``TypeName: message``, or the type alone when the message is empty."""
        assert exception_text(ValueError("bad")) == "ValueError: bad"
        assert exception_text(KeyError()) == "KeyError"

    def test_long_messages_are_cut(self) -> None:
        """A huge exception message stays within the text limit."""
        text = exception_text(RuntimeError("m" * 1_000_000))
        assert text == "RuntimeError: " + "m" * (TEXT_LIMIT - 3) + "..."
