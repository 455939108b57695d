"""``wink mcp serve``: the official client talks to the command over stdio and HTTP."""

from __future__ import annotations

import asyncio
import io
import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from sse_starlette.sse import AppStatus

from tests.mcp.conftest import SERVER_SCRIPT
from weakincentives._cli import main
from weakincentives._cli._mcp import _catalog_tools
from weakincentives.errors import WinkError

RECORDS = [
    {
        "tool_id": "ops.restart",
        "name": "restart_service",
        "path": ["Ops", "Services"],
        "summary": "Restart a service by name",
        "args_schema": {
            "type": "object",
            "properties": {"service": {"type": "string"}},
            "required": ["service"],
        },
    },
    {
        "tool_id": "ops.secret",
        "name": "read_secret",
        "path": ["Ops", "Secrets"],
        "summary": "Read a secret value",
    },
]
ROOT = Path(__file__).parent.parent.parent


@pytest.fixture
def catalog_file(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in RECORDS) + "\n")
    return path


def _serve_args(catalog: Path, *extra: str) -> list[str]:
    upstream = f"{sys.executable} {SERVER_SCRIPT} --name up"
    return [
        "-m",
        "weakincentives",
        "mcp",
        "serve",
        str(catalog),
        "--upstream",
        upstream,
        "--hide",
        "ops.secret",
        *extra,
    ]


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def _tour(session: ClientSession) -> dict[str, Any]:
    await session.initialize()
    tools = [tool.name for tool in (await session.list_tools()).tools]
    root = await session.call_tool("list", {})
    search = await session.call_tool("search_tool_by_category", {"query": "add two integers"})
    expanded = await session.call_tool("expand_tool", {"tool_id": "up.add"})
    called = await session.call_tool(
        "call_tool", {"tool_id": "up.add", "arguments": {"a": 4, "b": 5}}
    )
    catalogue_only = await session.call_tool(
        "call_tool", {"tool_id": "ops.restart", "arguments": {"service": "web"}}
    )
    secrets = await session.call_tool("search_tool_by_category", {"query": "read secret value"})
    hidden = await session.call_tool("expand_tool", {"tool_id": "ops.secret"})
    return {
        "tools": tools,
        "root": root.structured_content,
        "top": search.structured_content["results"][0]["tool_id"]
        if search.structured_content
        else None,
        "schema": expanded.structured_content["args_schema"]
        if expanded.structured_content
        else None,
        "called": called.structured_content,
        "catalogue_only": (catalogue_only.is_error, _text(catalogue_only)),
        "secrets": json.dumps(secrets.structured_content) + _text(secrets),
        "hidden": (hidden.is_error, _text(hidden).split(":")[0]),
    }


def _check_tour(seen: dict[str, Any]) -> None:
    assert seen["tools"] == [
        "list",
        "search_tool_by_category",
        "search_nodes",
        "expand_tool",
        "call_tool",
    ]
    assert [node["path"] for node in seen["root"]["nodes"]] == [["Ops"], ["up"]]
    assert [node["tool_count"] for node in seen["root"]["nodes"]] == [1, 7]
    assert seen["top"] == "up.add"
    assert seen["schema"]["required"] == ["a", "b"]
    assert seen["called"] == {
        "tool_id": "up.add",
        "success": True,
        "message": "9",
        "value": {"sum": 9},
    }
    assert seen["catalogue_only"] == (
        True,
        "nothing can run 'ops.restart': it is a catalogue entry without an MCP server or an "
        "implementation behind it",
    )
    assert "ops.secret" not in seen["secrets"]
    assert seen["hidden"] == (True, "TOOL_NOT_FOUND")


def test_serve_over_stdio(catalog_file: Path) -> None:
    """Catalogue file plus an upstream server, one stdio connection, hidden tool unseen."""

    async def tour() -> dict[str, Any]:
        params = StdioServerParameters(
            command=sys.executable, args=_serve_args(catalog_file), cwd=str(ROOT)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await _tour(session)

    _check_tour(asyncio.run(tour()))


@pytest.fixture
def http_command(catalog_file: Path) -> Iterator[str]:
    """``wink mcp serve --http 127.0.0.1:0`` as a process; yields the URL it prints."""
    process = subprocess.Popen(
        [sys.executable, *_serve_args(catalog_file, "--http", "127.0.0.1:0")],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline()
        assert line.startswith("serving 9 tools over MCP at http://127.0.0.1:"), line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


def test_serve_over_streamable_http(http_command: str) -> None:
    """The same tour over streamable HTTP on loopback."""

    async def tour() -> dict[str, Any]:
        async with (
            streamable_http_client(http_command) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await _tour(session)

    _check_tour(asyncio.run(tour()))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["mcp", "serve"], "give a CATALOG file, at least one --upstream server, or both"),
        (
            ["mcp", "serve", "nowhere.jsonl"],
            "catalogue file 'nowhere.jsonl' does not exist",
        ),
        (
            ["mcp", "serve", "--upstream", "x", "--http", "localhost:99999"],
            "--http wants HOST:PORT or PORT (such as 127.0.0.1:8000), got 'localhost:99999'",
        ),
        (
            ["mcp", "serve", "--upstream", "x", "--http", "here"],
            "--http wants HOST:PORT or PORT (such as 127.0.0.1:8000), got 'here'",
        ),
        (
            ["mcp", "serve", "--upstream", "x", "--timeout", "0"],
            "--timeout must be a positive number of seconds, got 0.0",
        ),
        (
            ["mcp", "serve", "--upstream", "x", "--timeout", "nan"],
            "--timeout must be a positive number of seconds, got nan",
        ),
        (
            ["mcp", "serve", "--upstream", "/nonexistent/server --stdio", "--timeout", "5"],
            "MCP server '/nonexistent/server --stdio' (connect): cannot reach the server: "
            "FileNotFoundError",
        ),
    ],
)
def test_bad_invocations_exit_with_a_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Wrong arguments and unreachable upstreams end with status 1 and one clear line."""
    assert main(argv) == 1
    assert capsys.readouterr().err.startswith(f"wink: error: {message}")


class TestCatalogueFile:
    def test_a_json_array_is_read_like_json_lines(self, tmp_path: Path) -> None:
        """Both layouts give the same catalogue entries."""
        array = tmp_path / "catalog.json"
        array.write_text(json.dumps(RECORDS, indent=2))
        lines = tmp_path / "catalog.jsonl"
        lines.write_text("\n".join(json.dumps(record) for record in RECORDS))
        assert _catalog_tools(array) == _catalog_tools(lines)
        assert [tool.tool_id for tool in _catalog_tools(array)] == ["ops.restart", "ops.secret"]

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("[{]", "invalid JSON (Expecting property name enclosed in double quotes at line 1"),
            ("[1, 2]", "bad.json item 1: expected a JSON object (one tool record) per item"),
            ("[" * 50_000 + "]" * 50_000, "bad.json: JSON nested more than 128 levels deep"),
            ('[{"tool_id": "a", "x": NaN}]', "NaN is not a JSON number at line 1 column 24"),
        ],
    )
    def test_a_broken_array_is_a_clear_error(self, tmp_path: Path, text: str, message: str) -> None:
        """Malformed arrays name the file and the problem."""
        path = tmp_path / "bad.json"
        path.write_text(text)
        with pytest.raises(WinkError, match=re.escape(message)):
            _catalog_tools(path)


class _Announcing(io.StringIO):
    """A stderr stand-in that says when the server printed its URL (it has no fileno)."""

    def __init__(self) -> None:
        super().__init__()
        self.url = ""
        self.ready = threading.Event()

    def write(self, text: str) -> int:
        if text.startswith("serving "):
            self.url = text.rsplit(" ", 1)[1].strip()
            self.ready.set()
        return super().write(text)


def test_ctrl_c_stops_the_http_server(catalog_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: the command serves until SIGINT, then exits with status 130."""
    stderr = _Announcing()
    monkeypatch.setattr(sys, "stderr", stderr)
    # sse-starlette records uvicorn's exit signal in a process-wide flag that ends every
    # later SSE stream at once; a real process exits here, the test process must reset it.
    monkeypatch.setattr(AppStatus, "should_exit", False)
    seen: list[object] = []

    def client() -> None:
        stderr.ready.wait(timeout=60)
        if not stderr.url:  # the command ended (or never started) without serving
            seen.append("the server never announced itself")
            return

        async def visit() -> None:
            async with (
                streamable_http_client(stderr.url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = await session.call_tool("list", {"path": ["Ops"]})
                seen.append(listed.structured_content)

        try:
            asyncio.run(visit())
        except Exception as exc:  # reported through `seen`, asserted below
            seen.append(exc)
        # Only now, with the server known to be running, is the interrupt ours to send.
        signal.raise_signal(signal.SIGINT)

    visitor = threading.Thread(target=client)
    visitor.start()
    try:
        status = main(["mcp", "serve", str(catalog_file), "--http", "127.0.0.1:0", "--hide", "x"])
    finally:
        stderr.ready.set()  # wake the client if the command ended without serving
        visitor.join()
    assert status == 130
    assert seen == [
        {
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
                    "tool_count": 1,
                },
            ],
            "tools": [],
        }
    ]
    assert stderr.url.startswith("http://127.0.0.1:")
