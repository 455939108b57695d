"""``wink mcp serve`` over real stdio, with hostile catalogues and requests (issue 26).

Each request gets an answer, and each answer is bounded, however long or odd the
request. The official client cannot send text UTF-8 cannot encode, so the surrogate
test writes the JSON-RPC lines itself.
"""

from __future__ import annotations

import asyncio
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

ROOT = Path(__file__).parent.parent.parent
TREE_SCHEMA = {
    "type": "object",
    "properties": {"child": {"$ref": "#"}, "label": {"type": "string"}},
    "additionalProperties": False,
}
RECORDS = [
    *(
        {"tool_id": f"zero.t{k:02d}", "name": f"zero tool {k}", "path": ["Zero"], "summary": "0"}
        for k in range(12)
    ),
    {"tool_id": "tree.walk", "name": "walk_tree", "path": ["Tree"], "args_schema": TREE_SCHEMA},
]
ANSWER_SECONDS = 60.0
"""How long a test waits for an answer that should come at once (never slept)."""


def _serve_argv(catalog: Path) -> list[str]:
    return [sys.executable, "-m", "weakincentives", "mcp", "serve", str(catalog)]


@pytest.fixture
def catalog_file(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(json.dumps(record) for record in RECORDS) + "\n")
    return path


class RawStdio:
    """A JSON-RPC client that writes its own lines to ``wink mcp serve``'s stdin."""

    def __init__(self, argv: list[str]) -> None:
        self._process = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        stdout = self._process.stdout
        assert stdout is not None
        self._pump_thread = threading.Thread(target=self._pump, args=(stdout,), daemon=True)
        self._pump_thread.start()
        self._ids = iter(range(1, 1_000_000))

    def _pump(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self._lines.put(line)

    def _write(self, line: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.write(line + b"\n")
        stdin.flush()

    def request(self, method: str, params: dict[str, Any], *, raw: bytes | None = None) -> Any:
        """Send a request (``raw`` replaces its JSON params) and return its result."""
        number = next(self._ids)
        body = json.dumps(params).encode() if raw is None else raw
        self._write(
            b'{"jsonrpc": "2.0", "id": %d, "method": "%s", "params": %s}'
            % (number, method.encode(), body)
        )
        while True:
            answer = json.loads(self._lines.get(timeout=ANSWER_SECONDS))
            if answer.get("id") == number:
                return answer["result"]

    def exchange(self, line: bytes) -> dict[str, Any]:
        """Write ``line`` as it is and return the server's next message."""
        self._write(line)
        answer: dict[str, Any] = json.loads(self._lines.get(timeout=ANSWER_SECONDS))
        return answer

    def notify(self, method: str) -> None:
        self._write(json.dumps({"jsonrpc": "2.0", "method": method}).encode())

    def close(self) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        stdin.close()
        self._process.wait(timeout=ANSWER_SECONDS)
        self._pump_thread.join(timeout=ANSWER_SECONDS)  # ends at the exited server's EOF
        stdout = self._process.stdout
        assert stdout is not None
        stdout.close()


@pytest.fixture
def raw_server(catalog_file: Path) -> Iterator[RawStdio]:
    client = RawStdio(_serve_argv(catalog_file))
    client.request(
        "initialize",
        {
            "protocolVersion": types.LATEST_PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    )
    client.notify("notifications/initialized")
    yield client
    client.close()


def test_a_query_with_an_encoded_surrogate_pages_over_stdio(raw_server: RawStdio) -> None:
    """A surrogate's UTF-8 bytes in a query with several pages: page 1 and its cursor answer."""
    query = b'"0\xed\xa0\x80 zero"'  # U+D800 as UTF-8 bytes, which stdin reads as U+FFFD

    def page(cursor: str | None) -> dict[str, Any]:
        tail = b"" if cursor is None else b', "cursor": "%s"' % cursor.encode()
        arguments = b'{"query": %s, "limit": 5%s}' % (query, tail)
        params = b'{"name": "search_tool_by_category", "arguments": %s}' % arguments
        result: dict[str, Any] = raw_server.request("tools/call", {}, raw=params)
        assert "isError" not in result or result["isError"] is False
        structured: dict[str, Any] = result["structuredContent"]
        return structured

    first = page(None)
    second = page(first["next_cursor"])
    seen = [hit["tool_id"] for hit in (*first["results"], *second["results"])]
    assert seen == [f"zero.t{k:02d}" for k in range(10)]


async def _call(catalog: Path, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
    params = StdioServerParameters(
        command=sys.executable, args=_serve_argv(catalog)[1:], cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await asyncio.wait_for(session.call_tool(tool, arguments), ANSWER_SECONDS)


def _text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize(
    ("tool", "arguments", "start"),
    [
        (
            "expand_tool",
            {"tool_id": "q" * 200_000},
            f"TOOL_NOT_FOUND: no tool with id '{'q' * 37}...' (200,000 characters; ids have at "
            "most 512) is available",
        ),
        (
            "search_tool_by_category",
            {"query": "zero " * 200_000},
            "INVALID_REQUEST: query must have at most 4,000 characters, got 999,999 starting",
        ),
        (
            "call_tool",
            {"tool_id": "tree.walk", "arguments": {"k" * 100_000 + str(k): k for k in range(50)}},
            "INVALID_ARGUMENTS: arguments for 'tree.walk' are invalid: "
            f"$['{'k' * 37}...']: unexpected property",
        ),
    ],
)
def test_huge_requests_get_short_answers_over_stdio(
    catalog_file: Path, tool: str, arguments: dict[str, Any], start: str
) -> None:
    """A 200,000-character id, a megabyte query, 50 keys of 100,000 characters: short errors.

    The longest is the last: 20 violations kept, each path cut, in the text and the payload.
    """
    result = asyncio.run(_call(catalog_file, tool, arguments))
    assert result.is_error
    assert _text(result).startswith(start)
    assert len(_text(result)) + len(json.dumps(result.structured_content)) < 7_000


def test_arguments_as_deep_as_json_allows_are_checked_over_stdio(catalog_file: Path) -> None:
    """120 levels against a self-referencing schema validate; only the missing runner fails."""
    arguments: dict[str, Any] = {}
    for _ in range(120):
        arguments = {"child": arguments}
    result = asyncio.run(
        _call(catalog_file, "call_tool", {"tool_id": "tree.walk", "arguments": arguments})
    )
    assert result.is_error
    assert _text(result) == (
        "nothing can run 'tree.walk': it is a catalogue entry without an MCP server or an "
        "implementation behind it"
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            b'{"tool_id": "n", "name": "n", "path": ["A"], "args_schema": {"type": "object", '
            b'"properties": {"n": {"type": "number", "maximum": NaN}}}}',
            "bad.jsonl:2: invalid JSON (NaN is not a JSON number at column 130)",
        ),
        (b'{"tool_id": "\xff"}', "bad.jsonl:2: undecodable bytes (invalid start byte at byte 13)"),
        (
            b'{"tool_id": "deep", "name": "d", "path": [' + b'"x", ' * 40 + b'"y"]}',
            "bad.jsonl:2: tool 'deep' has a path of 41 segments (at most 32)",
        ),
    ],
)
def test_a_hostile_catalogue_is_refused_before_serving(
    tmp_path: Path, line: bytes, message: str
) -> None:
    """The serving process exits with one line naming the file's line, and never serves."""
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(json.dumps(RECORDS[0]).encode() + b"\n" + line + b"\n")
    done = subprocess.run(
        _serve_argv(bad), cwd=ROOT, capture_output=True, timeout=ANSWER_SECONDS, check=False
    )
    assert done.returncode == 1
    assert done.stdout == b""
    assert done.stderr.decode().strip().endswith(message)


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _call_line(request_id: int, arguments: bytes) -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", '
        b'"params": {"name": "search_tool_by_category", "arguments": %s}}' % (request_id, arguments)
    )


UNREADABLE = [
    pytest.param(
        _call_line(41, rb'{"query": "0\ud800"}'),
        (41, -32700, "Parse error: "),
        id="lone-surrogate-escape",
    ),
    pytest.param(
        _call_line(42, b'{"query": %s}' % _nested(300)),
        (42, -32700, "Parse error: "),
        id="300-deep",
    ),
    pytest.param(
        _call_line(43, b'{"query": %s}' % _nested(100_000)),
        (43, -32700, "Parse error: "),
        id="100000-deep",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": "q-44", oops', ("q-44", -32700, "Parse error: "), id="broken"
    ),
    pytest.param(b"not json at all", (None, -32700, "Parse error: "), id="text"),
    pytest.param(b'{"id": 45, "hello": 1}', (45, -32600, "Invalid Request: "), id="not-a-message"),
]


@pytest.mark.parametrize(("line", "expected"), UNREADABLE)
def test_an_unreadable_request_is_answered_over_stdio(
    raw_server: RawStdio, line: bytes, expected: tuple[object, int, str]
) -> None:
    """The SDK's reader refuses the line; the client gets a JSON-RPC error, then service goes on."""
    request_id, code, start = expected
    answer = raw_server.exchange(line)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == request_id
    assert answer["error"]["code"] == code
    message = answer["error"]["message"]
    assert message.startswith(start)
    assert len(message) <= len(start) + 200
    listed = raw_server.request("tools/list", {})
    assert len(listed["tools"]) == 5


def test_a_line_longer_than_the_reader_takes_is_answered_over_stdio(raw_server: RawStdio) -> None:
    line = _call_line(46, b'{"query": "%s"}' % (b"x" * (64 * 1024 * 1024)))
    assert raw_server.exchange(line) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error: the line is longer than 64 MiB"},
    }
    assert len(raw_server.request("tools/list", {})["tools"]) == 5


def _handshake_and_list() -> bytes:
    initialize = {
        "protocolVersion": types.LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "file", "version": "0"},
    }
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _answered(stdout: bytes) -> None:
    answers = [json.loads(line) for line in stdout.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2]
    assert len(answers[1]["result"]["tools"]) == 5


def test_stdin_from_a_regular_file_is_read_to_the_end_and_every_request_answered(
    catalog_file: Path, tmp_path: Path
) -> None:
    """Not a pipe (the loop cannot watch a file): read on a thread; nothing pending is dropped."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_handshake_and_list())
    with requests.open("rb") as stdin:
        done = subprocess.run(
            _serve_argv(catalog_file),
            cwd=ROOT,
            stdin=stdin,
            capture_output=True,
            timeout=ANSWER_SECONDS,
            check=True,
        )
    _answered(done.stdout)


def test_stdin_from_dev_null_ends_at_once(catalog_file: Path) -> None:
    """A character device epoll refuses is read like a file: no input, so the server stops.

    The loop took /dev/null for a pipe; epoll then refused it in a callback (a
    PermissionError traceback) and the server waited for input forever.
    """
    done = subprocess.run(
        _serve_argv(catalog_file),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=ANSWER_SECONDS,
        check=True,
    )
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr


def test_requests_written_before_stdin_closes_are_all_answered(catalog_file: Path) -> None:
    """A client that writes its requests and closes stdin at once still gets every answer."""
    done = subprocess.run(
        _serve_argv(catalog_file),
        cwd=ROOT,
        input=_handshake_and_list(),
        capture_output=True,
        timeout=ANSWER_SECONDS,
        check=True,
    )
    _answered(done.stdout)


@pytest.fixture
def served_http(catalog_file: Path) -> Iterator[str]:
    """``wink mcp serve --http 127.0.0.1:0``; yields the endpoint it prints."""
    process = subprocess.Popen(
        [*_serve_argv(catalog_file), "--http", "127.0.0.1:0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        yield process.stderr.readline().rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=ANSWER_SECONDS)
        process.stderr.close()


@pytest.mark.parametrize(
    "arguments",
    [
        rb'{"query": "0\ud800"}',
        b'{"query": %s}' % _nested(300),
        b'{"query": %s}' % _nested(100_000),
    ],
    ids=["lone-surrogate-escape", "300-deep", "100000-deep"],
)
def test_an_unreadable_request_is_answered_over_http(served_http: str, arguments: bytes) -> None:
    """Over streamable HTTP the SDK answers such a body itself: 400 with -32700."""
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2025-11-25",
    }
    with httpx2.Client(timeout=ANSWER_SECONDS) as client:
        response = client.post(served_http, content=_call_line(47, arguments), headers=headers)
    assert response.status_code == 400
    answer = response.json()
    assert (answer["jsonrpc"], answer["id"], answer["error"]["code"]) == ("2.0", None, -32700)
    assert answer["error"]["message"].startswith("Parse error: ")
