"""MCP servers over streamable HTTP on loopback as catalogue sources."""

from __future__ import annotations

import asyncio
import threading

import pytest
from mcp import types

from tests.mcp.conftest import HttpFactory, serving_http
from tests.mcp.server_app import build_server
from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.discovery import (
    CallResponse,
    CatalogTool,
    DiscoveryCalled,
    ExpandedTool,
    SearchToolsResponse,
    ToolDiscoverySection,
)
from weakincentives.mcp import (
    HttpServer,
    MCPConnectionError,
    MCPProtocolError,
    MCPToolbox,
    _client_transport,
)
from weakincentives.mcp._connection import MCPConnection
from weakincentives.prompt import Prompt
from weakincentives.runtime import InProcessEventBus, Session


def test_pages_over_http_reach_the_catalogue(http_server: HttpFactory) -> None:
    """Pagination works the same over HTTP; the category is the server's own name."""
    url = http_server(build_server(name="web", page_size=3))
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        assert [tool.tool_id for tool in toolbox.catalog.tools] == [
            "web.echo",
            "web.add",
            "web.fail",
            "web.hang",
            "web.crash",
            "web.grow",
            "web.picture",
        ]
        picture = toolbox.discovery().call_tool("web.picture", {})
        assert (picture.success, picture.message) == (True, "web.picture returned a result")
        assert picture.value == [{"type": "image", "mimeType": "image/png", "bytes": 5}]


def test_list_changed_rebuilds_the_catalogue(http_server: HttpFactory) -> None:
    """notifications/tools/list_changed re-reads the tools; on_change hears the new version."""
    url = http_server(build_server(name="web"))
    rebuilt = threading.Event()
    versions: list[int] = []

    def changed(toolbox: MCPToolbox) -> None:
        versions.append(toolbox.version)
        if toolbox.version > 1:
            rebuilt.set()

    with MCPToolbox.open([HttpServer(url=url)], on_change=changed) as toolbox:
        before = toolbox.catalog
        grown = toolbox.discovery().call_tool("web.grow", {})
        assert grown.message == "added grown_7"
        assert rebuilt.wait(timeout=30)
        assert versions == [1, 2]
        assert before.tool("web.grown_7") is None
        assert toolbox.catalog.tool("web.grown_7") is not None
        assert len(toolbox.catalog) == len(before) + 1


def test_a_whole_toolbox_call_timeout_fails_the_call(http_server: HttpFactory) -> None:
    """With call_timeout set, a tool that never answers is a failed call, not a hang."""
    url = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=url)], call_timeout=0.3) as toolbox:
        hung = toolbox.discovery().call_tool("web.hang", {})
    assert hung.success is False
    assert hung.message == "web.hang failed: MCP server 'web' (call_tool): no answer within 0.3 s"


def test_a_server_that_goes_away_fails_calls() -> None:
    """Calls after the HTTP server stopped fail with the server named; close still works."""
    with serving_http(build_server(name="gone")) as url:
        toolbox = MCPToolbox.open([HttpServer(url=url)])
    answer = toolbox.discovery().call_tool("gone.echo", {"text": "hi"})
    toolbox.close()
    assert answer.success is False
    assert answer.message.startswith("gone.echo failed: MCP server 'gone' (call_tool): ")
    after_close = toolbox.discovery().call_tool("gone.echo", {"text": "hi"})
    assert after_close.message == "gone.echo cannot run: MCP server 'gone' is not connected"


def test_nothing_listening_is_a_connection_error() -> None:
    """A URL where no server listens fails at connect with a typed error."""
    with serving_http(build_server()) as url:
        pass
    with pytest.raises(MCPConnectionError, match=r"\(connect\): cannot reach the server"):
        MCPToolbox.open([HttpServer(url=url)], connect_timeout=10)


def test_a_paginator_that_never_ends_is_a_protocol_error(http_server: HttpFactory) -> None:
    """A cursor that comes back is reported instead of looping forever."""
    url = http_server(build_server(name="loop", page_size=2, loop_cursor=True))
    with pytest.raises(MCPProtocolError, match=r"cursor '0' twice; its pages loop"):
        MCPToolbox.open([HttpServer(url=url)])


def test_servers_with_one_name_get_distinct_categories(http_server: HttpFactory) -> None:
    """Two servers that call themselves 'web' become 'web' and 'web-2'."""
    first = http_server(build_server(name="web", page_size=50))
    second = http_server(build_server(name="web", page_size=50))
    with MCPToolbox.open([HttpServer(url=first), HttpServer(url=second)]) as toolbox:
        assert [node.name for node in toolbox.catalog.children(())] == ["web", "web-2"]
        assert set(toolbox.servers) == {"web", "web-2"}
        assert toolbox.discovery().call_tool("web-2.add", {"a": 1, "b": 1}).value == {"sum": 2}


def test_a_server_name_no_category_can_have_gives_way_to_its_url(
    http_server: HttpFactory,
) -> None:
    """A server calling itself by 600 characters is filed under its URL, not a failed open."""
    url = http_server(build_server(name="n" * 600))
    other = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=url), HttpServer(url=other)]) as toolbox:
        assert [node.name for node in toolbox.catalog.children(())] == [url, "web"]
        assert set(toolbox.servers) == {url, "web"}
        assert toolbox.discovery().call_tool(f"{url}.add", {"a": 1, "b": 1}).value == {"sum": 2}


def test_async_callers_share_one_connection(http_server: HttpFactory) -> None:
    """open_async and execute work on the caller's loop, and discovery awaits the same call."""
    url = http_server(build_server(name="web"))

    async def scenario() -> tuple[str, str]:
        async with await MCPToolbox.open_async([HttpServer(url=url)]) as toolbox:
            tool = toolbox.catalog.tool("web.echo")
            assert tool is not None
            outcome = await toolbox.executor.execute(tool, {"text": "async"})
            called = await toolbox.discovery().call_tool_async("web.echo", {"text": "awaited"})
            return outcome.message, called.message

    assert asyncio.run(scenario()) == ("async", "awaited")


def test_a_model_discovers_and_calls_an_mcp_tool(http_server: HttpFactory) -> None:
    """Through ToolDiscoverySection, an evaluation searches, expands and calls on the server."""
    url = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        section = ToolDiscoverySection(toolbox.discovery())
        prompt = Prompt(ns="tests/mcp", key="discover", sections=[section])
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(name="search_tool_by_category", arguments={"query": "add"}),
                    )
                ),
                ScriptedTurn(
                    calls=(ScriptedCall(name="expand_tool", arguments={"tool_id": "web.add"}),)
                ),
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="call_tool",
                            arguments={"tool_id": "web.add", "arguments": {"a": 20, "b": 22}},
                        ),
                    )
                ),
                ScriptedTurn(text="The sum is 42."),
            ]
        )
        bus = InProcessEventBus()
        session = Session(bus=bus)
        response = adapter.evaluate(prompt, bus=bus, session=session)
    search, expand, call = (execution.result.value for execution in response.tool_executions)
    assert isinstance(search, SearchToolsResponse)
    assert search.results[0].tool_id == "web.add"
    assert isinstance(expand, ExpandedTool)
    assert expand.args_schema["required"] == ["a", "b"]
    assert call == CallResponse(tool_id="web.add", success=True, message="42", value={"sum": 42})
    (called,) = session.select(DiscoveryCalled)
    assert (called.tool_id, called.success) == ("web.add", True)


def test_discovery_source_follows_changes_and_refresh(http_server: HttpFactory) -> None:
    """One service per catalogue: reused while nothing changes, rebuilt after a change."""
    url = http_server(build_server(name="web"))
    rebuilt = threading.Event()
    with MCPToolbox.open(
        [HttpServer(url=url)], on_change=lambda box: rebuilt.set() if box.version == 2 else None
    ) as toolbox:
        source = toolbox.discovery_source(require_expansion=True)
        first = source()
        assert source() is first
        first.expand_tool("web.grow")
        assert first.call_tool("web.grow", {}).message == "added grown_7"
        assert rebuilt.wait(timeout=30)
        second = source()
        assert second is not first
        assert second.catalog.tool("web.grown_7") is not None
        catalog = toolbox.refresh()
        assert toolbox.version == 3
        assert len(catalog) == 8


def test_calls_from_another_event_loop_hop_to_the_connections_loop(
    http_server: HttpFactory,
) -> None:
    """A toolbox opened by a script serves async callers on their own loop too."""
    url = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        tool = toolbox.catalog.tool("web.echo")
        connection = toolbox.connection("web")
        assert tool is not None
        assert connection is not None

        async def elsewhere() -> tuple[str, str]:
            direct = await connection.call_tool("echo", {"text": "direct"})
            block = direct.content[0]
            assert isinstance(block, types.TextContent)
            outcome = await toolbox.executor.execute(tool, {"text": "executor"})
            return block.text, outcome.message

        assert asyncio.run(elsewhere()) == ("direct", "executor")
        assert connection.loop is not None
    assert connection.closed


def test_async_execution_reports_entries_it_cannot_run(http_server: HttpFactory) -> None:
    """execute fails softly for foreign entries and for a closed toolbox."""
    url = http_server(build_server(name="web"))
    foreign = CatalogTool(tool_id="x.y", name="y", paths=(("x",),))

    async def scenario() -> tuple[str, str]:
        toolbox = await MCPToolbox.open_async([HttpServer(url=url)])
        tool = toolbox.catalog.tool("web.echo")
        assert tool is not None
        await toolbox.aclose()
        closed = await toolbox.executor.execute(tool, {"text": "late"})
        unknown = await toolbox.executor.execute(foreign, {})
        return closed.message, unknown.message

    closed, unknown = asyncio.run(scenario())
    assert closed == "web.echo cannot run: MCP server 'web' is not connected"
    assert unknown == (
        "nothing can run 'x.y': it is a catalogue entry without an MCP server or an "
        "implementation behind it"
    )


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            "badshape",
            "web.badshape failed: MCP server 'web' (call_tool): RuntimeError: Invalid structured "
            "content returned by tool badshape: 'many' is not of type 'integer'",
        ),
        (
            "reject",
            "web.reject failed: MCP server 'web' (call_tool): the server answered with error "
            "-32602: no such region",
        ),
    ],
)
def test_protocol_errors_are_failed_calls(
    http_server: HttpFactory, tool: str, message: str
) -> None:
    """A JSON-RPC error or content that breaks outputSchema is a failure the model reads."""
    url = http_server(build_server(name="web", faulty=True))
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        answer = toolbox.discovery().call_tool(f"web.{tool}", {})
    assert (answer.success, answer.message) == (False, message)


def test_a_connection_whose_loop_ended_fails_fast(http_server: HttpFactory) -> None:
    """A connection whose asyncio.run has finished refuses calls instead of hanging."""
    url = http_server(build_server(name="web"))

    async def open_and_close() -> MCPConnection:
        connection = await MCPConnection.open(HttpServer(url=url))
        await connection.aclose()  # leaving it open would leak the SDK's transport tasks
        return connection

    connection = asyncio.run(open_and_close())
    assert connection.closed
    with pytest.raises(MCPConnectionError, match=r"\(call_tool\): the event loop that opened"):
        asyncio.run(connection.call_tool("echo", {"text": "late"}))


@pytest.mark.parametrize("legacy", [True, False], ids=["2025-11-25", "2026-07-28"])
def test_a_listing_over_one_mebibyte_imports_over_http(legacy: bool) -> None:
    """2025-11-25 answers come as server-sent events, which the SDK reads up to 1 MiB;
    the toolbox reads up to 64 MiB (2026-07-28 answers are plain JSON bodies)."""
    server = build_server(name="big", big_listing=2_500_000)
    with serving_http(server, legacy=legacy) as url, MCPToolbox.open([HttpServer(url=url)]) as box:
        bulky = [tool for tool in box.catalog.tools if tool.name.startswith("bulky_")]
        assert len(bulky) == 25
        assert box.problems == ()


def test_an_answer_over_the_event_limit_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Not "did the server exit?": the error names the limit the answer passed."""
    monkeypatch.setattr(_client_transport, "MAX_EVENT_BYTES", 1024 * 1024)
    server = build_server(name="big", big_listing=2_500_000)
    with serving_http(server, legacy=True) as url, pytest.raises(MCPConnectionError) as caught:
        MCPToolbox.open([HttpServer(url=url)])
    assert (caught.value.server, caught.value.operation) == ("big", "list_tools")
    assert caught.value.reason == (
        "the server's answer is larger than the 1,048,576 bytes the client reads in one "
        "server-sent event over HTTP (stdio has no such limit)"
    )
