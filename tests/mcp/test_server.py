"""A catalogue served over MCP: the official client talks to build_server over HTTP."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.mcp.conftest import HttpFactory
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogTool,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
)
from weakincentives.mcp import build_server
from weakincentives.mcp._serve import DISCOVERY_TOOL_NAMES, answer
from weakincentives.serde import JSONValue

SCHEMA: dict[str, JSONValue] = {
    "type": "object",
    "properties": {"service": {"type": "string"}},
    "required": ["service"],
}
CATALOG = ToolCatalog(
    tools=[
        CatalogTool(
            tool_id=f"ops.restart_{index}",
            name=f"restart_{index}",
            paths=(("Ops", "Services"),),
            summary=f"Restart service group {index}",
            args_schema=SCHEMA,
        )
        for index in range(7)
    ]
    + [
        CatalogTool(
            tool_id="ops.read_secret",
            name="read_secret",
            paths=(("Ops", "Secrets"),),
            summary="Read a secret value",
        ),
        CatalogTool(
            tool_id="ops.rotate",
            name="rotate_keys",
            paths=(("Ops", "Secrets"),),
            summary="Rotate the signing keys",
        ),
    ]
)


def _restart(arguments: Mapping[str, JSONValue]) -> CallOutcome:
    if arguments["service"] == "db":
        return CallOutcome(success=False, message="db is locked")
    return CallOutcome(success=True, message="restarted", value={"service": arguments["service"]})


def _discovery() -> ToolDiscovery:
    return ToolDiscovery(
        CATALOG,
        access=IdAccessPolicy(hidden=frozenset({"ops.read_secret"})),
        executor=CallableExecutor(functions={"ops.restart_0": _restart}),
    )


def _run(
    service: ToolDiscovery, tool: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    return asyncio.run(answer(service, tool, arguments))


class TestAnswer:
    def test_a_listing_comes_as_structured_content_and_the_same_json_text(self) -> None:
        """structuredContent holds the response; the text block is that JSON, compact."""
        result = _run(_discovery(), "list", {"path": ["Ops"]})
        assert result.is_error is False
        assert result.structured_content == {
            "path": ["Ops"],
            "nodes": [
                {
                    "name": "Secrets",
                    "path": ["Ops", "Secrets"],
                    "summary": "",
                    "tags": [],
                    "tool_count": 1,
                },
                {
                    "name": "Services",
                    "path": ["Ops", "Services"],
                    "summary": "",
                    "tags": [],
                    "tool_count": 7,
                },
            ],
            "tools": [],
        }
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        assert json.loads(block.text) == result.structured_content

    def test_discovery_errors_are_is_error_with_hints_and_next_action(self) -> None:
        """An unknown path says so, with the protocol's code, hints and next action."""
        result = _run(_discovery(), "list", {"path": ["Opz"]})
        assert result.is_error is True
        assert result.structured_content is not None
        assert result.structured_content["code"] == "UNKNOWN_PATH"
        assert result.structured_content["hints"][0]["path"] == ["Ops"]
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        lines = block.text.splitlines()
        assert lines[0].startswith("UNKNOWN_PATH: ")
        assert lines[1].startswith("next_action: ")
        assert lines[2] == "hint (category): ['Ops'] 8 tools"

    def test_argument_violations_are_listed(self) -> None:
        """Bad call arguments come back with every violation and its JSON path."""
        result = _run(
            _discovery(), "call_tool", {"tool_id": "ops.restart_0", "arguments": {"service": 3}}
        )
        assert result.is_error is True
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        assert block.text.splitlines()[-1] == "$.service: expected string, got integer"

    def test_a_failed_tool_is_is_error_with_its_message(self) -> None:
        """The executor's failure message is what the client reads."""
        result = _run(
            _discovery(), "call_tool", {"tool_id": "ops.restart_0", "arguments": {"service": "db"}}
        )
        assert result.is_error is True
        assert result.structured_content == {
            "tool_id": "ops.restart_0",
            "success": False,
            "message": "db is locked",
        }

    def test_an_entry_without_an_implementation_is_is_error(self) -> None:
        """Calling a catalogue entry nothing executes says so."""
        result = _run(_discovery(), "call_tool", {"tool_id": "ops.rotate"})
        assert result.is_error is True
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        assert block.text == "no implementation is registered for 'ops.rotate'"

    @pytest.mark.parametrize(
        ("tool", "arguments", "text"),
        [
            (
                "delete_everything",
                {},
                "unknown tool 'delete_everything'; this server's tools are list, "
                "search_tool_by_category, search_nodes, expand_tool, call_tool",
            ),
            (
                "search_nodes",
                {"query": "x", "limit": "many"},
                'invalid arguments for search_nodes: expected an integer, got string "many" at '
                "$.limit while parsing SearchNodesParams",
            ),
            (
                "expand_tool",
                None,
                "invalid arguments for expand_tool: expected a value (required field), got "
                "nothing at $.tool_id while parsing ExpandToolParams",
            ),
        ],
    )
    def test_bad_requests_are_is_error(
        self, tool: str, arguments: dict[str, Any] | None, text: str
    ) -> None:
        """Unknown tools and arguments that do not fit the operation are refused."""
        result = _run(_discovery(), tool, arguments)
        assert result.is_error is True
        assert result.structured_content is None
        (block,) = result.content
        assert isinstance(block, types.TextContent)
        assert block.text == text


async def _session_calls(url: str) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with (
        streamable_http_client(url) as (read, write),
        ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        seen["name"] = initialized.server_info.name
        seen["tools"] = [tool.name for tool in (await session.list_tools()).tools]
        first = await session.call_tool("list", {"path": ["Ops", "Services"], "limit": 4})
        assert first.structured_content is not None
        cursor = first.structured_content["next_cursor"]
        second = await session.call_tool(
            "list", {"path": ["Ops", "Services"], "limit": 4, "cursor": cursor}
        )
        assert second.structured_content is not None
        seen["pages"] = [
            [tool["tool_id"] for tool in page.structured_content["tools"]]
            for page in (first, second)
            if page.structured_content is not None
        ]
        seen["secrets"] = (
            await session.call_tool("list", {"path": ["Ops", "Secrets"]})
        ).structured_content
        seen["search"] = (
            await session.call_tool("search_tool_by_category", {"query": "secret"})
        ).structured_content
        seen["hidden"] = await session.call_tool("expand_tool", {"tool_id": "ops.read_secret"})
        expanded = await session.call_tool("expand_tool", {"tool_id": "ops.restart_0"})
        assert expanded.structured_content is not None
        seen["schema"] = expanded.structured_content["args_schema"]
        seen["call"] = (
            await session.call_tool(
                "call_tool", {"tool_id": "ops.restart_0", "arguments": {"service": "web"}}
            )
        ).structured_content
    return seen


def test_the_official_client_discovers_and_calls_over_http(http_server: HttpFactory) -> None:
    """List (with cursors), search, expand and call through a real streamable-HTTP session."""
    url = http_server(build_server(_discovery(), name="ops-catalogue"))
    seen = asyncio.run(_session_calls(url))
    assert seen["name"] == "ops-catalogue"
    assert seen["tools"] == list(DISCOVERY_TOOL_NAMES)
    assert seen["pages"] == [
        ["ops.restart_0", "ops.restart_1", "ops.restart_2", "ops.restart_3"],
        ["ops.restart_4", "ops.restart_5", "ops.restart_6"],
    ]
    assert seen["schema"] == SCHEMA
    assert seen["call"] == {
        "tool_id": "ops.restart_0",
        "success": True,
        "message": "restarted",
        "value": {"service": "web"},
    }


def test_a_hidden_tool_is_never_visible(http_server: HttpFactory) -> None:
    """The access policy holds over MCP: not listed, not searchable, not expandable."""
    url = http_server(build_server(_discovery()))
    seen = asyncio.run(_session_calls(url))
    assert [tool["tool_id"] for tool in seen["secrets"]["tools"]] == ["ops.rotate"]
    assert "ops.read_secret" not in json.dumps(seen["search"])
    hidden: types.CallToolResult = seen["hidden"]
    assert hidden.is_error is True
    assert hidden.structured_content is not None
    assert hidden.structured_content["code"] == "TOOL_NOT_FOUND"
    assert "ops.read_secret" not in json.dumps(hidden.structured_content["hints"])
