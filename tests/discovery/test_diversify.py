"""Multi-request queries: every request is covered early; one-request queries keep their order."""

from __future__ import annotations

from collections.abc import Container, Mapping

from weakincentives.discovery import (
    BM25Ranker,
    CatalogTool,
    RankIndex,
    ToolCatalog,
    ToolDiscovery,
    TreePath,
)
from weakincentives.discovery._diversify import diversify, requests_of


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
