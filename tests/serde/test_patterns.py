"""Schema patterns that could backtrack for hours are found and not run.

Catalogue schemas (MCP servers, catalogue files) and the model's arguments are both
untrusted; ``validate`` must not hand Python's backtracking ``re`` a pattern and a
value that take exponential time.
"""

from __future__ import annotations

import logging
import re
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from weakincentives.serde import sample, validate
from weakincentives.serde._patterns import backtracking_risk, pattern_matcher

RISKY = {
    r"^(a+)+$": "(a+)+",
    r"(a*)*": "(a*)*",
    r"^(\w+\s?)*$": r"(\w+\s?)*",
    r"(x+x+)+y": "(x+x+)+",
    r"^(a+){1,10}$": "(a+){1,10}",
    r"((ab)*c)*": "((ab)*c)*",
    r"^(?:a+)+$": "(?:a+)+",
    r"(.*a){20}": "(.*a){20}",
    r"((a|b)+)+": "((a|b)+)+",
    r"^(a|a)*b": "(a|a)*",
    r"(a|aa)*": "(a|aa)*",
    r"(?P<n>a|ab)+": "(?P<n>a|ab)+",
    r"(\w|\d)+$": r"(\w|\d)+",
    r"^(a?){20}$": "(a?){20}",
    r"(a+)+?": "(a+)+?",
    r"(a+){2,}": "(a+){2,}",
}
"""Patterns that repeat what can match the same text several ways, and the group named."""

SAFE = [
    r"^\d{4}-\d{2}-\d{2}$",
    r"^[a-z0-9_-]{1,64}$",
    r"^(a|b)+$",
    r"^(\d{1,3}\.){3}\d{1,3}$",
    r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$",
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    r"^(?:[A-Z]{2})?$",
    r"(?i)^abc+$",
    r"[(]+",
    r"\(a+\)+",
    r"^(foo)+$",
    r"^(?:\+?1)?\d{10}$",
    r"a{}",
    r"a{,3}",
    r"(?:\.|-)+",
    r"[]a]+",
    r"[^]a]+",
    r"[a\]]+",
    r"(?P<x>a)(?P=x)+",
    r"(?#a comment)x+",
    r"(?<=a)b+",
    r"(?<!a)b+",
    r"(?=a)a+",
    r"(?!b)a+",
    r"(?>a+)b",
    r"(?i:ab)+",
    r"(a?){3}",
    r"(a|b|c)*",
]
"""Patterns read each character one way, or repeat a bounded body a few times."""


@pytest.mark.parametrize("pattern", list(RISKY))
def test_a_repeated_ambiguous_group_is_named(pattern: str) -> None:
    """The risk names the group and what makes it ambiguous."""
    re.compile(pattern)
    risk = backtracking_risk(pattern)
    assert risk is not None
    assert risk.startswith(f"the group {RISKY[pattern]!r} repeats ")
    assert risk.endswith(", which can take exponential time to match")


def test_the_risk_says_which_kind_of_ambiguity() -> None:
    """A nested repetition and an alternation of overlapping branches are told apart."""
    assert backtracking_risk("(a+)+") == (
        "the group '(a+)+' repeats a repetition, which can take exponential time to match"
    )
    assert backtracking_risk("(a|ab)+") == (
        "the group '(a|ab)+' repeats an alternation of overlapping branches, which can "
        "take exponential time to match"
    )


def test_a_long_group_is_cut_short_in_the_risk() -> None:
    pattern = "(" + "b" * 100 + "a+)+"
    risk = backtracking_risk(pattern)
    assert risk is not None
    assert "'(" + "b" * 56 + "...'" in risk


@pytest.mark.parametrize("pattern", SAFE)
def test_patterns_read_one_way_are_matched(pattern: str) -> None:
    re.compile(pattern)
    assert backtracking_risk(pattern) is None
    assert pattern_matcher(pattern) is not None


@given(st.text(alphabet="ab()|*+?{}[]^$\\.,123:P<>=!#-", max_size=16))
def test_any_pattern_that_compiles_is_read_without_error(pattern: str) -> None:
    """The reader copes with every construct the compiler accepts."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "possible nested set" and the like
        try:
            re.compile(pattern)
        except (re.error, OverflowError):
            return
    risk = backtracking_risk(pattern)
    assert risk is None or "exponential" in risk


def test_validate_does_not_run_a_risky_pattern(caplog: pytest.LogCaptureFixture) -> None:
    """Sixty 'a's and a '!' against (a+)+ would take longer than the universe has left."""
    schema = {"type": "object", "properties": {"q": {"type": "string", "pattern": "^(a+)+$"}}}
    with caplog.at_level(logging.WARNING, logger="weakincentives.serde"):
        assert validate(schema, {"q": "a" * 60 + "!"}) == ()
        assert validate(schema, {"q": "a" * 61 + "!"}) == ()
    warnings = [record.getMessage() for record in caplog.records]
    assert warnings == [
        "schema pattern '^(a+)+$' is not checked: the group '(a+)+' repeats a repetition, "
        "which can take exponential time to match"
    ]  # once per pattern


def test_validate_still_checks_a_safe_pattern_and_the_rest_of_a_risky_schema() -> None:
    schema = {"type": "string", "pattern": "^(a+)+$", "maxLength": 3}
    assert [violation.render() for violation in validate(schema, "aaaa")] == [
        "$: allows at most 3 characters"
    ]
    assert [v.render() for v in validate({"type": "string", "pattern": "^a+$"}, "ab")] == [
        "$: must match pattern '^a+$'"
    ]


def test_validate_skips_a_pattern_that_does_not_compile(caplog: pytest.LogCaptureFixture) -> None:
    """Catalogues refuse such schemas when built; a direct call logs it instead of raising."""
    with caplog.at_level(logging.WARNING, logger="weakincentives.serde"):
        assert validate({"type": "string", "pattern": "(unclosed"}, "x") == ()
    assert (
        caplog.records[0]
        .getMessage()
        .startswith("schema pattern '(unclosed' is not checked: it does not compile (")
    )


def test_sample_does_not_run_a_risky_pattern() -> None:
    """A sample for such a schema is the plain fallback, stretched to the minimum length."""
    value = sample({"type": "string", "pattern": "^2026-01-0(1+)+x$", "minLength": 60})
    assert isinstance(value, str)
    assert len(value) == 60
    assert value.startswith("sample-")
