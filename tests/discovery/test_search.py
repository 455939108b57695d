"""``search_tool_by_category`` and ``search_nodes``."""

from __future__ import annotations

from typing import cast

import pytest

from weakincentives.discovery import DiscoveryError, Hint, NodeMatch, ToolDiscovery


class TestSearchTools:
    def test_root_search_ranks_the_whole_catalogue(self, service: ToolDiscovery) -> None:
        """The seed's example query finds the rename tool first with a confidence."""
        response = service.search_tool_by_category("rename a symbol across the codebase")
        assert response.category_path == ()
        first = response.results[0]
        assert first.tool_id == "refactor.rename_symbol"
        assert first.path == ("Coding", "Refactoring")
        assert first.confidence is not None
        assert 0 < first.confidence <= 1

    def test_results_stay_inside_the_category(self, service: ToolDiscovery) -> None:
        """Tools outside the category subtree never appear."""
        response = service.search_tool_by_category("bucket object code", category_path=["Coding"])
        assert {p.path[0] for p in response.results} == {"Coding"}

    def test_order_is_by_confidence_then_tool_id(self, service: ToolDiscovery) -> None:
        """Confidence never increases down the list, and equal confidences are in id order."""
        response = service.search_tool_by_category("bucket", limit=50)
        keys = [(-(p.confidence or 0.0), p.tool_id) for p in response.results]
        assert keys == sorted(keys)
        assert len(response.results) == 4

    def test_a_dag_tool_is_reported_at_its_path_inside_the_category(
        self, service: ToolDiscovery
    ) -> None:
        """Searching under Security gives the Security path of a two-category tool."""
        response = service.search_tool_by_category("rotate credentials", category_path=["Security"])
        assert [(p.tool_id, p.path) for p in response.results] == [
            ("identity.rotate_credentials", ("Security",))
        ]

    def test_no_match_in_a_category_hints_where_it_matches(self, service: ToolDiscovery) -> None:
        """NO_MATCH_IN_CATEGORY lists categories elsewhere that hold matching tools."""
        with pytest.raises(DiscoveryError, match=r"^NO_MATCH_IN_CATEGORY") as info:
            service.search_tool_by_category("oauth login", category_path=["Storage"])
        error = info.value
        assert error.message == "no tool in category ['Storage'] matches 'oauth login'"
        assert error.hints[0] == Hint(
            kind="category",
            path=("User", "Auth"),
            summary="Authentication and authorization workflows",
        )
        assert error.next_action == (
            "call search_tool_by_category(query='oauth login', category_path=<a hinted path>)"
        )
        assert error.path == ("Storage",)

    def test_no_match_anywhere_suggests_rephrasing(self, service: ToolDiscovery) -> None:
        """With nothing matching at all, the top-level categories are offered for browsing."""
        with pytest.raises(DiscoveryError) as info:
            service.search_tool_by_category("zebra migration")
        error = info.value
        assert error.code == "NO_MATCH_IN_CATEGORY"
        assert error.message == "no tool in the catalogue matches 'zebra migration'"
        assert error.next_action == "search again with other words, or call list(path=[]) to browse"
        assert [hint.path for hint in error.hints] == [("Coding",), ("Storage",), ("User",)]

    @pytest.mark.parametrize("query", ["", "   ", None, 3])
    def test_the_query_is_required(self, service: ToolDiscovery, query: object) -> None:
        """An empty or non-string query is an INVALID_REQUEST with an example."""
        with pytest.raises(DiscoveryError, match="query must be a non-empty description") as info:
            service.search_tool_by_category(cast("str", query))
        assert info.value.code == "INVALID_REQUEST"
        assert info.value.next_action == ('repeat the request with a query such as "upload a file"')

    @pytest.mark.parametrize("limit", [0, -1, 51, True, 2.5, "5"])
    def test_the_limit_must_be_1_to_50(self, service: ToolDiscovery, limit: object) -> None:
        """Out-of-range or non-integer limits are rejected, not clamped."""
        with pytest.raises(DiscoveryError, match="limit must be an integer from 1 to 50") as info:
            service.search_tool_by_category("bucket", limit=cast("int", limit))
        assert info.value.code == "INVALID_REQUEST"
        assert info.value.next_action == "repeat the request with a limit between 1 and 50"


class TestSearchNodes:
    def test_categories_are_ranked_with_summary_and_count(self, service: ToolDiscovery) -> None:
        """The seed's example: an auth query finds the Auth category first."""
        response = service.search_nodes("oauth login")
        first = response.results[0]
        assert first.path == ("User", "Auth")
        assert first.summary == "Authentication and authorization workflows"
        assert first.tool_count == 2
        assert 0 < first.confidence <= 1

    def test_the_limit_caps_the_results(self, service: ToolDiscovery) -> None:
        """At most ``limit`` categories come back, best first."""
        response = service.search_nodes("storage bucket object", limit=1)
        assert response.results == (
            NodeMatch(
                path=("Storage", "Buckets"),
                summary="Create and manage object storage buckets",
                confidence=response.results[0].confidence,
                tool_count=4,
            ),
        )

    def test_no_matching_category_offers_the_roots(self, service: ToolDiscovery) -> None:
        """NO_MATCH_IN_CATEGORY at the root, with top-level categories as hints."""
        with pytest.raises(DiscoveryError, match="no category matches 'zebra'") as info:
            service.search_nodes("zebra")
        assert info.value.code == "NO_MATCH_IN_CATEGORY"
        assert info.value.path == ()
        assert info.value.hints[0].path == ("Coding",)
        assert info.value.next_action.startswith("call list(path=[]) to browse")

    def test_the_query_and_limit_are_validated(self, service: ToolDiscovery) -> None:
        """search_nodes shares the request checks."""
        with pytest.raises(DiscoveryError, match="INVALID_REQUEST"):
            service.search_nodes(" ")
        with pytest.raises(DiscoveryError, match="INVALID_REQUEST"):
            service.search_nodes("bucket", limit=99)
