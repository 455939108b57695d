"""Tokenizer and stemmer used by the default ranker."""

from __future__ import annotations

import pytest

from weakincentives.discovery._text import stem, stop_terms, tokenize


class TestTokenize:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("getCompanyDetails", ["company", "detail", "getcompanydetail"]),
            ("rename_symbol", ["renam", "symbol"]),
            ("kebab-case-name", ["kebab", "case", "name"]),
            ("/api/v1/users", ["api", "v", "1", "v1", "user"]),
            ("HTTPServer", ["http", "serv", "httpserv"]),
            ("covid19 mp3", ["covid", "19", "covid19", "mp", "3", "mp3"]),
            ("I'm sure it's Messi's club", ["sure", "messi", "club"]),
            ("Don\u2019t stop", ["stop"]),
            ("Please get me the map", ["map"]),
            ("YouTube Youtube youtube", ["tube", "youtub", "youtub", "youtub"]),
            ("GitHub Github", ["git", "hub", "github", "github"]),
            ("PDFs and URLs", ["pdf", "url"]),
            ("iOS", ["os", "ios"]),
            ("getWorldWarIInfo", ["world", "war", "info", "getworldwariinfo"]),
            ("Text2Text", ["text", "2", "text", "text2text"]),
            ("Récupère un transitaire", ["récupèr", "un", "transitair"]),
        ],
    )
    def test_identifiers_and_prose_become_terms(self, text: str, expected: list[str]) -> None:
        """camelCase, snake_case, kebab-case, paths, digits and stop words are handled."""
        assert tokenize(text) == expected

    def test_repeats_and_order_are_kept(self) -> None:
        """Callers count term frequency, so repeats survive."""
        assert tokenize("bucket Buckets BUCKET") == ["bucket", "bucket", "bucket"]

    def test_joined_forms_can_be_left_out(self) -> None:
        """Exact-name matching compares the parts alone."""
        assert tokenize("getCompanyDetails YouTube", joined=False) == ["company", "detail", "tube"]


class TestStopTerms:
    def test_stop_words_are_kept_apart_for_the_last_resort(self) -> None:
        """stop_terms lists the stop words, also inside identifiers, lowercased."""
        assert stop_terms("What is the getOrderById call?") == ["what", "is", "the", "get", "by"]
        assert stop_terms("weather forecast") == []

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
            ("shortener", "short"),
            ("shortening", "short"),
            ("shorten", "short"),
            ("short", "short"),
            ("player", "play"),
            ("user", "user"),
            ("token", "token"),
        ],
    )
    def test_inflections_share_a_stem(self, word: str, expected: str) -> None:
        """Plurals, -ing, -ed, -ation, silent e, -er and -en reduce alike; short words stay."""
        assert stem(word) == expected
