"""Which recorded request a miss is compared with, and how the difference is shown."""

from __future__ import annotations

from typing import Any

import pytest

from weakincentives.adapters._cassette import Exchange
from weakincentives.adapters._replay_miss import (
    DIFF_LINES,
    DIFF_WIDTH,
    closest_exchange,
    display_lines,
    first_difference,
    request_diff,
)
from weakincentives.serde import JSONValue


def exchange(round: int, request: JSONValue) -> Exchange:
    """A recorded exchange of ``request`` in ``round``."""
    return Exchange.of(round=round, request=request, deltas=(), reply={"ok": True})


class TestClosestExchange:
    def test_the_same_position_wins_when_its_round_matches(self) -> None:
        """An unchanged run asks in the recorded order: the request at its position."""
        recorded = [
            exchange(1, {"text": "alpha"}),
            exchange(2, {"text": "beta"}),
            exchange(2, {"text": "gamma"}),
        ]
        found = closest_exchange(recorded, {"text": "gamma"}, round=2, position=1)
        assert found == 1

    def test_else_the_most_similar_request_of_the_same_round(self) -> None:
        """The position holds another round: similarity among the round's exchanges."""
        recorded = [
            exchange(1, {"lines": ["a", "b", "c", "d"]}),
            exchange(2, {"lines": ["w", "x", "y", "z"]}),
            exchange(2, {"lines": ["a", "b", "c", "e"]}),
        ]
        found = closest_exchange(recorded, {"lines": ["a", "b", "c", "d"]}, round=2, position=0)
        assert found == 2

    def test_else_the_most_similar_of_all(self) -> None:
        """No exchange of the round: the most similar anywhere."""
        recorded = [exchange(1, {"text": "far away"}), exchange(2, {"text": "near"})]
        assert closest_exchange(recorded, {"text": "near"}, round=5, position=9) == 1

    def test_equally_similar_requests_go_to_the_nearest_position(self) -> None:
        """Ties break towards the position the request was asked at."""
        recorded = [exchange(1, {"text": "same"}) for _ in range(5)]
        assert closest_exchange(recorded, {"text": "other"}, round=2, position=3) == 3

    def test_an_empty_cassette_has_none(self) -> None:
        """Nothing recorded, nothing close."""
        assert closest_exchange([], {"text": "x"}, round=1, position=0) is None


class TestFirstDifference:
    @pytest.mark.parametrize(
        ("recorded", "built", "path"),
        [
            ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 3]}, "$.b[1]"),
            ({"a": 1}, {"a": 1, "z": 2}, "$.z"),
            ({"a": [1]}, {"a": [1, 2]}, "$.a[1]"),
            ({"a": 1}, {"a": True}, "$.a"),
            ({"a": 1}, {"a": 1.0}, "$.a"),
            ({"two words": 1}, {"two words": 2}, '$["two words"]'),
            ([1], {"a": 1}, "$"),
            ({"a": {"b": "x"}}, {"a": {"b": "x"}}, None),
        ],
    )
    def test_the_path_of_the_first_difference(
        self, recorded: Any, built: Any, path: str | None
    ) -> None:
        """Keys in sorted order, array items in order; a change of type is a difference."""
        assert first_difference(recorded, built) == path


class TestDiff:
    def test_multi_line_strings_diff_line_by_line(self) -> None:
        """A changed line of a prompt shows as that line."""
        recorded: JSONValue = {"prompt": "one\ntwo\nthree", "empty": {}, "none": []}
        built: JSONValue = {"prompt": "one\n2\nthree", "empty": {}, "none": []}
        assert request_diff(recorded, built, recorded_label="old").splitlines() == [
            "--- old",
            "+++ the request built now",
            "@@ -3,6 +3,6 @@",
            '   "none": []',
            '   "prompt": |',
            "     one",
            "-    two",
            "+    2",
            "     three",
            " }",
        ]

    def test_the_display_shows_every_member_sorted(self) -> None:
        """One member per line, keys sorted, scalars as JSON."""
        assert display_lines({"b": [1, None], "a": "é"}) == [
            "{",
            '  "a": "é"',
            '  "b": [',
            "    1",
            "    null",
            "  ]",
            "}",
        ]

    def test_a_large_diff_is_cut_and_counted(self) -> None:
        """At most DIFF_LINES lines, each at most DIFF_WIDTH characters, then a count."""
        recorded: JSONValue = {"lines": [f"old {index} " + "x" * 500 for index in range(200)]}
        built: JSONValue = {"lines": [f"new {index} " + "x" * 500 for index in range(200)]}
        lines = request_diff(recorded, built, recorded_label="old").splitlines()
        assert len(lines) == DIFF_LINES + 1
        assert max(len(line) for line in lines[:-1]) == DIFF_WIDTH
        # 2 file headers, 1 hunk header, 200 removed, 200 added, 2 context lines each side
        assert lines[-1] == f"... {407 - DIFF_LINES} more diff lines"
