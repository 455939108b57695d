"""A small MCP server for the tests, on the official SDK's low-level ``Server``.

Run as a script it serves stdio (``python tests/mcp/server_app.py --page-size 2``);
``build_server`` gives the same server to the in-process streamable-HTTP fixture.
Its tools cover what the client must handle: plain text, structured content with an
output schema, ``isError``, a call that never answers, a process that dies, and a
tool that grows the list and sends ``notifications/tools/list_changed``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError
from mcp.types.version import MODERN_PROTOCOL_VERSIONS


def _object(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


BASE_TOOLS = [
    types.Tool(
        name="echo",
        title="Echo",
        description="Repeat the given text back.\n\nUseful to check the connection.",
        input_schema=_object({"text": {"type": "string"}}, ["text"]),
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema=_object({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"]),
        output_schema=_object({"sum": {"type": "integer"}}, ["sum"]),
    ),
    types.Tool(
        name="fail",
        description="Always reports an error.",
        input_schema=_object({}, []),
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
    types.Tool(name="hang", description="Never answers.", input_schema=_object({}, [])),
    types.Tool(name="crash", description="Kills the server process.", input_schema=_object({}, [])),
    types.Tool(name="grow", description="Adds a tool and says so.", input_schema=_object({}, [])),
    types.Tool(
        name="picture",
        description="Returns an image block.",
        input_schema=_object({}, []),
    ),
]


FAULTY_TOOLS = [
    types.Tool(
        name="badshape",
        description="Returns structured content its output schema forbids.",
        input_schema=_object({}, []),
        output_schema=_object({"sum": {"type": "integer"}}, ["sum"]),
    ),
    types.Tool(
        name="reject",
        description="Answers with a JSON-RPC error.",
        input_schema=_object({}, []),
    ),
]

BURST_TOOLS = [
    types.Tool(
        name="burst",
        description="Sends count list-changed notifications.",
        input_schema=_object({"count": {"type": "integer"}}, ["count"]),
    ),
    types.Tool(name="list_count", description="Counts tools/list.", input_schema=_object({}, [])),
]


def build_server(
    *,
    name: str = "testsrv",
    page_size: int = 100,
    filler: int = 0,
    loop_cursor: bool = False,
    faulty: bool = False,
    task_tool: bool = False,
    deep_category: int = 0,
    burst: bool = False,
    hang_list: bool = False,
    big_listing: int = 0,
    hostile_reads: bool = False,
    extra_tools: tuple[str, ...] = (),
) -> Server[Any]:
    """The test server; ``filler`` adds ``create_issues_*``-style tools to exercise grouping.

    ``loop_cursor`` makes every page point back to the first one, a paginator that
    never ends; ``faulty`` adds tools that break the protocol; ``task_tool`` adds one
    that may only be called as a task, which this server does not offer;
    ``deep_category`` adds a tool whose ``_meta.category`` has that many segments;
    ``burst`` adds ``burst`` (sends ``count`` list-changed notifications, holding every
    ``tools/list`` until the last is sent) and ``list_count`` (how many were served);
    ``hang_list`` makes ``tools/list`` never answer; ``big_listing`` adds tools whose
    descriptions make the listing that many bytes larger; ``hostile_reads`` lists
    resources and prompts the catalogue cannot take (see ``HOSTILE_RESOURCES``);
    ``extra_tools`` adds plain tools of those names.
    """
    tools = list(BASE_TOOLS) + (FAULTY_TOOLS if faulty else [])
    tools.extend(_plain_tool(name) for name in extra_tools)
    if deep_category:
        category = "/".join(f"c{index}" for index in range(deep_category))
        tools.append(
            types.Tool(
                name="deep",
                description="Filed very deep.",
                input_schema=_object({}, []),
                _meta={"category": category},
            )
        )
    if burst:
        tools.extend(BURST_TOOLS)
    for index in range(0, big_listing, 100_000):
        tools.append(
            types.Tool(
                name=f"bulky_{index // 100_000}",
                description="x" * min(100_000, big_listing - index),
                input_schema=_object({}, []),
            )
        )
    listed = [0]
    sent = asyncio.Event()
    sent.set()
    if task_tool:
        tools.append(
            types.Tool(
                name="slow_batch",
                description="Runs only as a task.",
                input_schema=_object({}, []),
                execution=types.ToolExecution(task_support="required"),
            )
        )
    nouns = ("issue", "label", "repo")
    for index in range(filler):
        noun = nouns[index % len(nouns)]
        tools.append(
            types.Tool(
                name=f"create_{noun}s_{index}",
                description=f"Create {noun} number {index}.",
                input_schema=_object({}, []),
            )
        )
    never = asyncio.Event()
    changes = InMemorySubscriptionBus()

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed[0] += 1
        await sent.wait()
        if hang_list:
            await never.wait()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        more = end < len(tools)
        next_cursor = ("0" if loop_cursor else str(end)) if more else None
        return types.ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        if params.name == "echo":
            return _text(str(arguments.get("text", "")))
        if params.name == "add":
            total = int(arguments["a"]) + int(arguments["b"])
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(total))],
                structured_content={"sum": total},
            )
        if params.name == "fail":
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="the disk is full")], is_error=True
            )
        if params.name == "hang":
            await never.wait()
        if params.name == "crash":
            os._exit(3)
        if params.name == "grow":
            grown = f"grown_{len(tools)}"
            tools.append(
                types.Tool(
                    name=grown,
                    description="A tool added at runtime.",
                    input_schema={"type": "object"},
                )
            )
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                await changes.publish(ToolsListChanged())  # 2026-07-28: listen streams only
            else:
                await ctx.session.send_tool_list_changed()
            return _text(f"added {grown}")
        if params.name == "burst":
            sent.clear()
            for _ in range(int(arguments["count"])):
                if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    await changes.publish(ToolsListChanged())
                else:
                    await ctx.session.send_tool_list_changed()
            sent.set()
            return _text(f"sent {arguments['count']}")
        if params.name == "list_count":
            return _text(str(listed[0]))
        if params.name == "badshape":
            return types.CallToolResult(content=[], structured_content={"sum": "many"})
        if params.name == "reject":
            raise MCPError(code=types.INVALID_PARAMS, message="no such region")
        if params.name == "picture":
            return types.CallToolResult(
                content=[types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png")]
            )
        return _text(f"ran {params.name}")

    listen: Any = _refuse if faulty else ListenHandler(changes)
    server: Server[Any] = Server(
        name,
        title="Test server",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=listen,
        **(_HOSTILE_READS if hostile_reads else {}),
    )
    if faulty:  # offers logging and change streams, then refuses them
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _refuse)
    return server


def _plain_tool(name: str) -> types.Tool:
    return types.Tool(name=name, description=f"Plain tool {name}.", input_schema=_object({}, []))


HOSTILE_RESOURCES = [
    types.Resource(uri="file:///" + "a" * 10_000, name="long"),
    types.Resource(uri="file:///fine", name="fine"),
]
"""A URI too long for a catalogue id, and a good one."""
HOSTILE_PROMPTS = [types.Prompt(name=""), types.Prompt(name="greet")]
"""A prompt without a name, and a good one."""


async def _hostile_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=HOSTILE_RESOURCES)


async def _no_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[])


async def _hostile_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=HOSTILE_PROMPTS)


async def _read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=params.uri, text=f"read {params.uri}")]
    )


_HOSTILE_READS: dict[str, Any] = {
    "on_list_resources": _hostile_resources,
    "on_list_resource_templates": _no_templates,
    "on_list_prompts": _hostile_prompts,
    "on_read_resource": _read,
}


async def _refuse(ctx: Any, params: Any) -> Any:
    raise MCPError(code=types.INVALID_REQUEST, message="not today")


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def _serve_stdio(server: Server[Any], legacy: bool) -> None:
    """Serve stdio; ``legacy`` speaks only the handshake era (refusing ``server/discover``)."""
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        if legacy:
            await serve_loop(server, read, write, lifespan_state={}, init_options=options)
        else:
            await server.run(read, write, options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="testsrv")
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--filler", type=int, default=0)
    parser.add_argument("--legacy", action="store_true")
    parser.add_argument("--task-tool", action="store_true")
    parser.add_argument("--deep-category", type=int, default=0)
    parser.add_argument("--burst", action="store_true")
    parser.add_argument("--hang-list", action="store_true")
    parser.add_argument("--hostile-reads", action="store_true")
    parser.add_argument("--extra-tool", action="append", default=[])
    args = parser.parse_args()
    anyio.run(
        _serve_stdio,
        build_server(
            name=args.name,
            page_size=args.page_size,
            filler=args.filler,
            task_tool=args.task_tool,
            deep_category=args.deep_category,
            burst=args.burst,
            hang_list=args.hang_list,
            hostile_reads=args.hostile_reads,
            extra_tools=tuple(args.extra_tool),
        ),
        args.legacy,
    )
