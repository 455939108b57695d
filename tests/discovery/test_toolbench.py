"""The real ToolBench catalogue (read from the shared data directory, never copied)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from weakincentives.discovery import ToolCatalog, ToolDiscovery


def _data_dir() -> Path:
    """``../shared/data/toolbench`` beside the checkout, or where the environment points.

    ``WINK_TOOLBENCH_DIR`` names the directory itself, ``WINK_DATA_DIR`` the shared data
    directory holding it; nothing is read from an absolute path written here.
    """
    candidates: list[Path] = []
    if override := os.environ.get("WINK_TOOLBENCH_DIR"):
        candidates.append(Path(override))
    if shared := os.environ.get("WINK_DATA_DIR"):
        candidates.append(Path(shared) / "toolbench")
    checkout = Path(__file__).resolve().parents[2]
    candidates.append(checkout.parent / "shared" / "data" / "toolbench")
    return next((c for c in candidates if (c / "catalog.jsonl").is_file()), candidates[-1])


DATA = _data_dir()


@pytest.fixture(scope="module")
def toolbench() -> ToolDiscovery:
    """A discovery service over the 2,490 ToolBench endpoints."""
    if not (DATA / "catalog.jsonl").exists():
        pytest.skip(f"ToolBench data is not available at {DATA} (it is not part of the repository)")
    return ToolDiscovery(ToolCatalog.from_jsonl(DATA / "catalog.jsonl"))


def test_the_catalogue_loads_with_its_categories(toolbench: ToolDiscovery) -> None:
    """2,490 endpoints in 47 categories over 814 API nodes."""
    catalog = toolbench.catalog
    assert len(catalog) == 2490
    assert len(catalog.children(())) == 47
    assert sum(1 for path in catalog.nodes if len(path) == 2) == 814
    assert catalog.subtree_size(("Tools",)) == 340


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        (
            "search transfermarkt for a football player by name",
            "data/theclique/transfermarkt_search",
        ),
        ("clips from a Kick.com streamer channel", "data/kick_com_api_kick_api/get_channel_clips"),
        ("tell me a random joke of the day", "entertainment/world_of_jokes/get_joke_of_the_day"),
    ],
)
def test_a_known_tool_is_found_for_its_query(
    toolbench: ToolDiscovery, query: str, tool_id: str
) -> None:
    """Plain descriptions of a capability find the endpoint that provides it in the top 3."""
    results = toolbench.search_tool_by_category(query, limit=3).results
    assert tool_id in [pointer.tool_id for pointer in results]


def test_labelled_queries_mostly_find_their_tools(toolbench: ToolDiscovery) -> None:
    """Over the 765 labelled queries, most relevant endpoints are in the top 5 (recall@5 > 0.7)."""
    queries = [
        json.loads(line)
        for line in (DATA / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    recall = 0.0
    for query in queries:
        top = {p.tool_id for p in toolbench.search_tool_by_category(query["query"]).results}
        recall += len(top & set(query["relevant"])) / len(query["relevant"])
    assert recall / len(queries) > 0.7


def test_an_exact_endpoint_name_is_ranked_first(toolbench: ToolDiscovery) -> None:
    """A tool's own name finds it at the top even among thousands."""
    (first,) = toolbench.search_tool_by_category(
        "Get Channel Details", category_path=["Data"], limit=1
    ).results
    assert first.tool_id == "data/kick_com_api_kick_api/get_channel_details"
    assert first.confidence == 1.0
