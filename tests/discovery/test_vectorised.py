"""The numpy kernels give exactly what the pure-Python ones give, only faster."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import BM25Ranker, CatalogTool, ToolCatalog, _vectorised
from weakincentives.discovery._ranking import BM25Index
from weakincentives.errors import ConfigValidationError

from .conftest import TOOLS

_WORDS = st.sampled_from(
    ["weather", "forecast", "city", "map", "route", "music", "the", "news", "stock", "price"]
)


def _catalog(entries: list[tuple[list[str], int, bool]]) -> ToolCatalog:
    """Tools named by ``words`` under ``Api <n>``; ``shared`` ones also sit under ``Shared``."""
    tools = [
        CatalogTool(
            tool_id=f"t{i:02d}",
            name=" ".join(words),
            paths=((f"Group {api % 2}", f"Api {api}"), ("Shared",))
            if shared
            else ((f"Group {api % 2}", f"Api {api}"),),
            summary=" ".join(reversed(words)) + " for what you need",
            tags=tuple(words[:1]),
        )
        for i, (words, api, shared) in enumerate(entries)
    ]
    return ToolCatalog(tools=tools)


_ENTRIES = st.lists(
    st.tuples(st.lists(_WORDS, min_size=1, max_size=5), st.integers(0, 4), st.booleans()),
    min_size=1,
    max_size=30,
)


def _both(catalog: ToolCatalog) -> tuple[BM25Index, BM25Index]:
    return BM25Ranker(vectorised=False).index(catalog), BM25Ranker(vectorised=True).index(catalog)


def _without_kernel(index: BM25Index) -> tuple[object, ...]:
    """Every field of the index, with the postings' kernel flag left out."""
    collections = tuple(
        (p.ids, p.impacts, p.spans, p.ceiling, p.peak, p.size)
        for p in (index.tools, index.nodes, index.stops)
    )
    return (*collections, index.members, index.holders, index.lend, index.tool_lend, index.exact)


@settings(max_examples=150, deadline=None)
@given(entries=_ENTRIES)
def test_both_builds_give_bit_identical_postings(
    entries: list[tuple[list[str], int, bool]],
) -> None:
    """Trees and DAGs alike: positions, float32 impacts, spans and bounds are equal."""
    python, numpy = _both(_catalog(entries))
    assert not python.tools.vectorised
    assert numpy.tools.vectorised
    assert _without_kernel(python) == _without_kernel(numpy)


@settings(max_examples=150, deadline=None)
@given(
    entries=_ENTRIES,
    query=st.lists(_WORDS, min_size=1, max_size=6),
    top=st.none() | st.integers(min_value=1, max_value=6),
    hidden=st.sets(st.integers(min_value=0, max_value=29)),
)
def test_both_kernels_score_alike(
    entries: list[tuple[list[str], int, bool]], query: list[str], top: int | None, hidden: set[int]
) -> None:
    """Tools, categories and relevance lookups: the same best results with the same scores."""
    catalog = _catalog(entries)
    python, numpy = _both(catalog)
    text = " ".join(query)
    within = frozenset(t.tool_id for i, t in enumerate(catalog.tools) if i not in hidden)
    slow = python.score_tools(text)
    fast = numpy.score_tools(text, top=top, within=within)
    assert _best(fast, within, top) == _best(slow, within, top)
    assert all(fast[tool_id] == slow[tool_id] for tool_id in fast)
    paths = frozenset(catalog.nodes)
    assert _best(numpy.score_nodes(text, top=top), paths, top) == _best(
        python.score_nodes(text), paths, top
    )
    ids = sorted(within)[:5]
    assert numpy.relevance_of(text, ids) == python.relevance_of(text, ids)


def _best[K: (str, tuple[str, ...])](
    scores: Mapping[K, float], within: frozenset[K], top: int | None
) -> list[tuple[K, float]]:
    inside = sorted(
        ((key, score) for key, score in scores.items() if key in within),
        key=lambda item: (-item[1], item[0]),
    )
    return inside if top is None else inside[:top]


def test_ties_at_the_cut_all_come_back() -> None:
    """Ten equal tools and a best-3 request: all ten are returned, so ids can break the tie."""
    tools = [
        CatalogTool(tool_id=f"twin{i}", name="weather forecast", paths=(("Api",),))
        for i in range(10)
    ]
    scores = (
        BM25Ranker(vectorised=True).index(ToolCatalog(tools=tools)).score_tools("forecast", top=3)
    )
    assert sorted(scores) == [f"twin{i}" for i in range(10)]
    assert len(set(scores.values())) == 1


def test_a_narrow_scope_widens_the_look_until_it_has_enough() -> None:
    """When the best matches lie outside ``within``, deeper ones are found, exactly."""
    tools = [
        CatalogTool(
            tool_id=f"t{i:03d}",
            name="forecast" if i < 200 else "forecast city weather",
            paths=((f"Api {i}",),),
        )
        for i in range(240)
    ]
    catalog = ToolCatalog(tools=tools)
    within = frozenset(f"t{i:03d}" for i in range(195, 240, 5))
    python, numpy = _both(catalog)
    fast = numpy.score_tools("forecast city weather", top=4, within=within)
    slow = python.score_tools("forecast city weather")
    assert _best(fast, within, 4) == _best(slow, within, 4)
    assert _best(fast, within, 4)[0][0] == "t200"


def test_an_empty_catalogue_builds_and_matches_nothing() -> None:
    """No documents: both builds succeed and every query comes back empty."""
    python, numpy = _both(ToolCatalog(tools=[]))
    assert _without_kernel(python) == _without_kernel(numpy)
    assert numpy.score_tools("anything", top=3) == {}


def test_the_default_uses_numpy_when_it_is_importable() -> None:
    """``vectorised=None`` picks numpy here (it is a dev dependency)."""
    assert BM25Ranker().index(ToolCatalog(tools=TOOLS)).tools.vectorised


def test_asking_for_numpy_without_it_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``vectorised=True`` where numpy cannot be imported fails clearly; None falls back."""
    monkeypatch.setattr(_vectorised, "available", lambda: False)
    with pytest.raises(ConfigValidationError, match="needs numpy") as caught:
        BM25Ranker(vectorised=True).index(ToolCatalog(tools=TOOLS))
    assert caught.value.field_name == "vectorised"
    assert not BM25Ranker().index(ToolCatalog(tools=TOOLS)).tools.vectorised
