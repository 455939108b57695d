"""Access policies: hidden tools leave no trace, uncallable tools are refused."""

from __future__ import annotations

import pytest

from weakincentives.discovery import (
    CallableExecutor,
    CatalogTool,
    DiscoveryError,
    IdAccessPolicy,
    ToolDiscovery,
)
from weakincentives.discovery._access import AllowAll

from .conftest import ServiceFactory

HIDDEN = frozenset({"storage.put_object", "auth.oauth_login", "auth.reset_password"})


@pytest.fixture
def guarded(make_service: ServiceFactory) -> ToolDiscovery:
    """A service where upload and every User/Auth tool are hidden and delete is uncallable."""
    policy = IdAccessPolicy(hidden=HIDDEN, uncallable=frozenset({"storage.delete_bucket"}))
    return make_service(access=policy, executor=CallableExecutor())


class _CountingPolicy:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def can_see(self, tool: CatalogTool) -> bool:
        self.seen.append(tool.tool_id)
        return True

    def can_call(self, tool: CatalogTool) -> bool:
        return True


class TestHiddenTools:
    def test_hidden_tools_are_not_listed_or_counted(self, guarded: ToolDiscovery) -> None:
        """Listings and node counts ignore hidden tools."""
        storage = guarded.list(path=["Storage", "Buckets"])
        assert "storage.put_object" not in {tool.tool_id for tool in storage.tools}
        counts = {node.name: node.tool_count for node in guarded.list().nodes}
        assert counts["Storage"] == 3

    def test_a_category_of_hidden_tools_disappears(self, guarded: ToolDiscovery) -> None:
        """User/Auth is neither listed, nor searchable, nor listable by path."""
        assert "User" not in {node.name for node in guarded.list().nodes}
        with pytest.raises(DiscoveryError, match="UNKNOWN_PATH"):
            guarded.list(path=["User", "Auth"])
        matches = guarded.search_nodes("authentication authorization credentials")
        assert all(match.path[0] != "User" for match in matches.results)

    def test_hidden_tools_are_never_search_results(self, guarded: ToolDiscovery) -> None:
        """A search for exactly a hidden tool's name does not return it."""
        response = guarded.search_tool_by_category("upload object bucket", limit=50)
        assert HIDDEN.isdisjoint(pointer.tool_id for pointer in response.results)

    def test_hidden_tools_are_never_hints(self, guarded: ToolDiscovery) -> None:
        """No-match hints and did-you-mean suggestions skip hidden tools and categories."""
        with pytest.raises(DiscoveryError) as info:
            guarded.search_tool_by_category("oauth login", category_path=["Coding"])
        assert all(hint.path[0] != "User" for hint in info.value.hints)
        with pytest.raises(DiscoveryError) as info:
            guarded.expand_tool("storage.put_objec")
        assert HIDDEN.isdisjoint(hint.tool_id for hint in info.value.hints)

    @pytest.mark.parametrize("tool_id", ["storage.put_object", "auth.oauth_login"])
    def test_expanding_or_calling_a_hidden_tool_looks_like_a_missing_one(
        self, guarded: ToolDiscovery, tool_id: str
    ) -> None:
        """TOOL_NOT_FOUND with the same message as for an id that never existed."""
        with pytest.raises(DiscoveryError) as hidden:
            guarded.expand_tool(tool_id)
        with pytest.raises(DiscoveryError) as called:
            guarded.call_tool(tool_id, {})
        assert hidden.value.code == called.value.code == "TOOL_NOT_FOUND"
        assert hidden.value.message == f"no tool with id {tool_id!r} is available"

    def test_the_policy_is_asked_once_per_tool(self, make_service: ServiceFactory) -> None:
        """Visibility is cached for the service's lifetime."""
        policy = _CountingPolicy()
        service = make_service(access=policy)
        service.list()
        service.search_tool_by_category("bucket")
        service.list(path=["Storage", "Buckets"])
        assert sorted(policy.seen) == sorted(tool.tool_id for tool in service.catalog.tools)


class TestUncallableTools:
    def test_an_uncallable_tool_is_still_discoverable(self, guarded: ToolDiscovery) -> None:
        """Visible-but-uncallable tools appear in listings."""
        listed = {tool.tool_id for tool in guarded.list(path=["Storage", "Buckets"]).tools}
        assert "storage.delete_bucket" in listed

    def test_expanding_or_calling_it_is_not_authorized(self, guarded: ToolDiscovery) -> None:
        """NOT_AUTHORIZED, with callable alternatives as hints."""
        for attempt in (
            lambda: guarded.expand_tool("storage.delete_bucket"),
            lambda: guarded.call_tool("storage.delete_bucket", {}),
        ):
            with pytest.raises(DiscoveryError, match=r"^NOT_AUTHORIZED") as info:
                attempt()
            error = info.value
            assert error.message == "you are not allowed to use tool 'storage.delete_bucket'"
            assert error.next_action == "choose another tool, for example one of the hinted tools"
            assert error.path == ("Storage", "Buckets")
            hinted = {hint.tool_id for hint in error.hints}
            assert hinted
            assert "storage.delete_bucket" not in hinted
            assert HIDDEN.isdisjoint(hinted)


def test_allow_all_allows_everything(service: ToolDiscovery) -> None:
    """The default policy sees and calls every tool."""
    tool = service.catalog.tools[0]
    assert AllowAll().can_see(tool)
    assert AllowAll().can_call(tool)
    assert IdAccessPolicy(uncallable=frozenset({tool.tool_id})).can_see(tool)
