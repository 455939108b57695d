"""Tokenizer and stemmer used by the default ranker."""

from __future__ import annotations

import pytest

from weakincentives.discovery import tokenize
from weakincentives.discovery._text import stem


class TestTokenize:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("getCompanyDetails", ["company", "detail"]),
            ("rename_symbol", ["renam", "symbol"]),
            ("kebab-case-name", ["kebab", "case", "name"]),
            ("/api/v1/users", ["api", "v", "1", "user"]),
            ("HTTPServer", ["http", "server"]),
            ("covid19 mp3", ["covid", "19", "mp", "3"]),
            ("I'm sure it's Messi's club", ["sure", "messi", "club"]),
            ("Don\u2019t stop", ["stop"]),
            ("Please get me the weather", ["weather"]),
        ],
    )
    def test_identifiers_and_prose_become_terms(self, text: str, expected: list[str]) -> None:
        """camelCase, snake_case, kebab-case, paths, digits and stop words are handled."""
        assert tokenize(text) == expected

    def test_repeats_and_order_are_kept(self) -> None:
        """Callers count term frequency, so repeats survive."""
        assert tokenize("bucket Buckets BUCKET") == ["bucket", "bucket", "bucket"]

    def test_empty_and_stop_word_only_text_has_no_terms(self) -> None:
        """Nothing searchable yields an empty list."""
        assert tokenize("") == []
        assert tokenize("can you please do it for me?") == []


class TestStem:
    @pytest.mark.parametrize(
        ("word", "expected"),
        [
            ("companies", "company"),
            ("addresses", "address"),
            ("matches", "match"),
            ("boxes", "box"),
            ("images", "imag"),
            ("image", "imag"),
            ("status", "status"),
            ("analysis", "analysis"),
            ("shipping", "ship"),
            ("running", "run"),
            ("passed", "pass"),
            ("created", "creat"),
            ("creation", "creat"),
            ("create", "creat"),
            ("ring", "ring"),
            ("bed", "bed"),
            ("1234", "1234"),
            ("api", "api"),
        ],
    )
    def test_inflections_share_a_stem(self, word: str, expected: str) -> None:
        """Plurals, -ing, -ed, -ation and silent e reduce consistently; short words stay."""
        assert stem(word) == expected
