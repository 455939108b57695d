"""The default BM25F ranker and the ranking seam."""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.discovery import BM25Ranker, CatalogTool, ToolCatalog, ToolDiscovery, TreePath
from weakincentives.discovery._ranking import FieldWeights
from weakincentives.errors import ConfigValidationError

from .conftest import TOOLS, ServiceFactory


def _order(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda tool_id: (-scores[tool_id], tool_id))


class TestBM25:
    def test_scores_are_relevances_in_the_unit_interval(self, catalog: ToolCatalog) -> None:
        """Every returned score is in (0, 1]; tools without a matching term are absent."""
        scores = BM25Ranker().index(catalog).score_tools("upload a file to a storage bucket")
        assert scores
        assert all(0 < score <= 1 for score in scores.values())
        assert "refactor.rename_symbol" not in scores

    def test_the_best_matching_tool_ranks_first(self, catalog: ToolCatalog) -> None:
        """A descriptive query puts the tool it describes on top."""
        index = BM25Ranker().index(catalog)
        assert _order(index.score_tools("upload an object into my bucket"))[0] == (
            "storage.put_object"
        )
        assert _order(index.score_tools("rename a symbol across the codebase"))[0] == (
            "refactor.rename_symbol"
        )

    def test_exact_name_or_id_gets_full_confidence(self, catalog: ToolCatalog) -> None:
        """A query equal to a tool's name terms (or id terms) scores exactly 1.0."""
        index = BM25Ranker().index(catalog)
        assert index.score_tools("Rename Symbol")["refactor.rename_symbol"] == 1.0
        assert index.score_tools("refactor.rename_symbol")["refactor.rename_symbol"] == 1.0

    def test_siblings_lend_evidence_to_terse_tools(self) -> None:
        """A tool whose own text misses the query still ranks through its category's other tools."""
        tools = [
            CatalogTool(tool_id="w.now", name="Now", paths=(("Weather API",),), summary="Current"),
            CatalogTool(
                tool_id="w.forecast",
                name="Forecast",
                paths=(("Weather API",),),
                summary="Weather forecast for a city",
            ),
            CatalogTool(tool_id="x.other", name="Other", paths=(("Misc",),), summary="Anything"),
        ]
        catalog = ToolCatalog(tools=tools)
        with_siblings = BM25Ranker().index(catalog).score_tools("forecast")
        alone = BM25Ranker(sibling_weight=0).index(catalog).score_tools("forecast")
        assert set(with_siblings) == {"w.now", "w.forecast"}
        assert with_siblings["w.forecast"] > with_siblings["w.now"]
        assert set(alone) == {"w.forecast"}

    def test_a_tool_in_two_categories_takes_its_best_category_once(self) -> None:
        """Evidence from several holding categories is not added up."""
        tools = [
            CatalogTool(tool_id="a", name="alpha", paths=(("Maps",), ("Travel",))),
            CatalogTool(tool_id="b", name="route planner", paths=(("Maps",),)),
            CatalogTool(tool_id="c", name="route booking", paths=(("Travel",),)),
        ]
        index = BM25Ranker(adaptive_siblings=False).index(ToolCatalog(tools=tools))
        scores, nodes = index.score_tools("route"), index.score_nodes("route")
        best_category = max(nodes[("Maps",)], nodes[("Travel",)])
        assert scores["a"] == pytest.approx(0.5 * best_category)

    def test_a_category_lends_as_much_as_it_is_specific(self) -> None:
        """A category holding every tool lends nothing; one holding one tool lends fully."""
        flat = ToolCatalog(
            tools=[
                CatalogTool(tool_id=f"t{i}", name=f"tool {i}", paths=(("All",),), summary=text)
                for i, text in enumerate(("route planner", "weather", "music"))
            ]
        )
        index = BM25Ranker().index(flat)
        assert index.lend.tolist() == [0.0]
        assert set(index.score_tools("route")) == {"t0"}
        nested = ToolCatalog(
            tools=[
                CatalogTool(tool_id="a", name="alpha", paths=(("Maps",),)),
                CatalogTool(tool_id="b", name="beta", paths=(("Other",),)),
                CatalogTool(tool_id="c", name="gamma", paths=(("Other",),)),
                CatalogTool(tool_id="d", name="delta", paths=(("Other",),)),
            ]
        )
        lend = dict(zip(nested.nodes, BM25Ranker().index(nested).lend, strict=True))
        assert lend[("Maps",)] == 1.0
        assert lend[("Other",)] == pytest.approx(1 - math.log(3) / math.log(4))

    def test_nodes_are_scored_by_their_own_and_their_tools_text(self, catalog: ToolCatalog) -> None:
        """search_nodes material: a category matches through its summary or its tools."""
        index = BM25Ranker().index(catalog)
        scores = index.score_nodes("oauth login")
        best: TreePath = max(scores, key=lambda path: (scores[path], path))
        assert best == ("User", "Auth")
        assert all(0 < score <= 1 for score in scores.values())
        assert index.score_nodes("zzz") == {}

    def test_field_weights_change_the_ranking(self) -> None:
        """Zeroing the name weight stops a name-only match from scoring."""
        tools = [
            CatalogTool(tool_id="a", name="translate text", paths=(("Text",),), summary="words")
        ]
        catalog = ToolCatalog(tools=tools)
        no_names = BM25Ranker(weights=FieldWeights(name=0.0), sibling_weight=0.0)
        assert no_names.index(catalog).score_tools("translation") == {}
        assert FieldWeights().weight("parent") == 3.0

    def test_an_empty_catalogue_scores_nothing(self) -> None:
        """No documents, no matches, no division by zero."""
        index = BM25Ranker().index(ToolCatalog(tools=[]))
        assert index.score_tools("anything") == {}
        assert index.score_nodes("anything") == {}


_WORDS = st.sampled_from(
    ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "kilo"]
)
_NAMES = st.lists(_WORDS, min_size=1, max_size=3).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(_NAMES, min_size=1, max_size=12, unique_by=lambda name: tuple(name.split())),
    pick=st.integers(min_value=0),
    groups=st.lists(st.sampled_from(["Red", "Green", "Blue"]), min_size=12, max_size=12),
)
def test_an_exact_tool_name_ranks_that_tool_first(
    names: list[str], pick: int, groups: list[str]
) -> None:
    """Whatever the rest of the catalogue holds, querying a tool's exact name ranks it first."""
    tools = [
        CatalogTool(tool_id=f"t{i}", name=name, paths=((groups[i],),), summary=f"{name} tool")
        for i, name in enumerate(names)
    ]
    target = tools[pick % len(tools)]
    scores = BM25Ranker().index(ToolCatalog(tools=tools)).score_tools(target.name)
    assert _order(scores)[0] == target.tool_id


@dataclass(frozen=True, slots=True, kw_only=True)
class _FakeEmbeddingIndex:
    tool_scores: Mapping[str, float]
    node_scores: Mapping[TreePath, float]

    def score_tools(
        self, query: str, *, top: int | None = None, within: Container[str] | None = None
    ) -> Mapping[str, float]:
        return self.tool_scores

    def score_nodes(
        self, query: str, *, top: int | None = None, within: Container[TreePath] | None = None
    ) -> Mapping[TreePath, float]:
        return self.node_scores


@dataclass(frozen=True, slots=True, kw_only=True)
class _FakeEmbeddingRanker:
    built: list[ToolCatalog]

    def index(self, catalog: ToolCatalog) -> _FakeEmbeddingIndex:
        self.built.append(catalog)
        return _FakeEmbeddingIndex(
            tool_scores={
                "auth.reset_password": 0.9,
                "storage.put_object": 0.4,
                "lint.run_linter": 0.4,
            },
            node_scores={("Rendering",): 0.7},
        )


class TestPluggableRanker:
    def test_a_custom_ranker_decides_order_and_confidence(
        self, make_service: ServiceFactory, catalog: ToolCatalog
    ) -> None:
        """The service reports the plug-in's relevances and breaks ties by tool id."""
        built: list[ToolCatalog] = []
        service = make_service(ranker=_FakeEmbeddingRanker(built=built))
        response = service.search_tool_by_category("anything at all")
        assert built == [catalog]
        assert [(p.tool_id, p.confidence) for p in response.results] == [
            ("auth.reset_password", 0.9),
            ("lint.run_linter", 0.4),
            ("storage.put_object", 0.4),
        ]
        nodes = service.search_nodes("whatever")
        assert [(m.path, m.confidence) for m in nodes.results] == [(("Rendering",), 0.7)]

    def test_a_prebuilt_index_is_shared(
        self, make_service: ServiceFactory, catalog: ToolCatalog
    ) -> None:
        """Services can share one index instead of building their own."""
        index = BM25Ranker().index(catalog)
        service = make_service(index=index)
        assert service.index is index
        assert service.catalog is catalog


def test_schemas_without_a_property_map_still_index() -> None:
    """A tool whose args_schema has no usable properties is indexed by its other fields."""
    tool = CatalogTool(
        tool_id="odd", name="odd tool", paths=(("X",),), args_schema={"type": "object"}
    )
    assert BM25Ranker().index(ToolCatalog(tools=[tool])).score_tools("odd") == {"odd": 1.0}


def test_ranker_and_index_are_exclusive(catalog: ToolCatalog) -> None:
    """Passing both a ranker and a prebuilt index is a programming error."""
    with pytest.raises(ConfigValidationError, match="either ranker or a prebuilt index"):
        ToolDiscovery(catalog, ranker=BM25Ranker(), index=BM25Ranker().index(catalog))


_VOCAB = st.sampled_from(
    ["weather", "forecast", "city", "map", "route", "music", "song", "news", "stock", "price"]
)


@settings(max_examples=300, deadline=None)
@given(
    names=st.lists(st.lists(_VOCAB, min_size=1, max_size=6), min_size=1, max_size=40),
    query=st.lists(_VOCAB, min_size=1, max_size=6),
    top=st.integers(min_value=1, max_value=8),
    hidden=st.sets(st.integers(min_value=0, max_value=39)),
)
def test_pruned_top_k_equals_exhaustive_top_k(
    names: list[list[str]], query: list[str], top: int, hidden: set[int]
) -> None:
    """With pruning forced on, the best ``top`` tools in scope and their scores are unchanged."""
    tools = [
        CatalogTool(
            tool_id=f"t{i:02d}",
            name=" ".join(words),
            paths=((f"Api {i % 5}",),),
            summary=" ".join(reversed(words)),
        )
        for i, words in enumerate(names)
    ]
    catalog = ToolCatalog(tools=tools)
    within = frozenset(tool.tool_id for i, tool in enumerate(tools) if i not in hidden)
    text = " ".join(query)
    exhaustive = BM25Ranker(vectorised=False).index(catalog).score_tools(text)
    pruned = (
        BM25Ranker(prune_above=0, vectorised=False)
        .index(catalog)
        .score_tools(text, top=top, within=within)
    )
    vectorised = (
        BM25Ranker(vectorised=True).index(catalog).score_tools(text, top=top, within=within)
    )

    def best(scores: Mapping[str, float]) -> list[tuple[str, float]]:
        inside = [(tool_id, score) for tool_id, score in scores.items() if tool_id in within]
        return sorted(inside, key=lambda item: (-item[1], item[0]))[:top]

    assert best(pruned) == best(exhaustive)
    assert best(vectorised) == best(exhaustive)
    assert all(pruned[tool_id] == exhaustive[tool_id] for tool_id in pruned)
    assert all(vectorised[tool_id] == exhaustive[tool_id] for tool_id in vectorised)


def test_pruned_node_search_keeps_the_best_nodes(catalog: ToolCatalog) -> None:
    """score_nodes with top and within returns the same best nodes as the full scoring."""
    full = BM25Ranker().index(catalog).score_nodes("storage bucket object")
    within = frozenset(path for path in full if path != ("Storage",))
    pruned = (
        BM25Ranker(prune_above=0, vectorised=False)
        .index(catalog)
        .score_nodes("storage bucket object", top=2, within=within)
    )
    expected = sorted((p for p in full if p in within), key=lambda p: (-full[p], p))[:2]
    assert sorted((p for p in pruned if p in within), key=lambda p: (-pruned[p], p))[:2] == expected


def test_pruning_keeps_reading_while_weaker_terms_can_still_win() -> None:
    """A tool matching two common terms beats one matching a single rare term, even when pruned."""
    names = ["alpha delta epsilon zeta", "beta gamma", "beta one", "gamma two", "delta", "zeta"]
    tools = [
        CatalogTool(tool_id=f"t{i}", name=name, paths=((f"Api {i}",),))
        for i, name in enumerate(names)
    ]
    catalog = ToolCatalog(tools=tools)
    ranker = BM25Ranker(sibling_weight=0, prune_above=0, vectorised=False)
    exhaustive = BM25Ranker(sibling_weight=0).index(catalog).score_tools("alpha beta gamma")
    pruned = ranker.index(catalog).score_tools("alpha beta gamma", top=1)
    assert _order(exhaustive)[0] == "t1"
    assert _order(pruned)[0] == "t1"
    assert pruned["t1"] == exhaustive["t1"]


def test_pruning_looks_up_long_lists_for_the_few_remaining_candidates() -> None:
    """When few candidates survive, weak terms are looked up per candidate with exact sums."""
    tools = [
        CatalogTool(
            tool_id=f"t{i:03d}",
            name="quasar pulsar" if i == 7 else f"entry {i}",
            paths=((f"Api {i}",),),
            summary="common records for everyone",
        )
        for i in range(120)
    ]
    catalog = ToolCatalog(tools=tools)
    query = "quasar pulsar common records"
    exhaustive = BM25Ranker(sibling_weight=0).index(catalog).score_tools(query)
    pruned = (
        BM25Ranker(sibling_weight=0, prune_above=0, vectorised=False)
        .index(catalog)
        .score_tools(query, top=1)
    )
    assert pruned == {"t007": exhaustive["t007"]}


class TestLastResort:
    def test_a_query_sharing_only_stop_words_still_finds_tools(self) -> None:
        """Nothing but "what"/"is" in common: the tools sharing them come back, ranked low."""
        tools = [
            CatalogTool(tool_id="a", name="what is new", paths=(("X",),), summary="release notes"),
            CatalogTool(tool_id="b", name="forecast", paths=(("X",),), summary="weather"),
        ]
        index = BM25Ranker().index(ToolCatalog(tools=tools))
        scores = index.score_tools("What is the TAF for EGLL?")
        assert set(scores) == {"a"}
        assert 0 < scores["a"] <= 0.1
        assert index.score_tools("zzz qqq") == {}

    def test_relevance_of_matches_a_full_search_for_a_lone_category(self) -> None:
        """The lookup path gives a candidate the same relevance a search does."""
        index = BM25Ranker().index(ToolCatalog(tools=TOOLS))
        full = index.score_tools("bucket object upload")
        some = index.relevance_of("bucket object upload", ["storage.put_object", "lint.run_linter"])
        assert some == {"storage.put_object": pytest.approx(full["storage.put_object"])}
        assert index.relevance_of("zzz", ["storage.put_object", "unknown"]) == {}

    @pytest.mark.parametrize("vectorised", [True, False])
    def test_relevance_rows_are_relevance_of_each_query(self, vectorised: bool) -> None:
        """Batched lookups give each query exactly what a lookup of its own gives."""
        index = BM25Ranker(vectorised=vectorised).index(ToolCatalog(tools=TOOLS))
        queries = ["bucket object upload", "run the linter", "zzz", "upload lint storage"]
        ids = [tool.tool_id for tool in TOOLS] + ["unknown"]
        rows = index.relevance_rows(queries, ids)
        assert rows == [index.relevance_of(query, ids) for query in queries]
        assert rows[0]
        assert rows[1]
        assert not rows[2]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: BM25Ranker(sibling_weight=-1),
            "BM25Ranker.sibling_weight must be a finite number >= 0, got -1",
        ),
        (lambda: BM25Ranker(k1=math.nan), "BM25Ranker.k1 must be a finite number >= 0, got nan"),
        (lambda: BM25Ranker(k1=math.inf), "BM25Ranker.k1 must be a finite number >= 0, got inf"),
        (
            lambda: BM25Ranker(sibling_weight=True),
            "BM25Ranker.sibling_weight must be a finite number >= 0, got True",
        ),
        (
            lambda: BM25Ranker(sibling_limit=0),
            "BM25Ranker.sibling_limit must be an integer >= 1 or None, got 0",
        ),
        (
            lambda: BM25Ranker(prune_above=-1),
            "BM25Ranker.prune_above must be an integer >= 0, got -1",
        ),
        (
            lambda: FieldWeights(name=-0.5),
            "FieldWeights.name must be a finite number >= 0, got -0.5",
        ),
        (
            lambda: FieldWeights(summary="1"),  # type: ignore[arg-type]  # the wrong type is the test
            "FieldWeights.summary must be a finite number >= 0, got '1'",
        ),
        (
            lambda: FieldWeights(length_damping={"name": 1.5}),
            "FieldWeights.length_damping['name'] must be a number from 0 to 1, got 1.5",
        ),
        (
            lambda: FieldWeights(length_damping={"title": 0.5}),
            "FieldWeights.length_damping names no field 'title'; the fields are name, summary, "
            "tags, parent, ancestors, params",
        ),
    ],
)
def test_ranker_settings_out_of_range_are_refused(make: Callable[[], object], message: str) -> None:
    """A negative weight divided scores by zero at search time; now the setting is named."""
    with pytest.raises(ConfigValidationError) as caught:
        make()
    assert caught.value.message == message


def test_ranker_settings_at_their_bounds_are_accepted() -> None:
    assert BM25Ranker(k1=0, sibling_weight=0, sibling_limit=None, prune_above=0).k1 == 0
    assert FieldWeights(name=0, length_damping={"name": 0.0, "summary": 1}).name == 0
