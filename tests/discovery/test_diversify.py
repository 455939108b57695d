"""Multi-request queries: every request is covered early; one-request queries keep their order."""

from __future__ import annotations

import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import BM25Ranker, CatalogTool, ToolCatalog, ToolDiscovery, TreePath
from weakincentives.discovery._diversify import _BREAKS, diversify, requests_of
from weakincentives.discovery._ranking import RankIndex


def _catalog() -> ToolCatalog:
    """Five near-identical weather tools, and a currency converter among finance tools."""
    weather = [
        CatalogTool(
            tool_id=f"weather.forecast_{k}",
            name=f"weather forecast {k}",
            paths=(("Weather",),),
            summary="Hourly weather forecast with rain, wind, humidity and temperature for a city",
        )
        for k in range(5)
    ]
    finance = [
        CatalogTool(
            tool_id=f"finance.{name.replace(' ', '_')}",
            name=name,
            paths=(("Finance",),),
            summary=summary,
        )
        for name, summary in (
            ("convert currency", "Convert an amount between currencies"),
            ("stock quote", "Latest price of a stock"),
            ("bond yields", "Government bond yields"),
            ("market news", "Headlines about markets"),
            ("crypto price", "Price of a coin"),
        )
    ]
    return ToolCatalog(tools=[*weather, *finance])


QUERY = (
    "Give me the hourly weather forecast with rain, wind, humidity and temperature for Paris. "
    "Also convert my currency."
)


def test_a_query_is_split_into_its_requests() -> None:
    """Sentences and clauses after 'also' are requests; words alone are not."""
    assert requests_of(QUERY) == [
        "Give me the hourly weather forecast with rain, wind, humidity and temperature for Paris.",
        "convert my currency.",
    ]
    assert requests_of("weather forecast for Paris") == ["weather forecast for Paris"]
    assert requests_of("weather. Also x") == ["weather. Also x"]


def test_the_second_request_is_in_the_top_results() -> None:
    """Without diversification the converter trails five forecasts; with it, it is in the top 2."""
    plain = ToolDiscovery(_catalog(), diversify=False).search_tool_by_category(QUERY, limit=6)
    mixed = ToolDiscovery(_catalog()).search_tool_by_category(QUERY, limit=6)
    assert [p.tool_id for p in plain.results].index("finance.convert_currency") == 5
    top_two = {p.tool_id for p in mixed.results[:2]}
    assert top_two == {"weather.forecast_0", "finance.convert_currency"}
    assert sorted(p.tool_id for p in plain.results) == sorted(p.tool_id for p in mixed.results)
    convert = next(p for p in mixed.results if p.tool_id == "finance.convert_currency")
    assert convert.confidence == next(
        p.confidence for p in plain.results if p.tool_id == "finance.convert_currency"
    )


class _ScoresOnly:
    """A plug-in index without ``relevance_of``: diversification falls back to ``score_tools``."""

    def __init__(self, inner: RankIndex) -> None:
        self.inner = inner

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        return self.inner.score_tools(query, top=top, within=within)

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        return self.inner.score_nodes(query, top=top, within=within)


def test_any_ranker_can_be_diversified() -> None:
    """The fallback path gives the same order as the lookup path on the default index."""
    index = BM25Ranker().index(_catalog())
    scores = index.score_tools(QUERY)
    ranked = sorted(((s, t) for t, s in scores.items()), key=lambda e: (-e[0], e[1]))
    assert diversify(QUERY, ranked, _ScoresOnly(index)) == diversify(QUERY, ranked, index)
    assert diversify("weather", ranked, index) == ranked


@dataclass(frozen=True, slots=True)
class _TableIndex:
    """Relevance of each tool to each request, given as a table (no ranking of its own)."""

    table: Mapping[str, Mapping[str, float]]

    def relevance_of(self, query: str, tool_ids: Sequence[str]) -> Mapping[str, float]:
        row = self.table[query]
        return {tool_id: row[tool_id] for tool_id in tool_ids if tool_id in row}

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        return dict(self.table[query])

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        return {}


def _plain_greedy(
    ranked: list[tuple[float, str]], rows: Sequence[Mapping[str, float]]
) -> list[tuple[float, str]]:
    """xQuAD as first written: evaluate every pending candidate at every step."""
    share = 1.0 / len(rows)
    uncovered = [1.0] * len(rows)
    order: list[tuple[float, str]] = []
    pending = list(ranked)
    while pending:

        def loss(entry: tuple[float, str], uncovered: list[float] = uncovered) -> tuple[float, str]:
            coverage = sum(
                share * row.get(entry[1], 0.0) * left
                for row, left in zip(rows, uncovered, strict=True)
            )
            return (-(0.5 * entry[0] + 0.5 * coverage), entry[1])

        best = min(pending, key=loss)
        pending.remove(best)
        order.append(best)
        uncovered = [
            left * (1.0 - min(row.get(best[1], 0.0), 1.0))
            for row, left in zip(rows, uncovered, strict=True)
        ]
    return order


_REQUESTS = ("Quote disability cover", "Redeem loyalty points", "Book a meeting room")


@settings(max_examples=200, deadline=None)
@given(
    relevance=st.lists(
        st.tuples(
            st.floats(0.01, 1.0),
            st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.9, 1.0]), min_size=3, max_size=3),
        ),
        min_size=2,
        max_size=30,
    ),
    requests=st.integers(min_value=2, max_value=3),
)
def test_the_lazy_greedy_picks_what_the_plain_greedy_picks(
    relevance: list[tuple[float, list[float]]], requests: int
) -> None:
    """Re-evaluating only the stale best candidate gives the same order, ties included."""
    ranked = sorted(
        ((score, f"t{i:02d}") for i, (score, _) in enumerate(relevance)),
        key=lambda entry: (-entry[0], entry[1]),
    )
    asked = _REQUESTS[:requests]
    table = {
        request: {f"t{i:02d}": row[r] for i, (_, row) in enumerate(relevance) if row[r] > 0}
        for r, request in enumerate(asked)
    }
    query = ". ".join(asked) + "."
    assert requests_of(query) == [f"{request}." for request in asked]
    index = _TableIndex({f"{request}.": row for request, row in table.items()})
    rows = [table[request] for request in asked]
    assert diversify(query, ranked, index) == _plain_greedy(ranked, rows)


class _BadRows(_ScoresOnly):
    """An index whose ``relevance_rows`` answers in the wrong shape: it is not trusted."""

    def relevance_rows(self, queries: Sequence[str], tool_ids: Sequence[str]) -> object:
        return "not rows"


def test_a_malformed_batch_answer_falls_back_to_scoring() -> None:
    """Diversification uses ``score_tools`` when ``relevance_rows`` is not a list of mappings."""
    index = BM25Ranker().index(_catalog())
    scores = index.score_tools(QUERY)
    ranked = sorted(((s, t) for t, s in scores.items()), key=lambda e: (-e[0], e[1]))
    assert diversify(QUERY, ranked, _BadRows(index)) == diversify(QUERY, ranked, index)


# The clause breaks as first written: a leading \s* tried from every position of a
# whitespace run, quadratic in its length. The current pattern must split the same way.
_FIRST_BREAKS = re.compile(
    r"(?<=[.?!;])\s+"
    r"|\s*\b(?:also|additionally|furthermore|moreover|finally|then|as well as)\b,?\s*",
    re.IGNORECASE,
)
_PIECES = ["also", "Also", "then", "THEN", "as well as", "as", "finally", "Fin", "more", "x"]
_PIECES += [" ", "  ", "\t", "\n", "\u00a0", ".", ";", ",", "!", "é", "a", "moreover,"]


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(st.sampled_from(_PIECES), max_size=16))
def test_clause_breaks_split_as_first_written(pieces: list[str]) -> None:
    """The linear pattern splits any text exactly as the first (quadratic) one did."""
    text = "".join(pieces)
    assert _BREAKS.split(text) == _FIRST_BREAKS.split(text)


def test_a_long_whitespace_run_splits_in_linear_time() -> None:
    """100,000 spaces between two words make one request (a quadratic split took minutes)."""
    query = "a" + " " * 100_000 + "b"
    assert requests_of(query) == [query]
