"""The ``list`` operation: navigation, tag and query filters, path errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pytest

from weakincentives.discovery import DiscoveryError, Hint, NodePointer, ToolDiscovery


class TestNavigation:
    def test_root_lists_top_level_categories_with_counts(self, service: ToolDiscovery) -> None:
        """The root holds only categories, in name order, each with its visible tool count."""
        response = service.list()
        assert response.path == ()
        assert response.tools == ()
        assert [(node.name, node.tool_count) for node in response.nodes] == [
            ("Coding", 5),
            ("Rendering", 1),
            ("Security", 1),
            ("Storage", 4),
            ("System", 1),
            ("User", 2),
        ]
        assert response.nodes[0] == NodePointer(
            name="Coding",
            path=("Coding",),
            summary="Work on source code",
            tags=("dev",),
            tool_count=5,
        )
        assert response.next_cursor is None

    def test_a_leaf_category_lists_its_tools_in_name_order(self, service: ToolDiscovery) -> None:
        """Pointers carry id, name, path, summary and tags; no confidence without a query."""
        response = service.list(path=["Storage", "Buckets"])
        assert response.nodes == ()
        assert [tool.name for tool in response.tools] == [
            "create_bucket",
            "delete_bucket",
            "get_object",
            "put_object",
        ]
        put = response.tools[3]
        assert put.tool_id == "storage.put_object"
        assert put.path == ("Storage", "Buckets")
        assert put.summary == "Uploads an object to a bucket"
        assert put.tags == ("storage", "upload")
        assert put.confidence is None

    def test_an_inner_category_lists_child_categories(self, service: ToolDiscovery) -> None:
        """Implied nodes appear with their last segment as name and no summary."""
        response = service.list(path=("Coding",))
        assert [(node.name, node.summary) for node in response.nodes] == [
            ("Quality", ""),
            ("Refactoring", "Restructure code without changing behaviour"),
        ]

    def test_a_dag_tool_is_listed_under_each_of_its_categories(
        self, service: ToolDiscovery
    ) -> None:
        """The pointer's path is the category being listed."""
        (security,) = service.list(path=["Security"]).tools
        (identity,) = service.list(path=["System", "Identity"]).tools
        assert security.tool_id == identity.tool_id == "identity.rotate_credentials"
        assert security.path == ("Security",)
        assert identity.path == ("System", "Identity")


class TestFilters:
    def test_all_given_tags_must_match(self, service: ToolDiscovery) -> None:
        """Tags combine with AND and compare case-insensitively."""
        response = service.list(path=["Storage", "Buckets"], tags=["STORAGE", "upload"])
        assert [tool.tool_id for tool in response.tools] == ["storage.put_object"]

    def test_tags_keep_categories_holding_a_matching_tool(self, service: ToolDiscovery) -> None:
        """A category is listed when some tool beneath it carries every tag."""
        response = service.list(tags=["auth"])
        assert [node.name for node in response.nodes] == ["Security", "System", "User"]
        assert [node.tool_count for node in response.nodes] == [1, 1, 2]

    def test_a_query_filters_and_ranks_tools_in_the_path(self, service: ToolDiscovery) -> None:
        """Only matching tools are listed, best first, with a confidence."""
        response = service.list(path=["Storage", "Buckets"], query="upload a file")
        assert response.tools[0].tool_id == "storage.put_object"
        confidences = [tool.confidence or 0.0 for tool in response.tools]
        assert confidences == sorted(confidences, reverse=True)
        assert all(0 < value <= 1 for value in confidences)

    def test_a_query_ranks_categories_by_what_they_hold(self, service: ToolDiscovery) -> None:
        """At the root, a query keeps the categories whose tools or text match, best first."""
        response = service.list(query="oauth login")
        assert response.nodes[0].path == ("User",)
        assert all(node.path != ("Rendering",) for node in response.nodes)

    def test_a_category_matches_through_its_own_summary(self, service: ToolDiscovery) -> None:
        """Words only found in a category's summary still list it."""
        response = service.list(path=["Coding"], query="restructure behaviour")
        assert [node.name for node in response.nodes] == ["Refactoring"]

    def test_tags_and_query_combine(self, service: ToolDiscovery) -> None:
        """Both filters apply: matching text in an untagged category is not enough."""
        response = service.list(tags=["storage"], query="object bucket")
        assert [node.name for node in response.nodes] == ["Storage"]

    def test_a_blank_query_means_no_query(self, service: ToolDiscovery) -> None:
        """Whitespace is treated as an absent query."""
        assert service.list(query="   ") == service.list()

    def test_a_query_that_matches_nothing_here_points_elsewhere(
        self, service: ToolDiscovery
    ) -> None:
        """NO_MATCH_IN_CATEGORY suggests the categories where the query does match."""
        with pytest.raises(DiscoveryError, match=r"^NO_MATCH_IN_CATEGORY: nothing under") as info:
            service.list(path=["Storage", "Buckets"], query="oauth login")
        error = info.value
        assert error.code == "NO_MATCH_IN_CATEGORY"
        assert error.message == "nothing under ['Storage', 'Buckets'] matches query 'oauth login'"
        assert error.hints[0] == Hint(
            kind="category",
            path=("User", "Auth"),
            summary="Authentication and authorization workflows",
        )
        assert error.next_action.startswith("call search_tool_by_category(query='oauth login'")
        assert error.path == ("Storage", "Buckets")

    def test_tags_that_match_nothing_suggest_dropping_them(self, service: ToolDiscovery) -> None:
        """The recovery for an over-narrow tag filter is to list without tags."""
        with pytest.raises(DiscoveryError, match="matches tags \\['nope'\\]") as info:
            service.list(path=["Coding"], tags=["nope"])
        assert info.value.code == "NO_MATCH_IN_CATEGORY"
        assert info.value.next_action == "call list(path=['Coding']) without tags"
        assert [hint.path for hint in info.value.hints] == [
            ("Coding", "Quality"),
            ("Coding", "Refactoring"),
        ]


class TestPathErrors:
    def test_a_misspelt_category_suggests_the_closest_one(self, service: ToolDiscovery) -> None:
        """UNKNOWN_PATH names the deepest valid prefix and hints near matches."""
        with pytest.raises(DiscoveryError, match=r"^UNKNOWN_PATH: category \['Storge'\]") as info:
            service.list(path=["Storge"])
        error = info.value
        assert error.code == "UNKNOWN_PATH"
        assert (
            error.message == "category ['Storge'] does not exist; the deepest existing part is []"
        )
        assert [hint.path for hint in error.hints] == [("Storage",)]
        assert error.hints[0].summary == "4 tools"
        assert error.next_action == (
            "call list with one of the hinted paths, or list(path=[]) to see what exists there"
        )
        assert error.path == ("Storge",)

    def test_a_wrong_deeper_segment_is_matched_among_siblings(self, service: ToolDiscovery) -> None:
        """The suggestion is looked up under the valid prefix."""
        with pytest.raises(DiscoveryError) as info:
            service.search_tool_by_category("upload", category_path=["Storage", "bucket"])
        assert [hint.path for hint in info.value.hints] == [("Storage", "Buckets")]
        assert info.value.next_action.startswith("call search_tool_by_category with one of")
        assert "list(path=['Storage'])" in info.value.next_action

    def test_nothing_close_at_the_root_suggests_the_largest_roots(
        self, service: ToolDiscovery
    ) -> None:
        """Without a near match, the top-level categories are offered, biggest first."""
        with pytest.raises(DiscoveryError) as info:
            service.list(path=["Zoology"])
        assert [hint.path for hint in info.value.hints] == [
            ("Coding",),
            ("Storage",),
            ("User",),
            ("Rendering",),
            ("Security",),
        ]

    def test_nothing_close_below_the_root_suggests_the_valid_prefix(
        self, service: ToolDiscovery
    ) -> None:
        """A hopeless segment under a real category points back at that category."""
        with pytest.raises(DiscoveryError) as info:
            service.list(path=["Coding", "Zoology", "Deeper"])
        assert [hint.path for hint in info.value.hints] == [("Coding",)]
        assert info.value.hints[0].summary == "Work on source code"

    @pytest.mark.parametrize("path", ["Coding", [1, 2]])
    def test_a_path_must_be_a_list_of_names(self, service: ToolDiscovery, path: object) -> None:
        """A bare string or non-string segments are an INVALID_REQUEST."""
        with pytest.raises(DiscoveryError, match="path must be a list of category names") as info:
            service.list(path=cast("Sequence[str]", path))
        assert info.value.code == "INVALID_REQUEST"

    @pytest.mark.parametrize("tags", ["auth", [1]])
    def test_tags_must_be_a_list_of_strings(self, service: ToolDiscovery, tags: object) -> None:
        """A bare string or non-string tags are an INVALID_REQUEST."""
        with pytest.raises(DiscoveryError, match="tags must be a list of strings") as info:
            service.list(tags=cast("Sequence[str]", tags))
        assert info.value.code == "INVALID_REQUEST"
