"""MCP servers over stdio as catalogue sources: a real subprocess on the official SDK."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcp.conftest import SERVER_SCRIPT, stdio_spec
from weakincentives.discovery import CatalogTool
from weakincentives.errors import ConfigValidationError
from weakincentives.mcp import MCPConnectionError, MCPTimeoutError, MCPToolbox, StdioServer
from weakincentives.mcp._import import MCPToolHandle


@pytest.fixture(scope="module")
def paged() -> Iterator[MCPToolbox]:
    """One server listing its 13 tools two per page, shared by the read-only tests."""
    with MCPToolbox.open([stdio_spec("--page-size", "2", "--filler", "6")]) as toolbox:
        yield toolbox


def test_every_page_of_tools_list_reaches_the_catalogue(paged: MCPToolbox) -> None:
    """Pagination is followed to the end; tools keep the server's order."""
    assert [tool.name for tool in paged.catalog.tools] == [
        "echo",
        "add",
        "fail",
        "hang",
        "crash",
        "grow",
        "picture",
        "create_issues_0",
        "create_labels_1",
        "create_repos_2",
        "create_issues_3",
        "create_labels_4",
        "create_repos_5",
    ]
    assert paged.problems == ()
    assert paged.version == 1


def test_a_tool_entry_carries_the_servers_description(paged: MCPToolbox) -> None:
    """Id, category, summary, tags, schemas and handle all come from tools/list."""
    echo = paged.catalog.tool("testsrv.echo")
    assert echo == CatalogTool(
        tool_id="testsrv.echo",
        name="echo",
        paths=(("testsrv",),),
        summary="Echo: Repeat the given text back.",
        tags=("read-only", "closed-world"),
        args_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    )
    assert echo.handle == MCPToolHandle(server="testsrv", tool_name="echo")
    add = paged.catalog.tool("testsrv.add")
    assert add is not None
    assert add.result_schema == {
        "type": "object",
        "properties": {"sum": {"type": "integer"}},
        "required": ["sum"],
    }
    node = paged.catalog.node(("testsrv",))
    assert node is not None
    assert node.summary == "Test server"


def test_name_groups_become_subcategories(paged: MCPToolbox) -> None:
    """create_issues_* tools sit under testsrv/issue; the base tools stay at the top."""
    listing = paged.discovery().list(path=("testsrv",), limit=50)
    assert [node.path for node in listing.nodes] == [
        ("testsrv", "issue"),
        ("testsrv", "label"),
        ("testsrv", "repo"),
    ]
    assert [node.tool_count for node in listing.nodes] == [2, 2, 2]


def test_calls_run_on_the_server(paged: MCPToolbox) -> None:
    """call_tool returns the server's text; structured content becomes the value."""
    discovery = paged.discovery()
    echoed = discovery.call_tool("testsrv.echo", {"text": "hello"})
    assert (echoed.success, echoed.message, echoed.value) == (True, "hello", None)
    added = discovery.call_tool("testsrv.add", {"a": 2, "b": 40})
    assert (added.success, added.message, added.value) == (True, "42", {"sum": 42})


def test_is_error_becomes_a_failed_call_the_model_reads(paged: MCPToolbox) -> None:
    """isError results are failures whose message is the server's explanation."""
    failed = paged.discovery().call_tool("testsrv.fail", {})
    assert (failed.success, failed.message) == (False, "the disk is full")


def test_a_call_that_never_answers_times_out(paged: MCPToolbox) -> None:
    """The per-call timeout ends the wait with a typed error naming server and time."""
    connection = paged.connection("testsrv")
    assert connection is not None
    with pytest.raises(MCPTimeoutError, match=r"no answer within 0.2 s") as caught:
        asyncio.run(connection.call_tool("hang", {}, timeout=0.2))
    assert (caught.value.server, caught.value.operation, caught.value.timeout) == (
        "testsrv",
        "call_tool",
        0.2,
    )
    # The connection survives a timed-out call.
    assert paged.discovery().call_tool("testsrv.echo", {"text": "still here"}).success


def test_a_crashing_server_fails_the_call_and_later_calls() -> None:
    """Without reconnection, a server that dies mid-call fails every later call too."""
    with MCPToolbox.open([stdio_spec(name="fragile")], reconnect=False) as toolbox:
        discovery = toolbox.discovery()
        crashed = discovery.call_tool("fragile.crash", {})
        assert crashed.success is False
        assert crashed.message == (
            "fragile.crash failed: MCP server 'fragile' (call_tool): the connection closed "
            "before the server answered (did the server exit?)"
        )
        after = discovery.call_tool("fragile.echo", {"text": "anyone?"})
        assert after.success is False
        assert "the connection closed" in after.message


def test_a_crashed_server_is_started_again_for_the_next_call() -> None:
    """The crashing call fails (it is not repeated); the server then runs again."""
    with MCPToolbox.open([stdio_spec(name="fragile")]) as toolbox:
        first = toolbox.connection("fragile")
        discovery = toolbox.discovery()
        crashed = discovery.call_tool("fragile.crash", {})
        assert crashed.success is False
        assert crashed.message == (
            "fragile.crash failed: MCP server 'fragile' (call_tool): the connection closed "
            "before the server answered (did the server exit?). The connection to the "
            "server was opened again; call the tool again if you still need it."
        )
        again = toolbox.connection("fragile")
        assert again is not None
        assert again is not first
        assert not again.closed
        assert first is not None
        assert first.closed
        after = discovery.call_tool("fragile.echo", {"text": "back"})
        assert (after.success, after.message) == (True, "back")
        assert toolbox.version == 2  # the catalogue was rebuilt from the new listing


def test_async_callers_get_the_same_reconnection() -> None:
    """execute on the toolbox's own loop reconnects there."""

    async def scenario() -> tuple[str, bool, str]:
        async with await MCPToolbox.open_async([stdio_spec(name="fragile")]) as toolbox:
            executor = toolbox.executor
            crash, echo_tool = (
                toolbox.catalog.tool("fragile.crash"),
                toolbox.catalog.tool("fragile.echo"),
            )
            assert crash is not None
            assert echo_tool is not None
            crashed = await executor.execute(crash, {})
            echo = await executor.execute(echo_tool, {"text": "again"})
            return crashed.message, echo.success, echo.message

    crashed, echoed, text = asyncio.run(scenario())
    assert crashed.endswith("call the tool again if you still need it.")
    assert (echoed, text) == (True, "again")


def test_async_callers_on_another_loop_reconnect_on_the_toolboxs_loop() -> None:
    """A toolbox opened for scripts lives on the background loop; async callers elsewhere."""
    with MCPToolbox.open([stdio_spec(name="fragile")]) as toolbox:
        crash, echo_tool = (
            toolbox.catalog.tool("fragile.crash"),
            toolbox.catalog.tool("fragile.echo"),
        )
        assert crash is not None
        assert echo_tool is not None

        async def scenario() -> tuple[str, str]:
            crashed = await toolbox.executor.execute(crash, {})
            echoed = await toolbox.executor.execute(echo_tool, {"text": "here"})
            return crashed.message, echoed.message

        crashed, echoed = asyncio.run(scenario())
    assert crashed.endswith("call the tool again if you still need it.")
    assert echoed == "here"


def test_a_server_that_cannot_start_again_says_so(tmp_path: Path) -> None:
    """When the restart fails, results say why; each later call tries again until it works."""
    script = tmp_path / "server_app.py"
    shutil.copy(SERVER_SCRIPT, script)
    spec = StdioServer(command=sys.executable, args=(str(script),), name="fragile")
    with MCPToolbox.open([spec], connect_timeout=5.0) as toolbox:
        script.unlink()  # the next start of the server fails
        discovery = toolbox.discovery()
        crashed = discovery.call_tool("fragile.crash", {})
        assert crashed.success is False
        assert "(did the server exit?). Opening the connection again failed too: " in (
            crashed.message
        )
        assert "MCP server 'fragile' (connect)" in crashed.message
        later = discovery.call_tool("fragile.echo", {"text": "anyone?"})
        assert later.success is False
        assert later.message.startswith(
            "fragile.echo cannot run: MCP server 'fragile' is not connected, and opening the "
            "connection again failed: MCP server 'fragile' (connect)"
        )
        shutil.copy(SERVER_SCRIPT, script)  # the server can start again: calls recover
        healed = discovery.call_tool("fragile.echo", {"text": "back"})
        assert (healed.success, healed.message) == (True, "back")


@pytest.mark.parametrize("reconnect", [False, True])
def test_async_callers_see_a_failed_or_disabled_reconnection(
    tmp_path: Path, reconnect: bool
) -> None:
    """execute reports a failed restart and retries it; reconnect=False never tries."""
    script = tmp_path / "server_app.py"
    shutil.copy(SERVER_SCRIPT, script)
    spec = StdioServer(command=sys.executable, args=(str(script),), name="fragile")

    async def scenario() -> list[str]:
        toolbox = await MCPToolbox.open_async([spec], reconnect=reconnect)
        async with toolbox:
            script.unlink()
            crash, echo = (
                toolbox.catalog.tool("fragile.crash"),
                toolbox.catalog.tool("fragile.echo"),
            )
            assert crash is not None
            assert echo is not None
            messages = [(await toolbox.executor.execute(crash, {})).message]
            messages.append((await toolbox.executor.execute(echo, {"text": "a"})).message)
            shutil.copy(SERVER_SCRIPT, script)
            messages.append((await toolbox.executor.execute(echo, {"text": "b"})).message)
            return messages

    crashed, while_down, after = asyncio.run(scenario())
    assert "(did the server exit?)" in crashed
    if not reconnect:  # no attempt, so nothing about one, and no recovery
        assert crashed.endswith("(did the server exit?)")
        assert while_down.endswith("(did the server exit?)")
        assert after.endswith("(did the server exit?)")
    else:
        assert "Opening the connection again failed too: MCP server 'fragile' (connect)" in (
            crashed
        )
        assert while_down.startswith(
            "fragile.echo cannot run: MCP server 'fragile' is not connected, and opening"
        )
        assert after == "b"


def test_refreshing_a_server_that_is_not_connected_names_the_connected_ones(
    paged: MCPToolbox,
) -> None:
    """An unknown server name is a ConfigValidationError, as for reconnect, not a KeyError."""
    with pytest.raises(ConfigValidationError) as caught:
        paged.refresh("gone")
    assert caught.value.message == "no MCP server is connected as 'gone'; connected: testsrv"
    assert caught.value.field_name == "server"
    assert paged.version == 1


def test_reconnect_opens_a_healthy_server_again_and_rebuilds() -> None:
    """The public reconnect replaces the connection and re-reads the tools."""
    with MCPToolbox.open([stdio_spec(name="steady")]) as toolbox:
        before = toolbox.connection("steady")
        catalog = toolbox.reconnect("steady")
        assert catalog is toolbox.catalog
        assert toolbox.connection("steady") is not before
        assert toolbox.version == 2
        assert toolbox.discovery().call_tool("steady.echo", {"text": "hi"}).message == "hi"
        with pytest.raises(ConfigValidationError, match="no MCP server is connected as 'gone'"):
            toolbox.reconnect("gone")


def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    """A process that reads stdin and never replies is a timeout at connect."""
    silent = StdioServer(
        command=sys.executable, args=("-c", "import sys; sys.stdin.read()"), name="silent"
    )
    with pytest.raises(MCPTimeoutError, match=r"'silent' \(connect\): no answer within 0.5 s"):
        MCPToolbox.open([silent], connect_timeout=0.5)


def test_a_command_that_does_not_exist_is_a_connection_error() -> None:
    """Spawning fails with a typed error naming the command."""
    missing = StdioServer(command="/nonexistent/mcp-server", args=("--flag",))
    with pytest.raises(MCPConnectionError, match=r"'/nonexistent/mcp-server --flag' \(connect\)"):
        MCPToolbox.open([missing])
