"""How one server's tools are placed in a catalogue (pure: no server needed)."""

from __future__ import annotations

from typing import Any

import mcp.types as types
import pytest

from weakincentives.discovery import CatalogNode
from weakincentives.mcp import ImportProblem
from weakincentives.mcp._import import MAX_SUMMARY_CHARS, server_entries


def _tool(name: str, **fields: Any) -> types.Tool:
    fields.setdefault("input_schema", {"type": "object", "properties": {}})
    return types.Tool(name=name, **fields)


def _paths(tools: list[types.Tool]) -> dict[str, tuple[str, ...]]:
    _, entries, _ = server_entries("srv", "", tools)
    return {entry.name: entry.path for entry in entries}


def test_the_server_is_the_top_category() -> None:
    """The node is named after the server; its summary is the server's first paragraph."""
    node, _, _ = server_entries("github", "GitHub access.\n\nLong notes.", [])
    assert node == CatalogNode(name="github", path=("github",), summary="GitHub access.")


def test_meta_category_wins() -> None:
    """_meta.category (a path string or a list) places the tool exactly."""
    paths = _paths(
        [
            _tool("a", _meta={"category": "Storage / Buckets"}),
            _tool("b", _meta={"category": ["Compute", "VMs"]}),
            _tool("c", _meta={"category": 7}),
        ]
    )
    assert paths == {
        "a": ("srv", "Storage", "Buckets"),
        "b": ("srv", "Compute", "VMs"),
        "c": ("srv",),
    }


def test_an_explicit_namespace_is_a_category_even_on_small_servers() -> None:
    """repo.list and issues/create sit in repo and issues."""
    paths = _paths([_tool("repo.list"), _tool("issues/create"), _tool("ping")])
    assert paths == {
        "repo.list": ("srv", "repo"),
        "issues/create": ("srv", "issues"),
        "ping": ("srv",),
    }


def test_small_servers_are_not_grouped_by_words() -> None:
    """Below six tools, shared words do not make categories."""
    names = ["create_issue", "list_issues", "get_issue", "ping", "pong"]
    assert set(_paths([_tool(name) for name in names]).values()) == {("srv",)}


def test_verb_object_names_group_by_object() -> None:
    """create_issue, list_issues and getIssue share 'issue'; a shared prefix is skipped."""
    names = [
        "gh_create_issue",
        "gh_list_issues",
        "gh_getIssue",
        "gh_merge_pull_request",
        "gh_list_pull_requests",
        "gh_search",
        "gh_label_add",
        "gh_whoami",
    ]
    assert _paths([_tool(name) for name in names]) == {
        "gh_create_issue": ("srv", "issue"),
        "gh_list_issues": ("srv", "issue"),
        "gh_getIssue": ("srv", "issue"),
        "gh_merge_pull_request": ("srv", "pull"),
        "gh_list_pull_requests": ("srv", "pull"),
        "gh_search": ("srv",),
        "gh_label_add": ("srv",),
        "gh_whoami": ("srv",),
    }


def test_singular_forms() -> None:
    """Plurals fold together ('policies' -> 'policy'), but 'status' and 'access' keep theirs."""
    names = [
        "list_policies",
        "get_policy",
        "get_status",
        "set_status",
        "grant_access",
        "revoke_access",
    ]
    assert _paths([_tool(name) for name in names]) == {
        "list_policies": ("srv", "policy"),
        "get_policy": ("srv", "policy"),
        "get_status": ("srv", "status"),
        "set_status": ("srv", "status"),
        "grant_access": ("srv", "access"),
        "revoke_access": ("srv", "access"),
    }


@pytest.mark.parametrize(
    ("title", "description", "summary"),
    [
        (None, "Reads a file.\n\nMore detail.", "Reads a file."),
        ("Read file", "Reads a file.", "Read file: Reads a file."),
        ("Reads", "Reads a file.", "Reads a file."),
        ("Read file", None, "Read file"),
        (None, "word " * 100, ("word " * 100)[: MAX_SUMMARY_CHARS - 3].rstrip() + "..."),
    ],
)
def test_summary_from_title_and_description(
    title: str | None, description: str | None, summary: str
) -> None:
    """The title leads unless the description already says it; long text is cut."""
    _, (entry,), _ = server_entries("srv", "", [_tool("t", title=title, description=description)])
    assert entry.summary == summary


def test_the_annotation_title_is_used_when_the_tool_has_none() -> None:
    """annotations.title stands in for a missing title."""
    tool = _tool("t", annotations=types.ToolAnnotations(title="Nice name"))
    _, (entry,), _ = server_entries("srv", "", [tool])
    assert entry.summary == "Nice name"


def test_annotations_become_tags() -> None:
    """Hints that are set become tags; unset hints add nothing."""
    hints = types.ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
    )
    _, (entry, bare), _ = server_entries(
        "srv", "", [_tool("t", annotations=hints), _tool("u", annotations=types.ToolAnnotations())]
    )
    assert entry.tags == ("destructive", "idempotent", "open-world")
    assert bare.tags == ()


def test_bad_tools_are_left_out_and_reported() -> None:
    """A repeated name or a schema discovery cannot validate skips that tool only."""
    tools = [
        _tool("ok"),
        _tool("ok"),
        _tool("weird", input_schema={"type": "object", "properties": {"x": {"type": "blob"}}}),
        _tool("badpattern", output_schema={"type": "string", "pattern": "("}),
    ]
    _, entries, problems = server_entries("srv", "", tools)
    assert [entry.name for entry in entries] == ["ok"]
    assert problems[0] == ImportProblem(
        server="srv", tool_name="ok", reason="the server lists this name twice"
    )
    assert problems[1] == ImportProblem(
        server="srv",
        tool_name="weird",
        reason="tool 'srv.weird': args_schema.properties.x.type has unknown type 'blob'",
    )
    assert problems[2].tool_name == "badpattern"
    assert "result_schema.pattern '(' is not a valid regular expression" in problems[2].reason
