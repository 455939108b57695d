"""``wink mcp serve``: serve a tool catalogue over MCP with progressive discovery.

The served catalogue is a catalogue file (whose entries nothing executes), the tools
of upstream MCP servers (executed there), or both. Clients see the five discovery
operations, never the flat list. The MCP SDK is imported only when the command runs,
so the rest of the command line works without the ``mcp`` extra.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import secrets
import signal
import sys
from collections.abc import Coroutine, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from weakincentives._cli._commands import CommandGroup, add_command, add_group
from weakincentives._cli._render import CommandError
from weakincentives.discovery import CatalogTool, IdAccessPolicy, ToolCatalog

if TYPE_CHECKING:
    from mcp import types

__all__ = ["mcp_command", "register"]

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

_HOST_PORT = re.compile(r"^(?:(?P<host>\[[^\]]+\]|[^:\[\]]*):)?(?P<port>\d{1,5})$")


def register(group: CommandGroup) -> None:
    """Add the ``mcp`` group and ``mcp serve`` to the command line."""
    mcp = add_command(
        group,
        "mcp",
        summary="serve tool catalogues over MCP",
        description=(
            "Model Context Protocol commands: serve a catalogue (and upstream MCP servers) "
            "with progressive discovery instead of a flat tool list."
        ),
        examples=("serve tools.jsonl", "serve --upstream 'python my_server.py' --http 8000"),
    )
    serve = add_command(
        add_group(mcp),
        "serve",
        summary="serve a catalogue over MCP with progressive discovery",
        description=(
            "Serve CATALOG (JSON lines or a JSON array of tool records) and the tools of "
            "every --upstream MCP server as one catalogue behind five discovery tools "
            "(list, search_tool_by_category, search_nodes, expand_tool, call_tool). "
            "Stdio by default; --http serves streamable HTTP at /mcp."
        ),
        examples=(
            "tools.jsonl",
            "tools.jsonl --upstream 'python my_server.py' --upstream https://mcp.example/mcp",
            "--upstream 'python my_server.py' --http 127.0.0.1:8000 --hide internal/admin",
        ),
        run=_run,
    )
    serve.add_argument("catalog", nargs="?", default=None, metavar="CATALOG")
    serve.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="SERVER",
        help="an MCP server whose tools join the catalogue: a command (run over stdio) "
        "or an http(s):// URL (repeatable)",
    )
    serve.add_argument(
        "--http",
        default=None,
        metavar="HOST:PORT",
        help="serve streamable HTTP instead of stdio; a bare PORT binds 127.0.0.1 (0: any free)",
    )
    serve.add_argument("--name", default="weakincentives", help="the server name clients see")
    serve.add_argument(
        "--hide", action="append", default=[], metavar="TOOL_ID", help="a tool clients never see"
    )
    serve.add_argument(
        "--no-call",
        action="append",
        default=[],
        metavar="TOOL_ID",
        help="a tool clients may find but not expand or call",
    )
    serve.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds an upstream call (or connection) may take",
    )
    serve.add_argument(
        "--require-expansion",
        action="store_true",
        help="refuse call_tool (NOT_EXPANDED) for a tool the client has not expanded",
    )
    serve.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory (or file:// URI) offered to upstream servers as a root (repeatable)",
    )
    serve.add_argument(
        "--log-level",
        choices=_LOG_LEVELS,
        default="info",
        help="the lowest level of upstream log messages to ask for and pass on (default: info)",
    )


def _run(arguments: argparse.Namespace, out: TextIO) -> int:
    return mcp_command(arguments)


def mcp_command(arguments: argparse.Namespace) -> int:
    """Run ``mcp serve`` until the client disconnects (stdio) or the process is stopped."""
    if arguments.catalog is None and not arguments.upstream:
        raise CommandError("give a CATALOG file, at least one --upstream server, or both")
    if not arguments.timeout > 0:  # NaN is not > 0 either
        raise CommandError(
            f"--timeout must be a positive number of seconds, got {arguments.timeout}"
        )
    address = _address(arguments.http) if arguments.http is not None else None
    tools = _catalog_tools(Path(arguments.catalog)) if arguments.catalog is not None else ()
    try:
        return asyncio.run(_serve(arguments, tools, address))
    except KeyboardInterrupt:  # the interrupt came before the handlers were in place
        return 130


async def _serve(
    arguments: argparse.Namespace,
    tools: Sequence[CatalogTool],
    address: tuple[str, int] | None,
) -> int:
    """Serve until the client leaves (stdio) or SIGINT / SIGTERM; upstreams always close.

    Returns the exit status: 0, or 128 plus the number of the signal that stopped it.
    """
    from weakincentives.mcp import (  # noqa: PLC0415 - the mcp extra is optional
        MCPToolbox,
        build_server,
        parse_server,
    )

    upstreams = [parse_server(text) for text in arguments.upstream]
    with _signals() as stop:
        async with await MCPToolbox.open_async(
            upstreams,
            tools=tools,
            connect_timeout=arguments.timeout,
            call_timeout=arguments.timeout,
            errlog=sys.stderr,
            sampling=_no_sampling,
            roots=arguments.root or None,
            log_level=arguments.log_level,
        ) as toolbox:
            for problem in toolbox.problems:
                sys.stderr.write(
                    f"skipped {problem.server}/{problem.tool_name}: {problem.reason}\n"
                )
            access = IdAccessPolicy(
                hidden=frozenset(arguments.hide), uncallable=frozenset(arguments.no_call)
            )
            source = toolbox.discovery_source(
                access=access,
                cursor_secret=secrets.token_bytes(32),
                require_expansion=arguments.require_expansion,
            )
            server = build_server(source, name=arguments.name, upstream=toolbox)
            await _until_stopped(_serving(server, len(toolbox.catalog), address, arguments), stop)
        return 128 + stop.signal if stop.signal else 0


async def _serving(
    server: Any, count: int, address: tuple[str, int] | None, arguments: argparse.Namespace
) -> None:
    from weakincentives.mcp import bind_http, serve_http, serve_stdio  # noqa: PLC0415

    if address is None:
        sys.stderr.write(f"serving {count} tools over MCP on stdio\n")
        await serve_stdio(server)
        return
    try:
        listener = bind_http(*address)
    except OSError as exc:
        raise CommandError(f"cannot listen on {arguments.http}: {exc}") from exc

    def ready(url: str) -> None:
        sys.stderr.write(f"serving {count} tools over MCP at {url}\n")
        sys.stderr.flush()

    with listener:
        await serve_http(server, listener, on_ready=ready)


class _Stop:
    """Set by SIGINT or SIGTERM; remembers which."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.signal = 0

    def __call__(self, number: int) -> None:
        self.signal = self.signal or number
        self.event.set()


@contextlib.contextmanager
def _signals() -> Iterator[_Stop]:
    """SIGINT and SIGTERM stop serving (so upstream servers are closed) instead of the process."""
    stop = _Stop()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for number in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(number, stop, int(number))
        except (RuntimeError, ValueError):  # not the main thread: signals stay as they were
            continue
        installed.append(number)
    try:
        yield stop
    finally:
        for number in installed:
            loop.remove_signal_handler(number)


async def _until_stopped(serving: Coroutine[Any, Any, None], stop: _Stop) -> None:
    """Await ``serving`` until it ends or a signal arrives; then cancel it and wait."""
    task = asyncio.ensure_future(serving)
    waiter = asyncio.ensure_future(stop.event.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    if not task.cancelled():
        task.result()  # the server's own failure, if it had one


async def _no_sampling(server: str, request: types.CreateMessageRequestParams) -> types.ErrorData:
    """Sampling with no client to ask: refused (a calling client that offers it answers instead)."""
    from mcp import types  # noqa: PLC0415 - the mcp extra is optional

    return types.ErrorData(
        code=types.INVALID_REQUEST,
        message="no MCP client that offers sampling is waiting on a call to this server",
    )


def _address(text: str) -> tuple[str, int]:
    match = _HOST_PORT.match(text.strip())
    port = int(match["port"]) if match else -1
    if match is None or port > 65_535:
        raise CommandError(f"--http wants HOST:PORT or PORT (such as 127.0.0.1:8000), got {text!r}")
    host = (match["host"] or "127.0.0.1").strip("[]")
    return host, port


def _catalog_tools(path: Path) -> Sequence[CatalogTool]:
    if not path.is_file():
        raise CommandError(f"catalogue file {str(path)!r} does not exist")
    return ToolCatalog.from_jsonl(path).tools  # JSON lines or a JSON array, both checked
