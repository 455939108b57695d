"""An upstream MCP server with everything a client may meet, on the official SDK's ``Server``.

It implements what the official conformance suite's server scenarios ask of a server
(the ``test_*`` tools, ``test://`` resources, the ``test_*`` prompts, completions,
logging), so ``make conformance`` can serve it through ``wink mcp serve`` and check
the served catalogue, and the tests can drive every capability through a real
process. Requests to the client (elicitation, sampling, roots) work in both protocol
eras: sent as requests on a 2025 connection, returned as an ``InputRequiredResult``
on a 2026-07-28 one. ``test_task`` may only be called as a task (2025-11-25 tasks).

Run as a script it serves stdio (``--legacy`` speaks only the 2025 handshake); the
tests also mount :func:`build_server` over streamable HTTP.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import struct
import wave
import zlib
from datetime import UTC, datetime
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp.types.version import MODERN_PROTOCOL_VERSIONS


def _png() -> str:
    """A 1x1 red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
    png += chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _wav() -> str:
    """One silent 8 kHz sample as WAV, base64."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(b"\x80")
    return base64.b64encode(buffer.getvalue()).decode()


PNG = _png()
WAV = _wav()
EMPTY: dict[str, Any] = {"type": "object", "properties": {}}
HUGE_CHARS = 216_000
"""The size of ``test_huge_result``'s text and structured content."""


def _tool(
    name: str, description: str, schema: dict[str, Any] | None = None, **extra: Any
) -> types.Tool:
    return types.Tool(name=name, description=description, input_schema=schema or EMPTY, **extra)


def _string_args(*names: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in names},
        "required": list(names),
    }


TOOLS = [
    _tool("test_simple_text", "Returns one text block."),
    _tool("test_image_content", "Returns a PNG image."),
    _tool("test_audio_content", "Returns a WAV sound."),
    _tool("test_embedded_resource", "Returns an embedded text resource."),
    _tool("test_multiple_content_types", "Returns text, an image and a resource."),
    _tool("test_tool_with_logging", "Sends three log messages while it runs."),
    _tool("test_error_handling", "Always fails."),
    _tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100."),
    _tool("test_sampling", "Asks the client's model.", _string_args("prompt")),
    _tool("test_elicitation", "Asks the client's user.", _string_args("message")),
    _tool("test_elicitation_sep1034_defaults", "Asks with default values (SEP-1034)."),
    _tool("test_elicitation_sep1330_enums", "Asks with every enum form (SEP-1330)."),
    _tool("test_roots", "Lists the client's roots."),
    _tool("test_reconnection", "Answers once the client has reconnected."),
    _tool("test_touch_resource", "Says test://static-text changed."),
    _tool("test_huge_result", f"Returns {HUGE_CHARS:,} characters as text and as structure."),
    _tool(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
    _tool(
        "test_task",
        "Runs only as a task (execution.taskSupport: required).",
        _string_args("text"),
        execution=types.ToolExecution(task_support="required"),
    ),
]

RESOURCES = [
    types.Resource(
        uri="test://static-text",
        name="static_text",
        description="A static text resource.",
        mime_type="text/plain",
    ),
    types.Resource(
        uri="test://static-binary",
        name="static_binary",
        description="A static PNG image.",
        mime_type="image/png",
    ),
]
TEMPLATES = [
    types.ResourceTemplate(
        uri_template="test://template/{id}/data",
        name="template_data",
        description="Data for an id.",
        mime_type="application/json",
    )
]
PROMPTS = [
    types.Prompt(name="test_simple_prompt", description="A prompt without arguments."),
    types.Prompt(
        name="test_prompt_with_arguments",
        description="A prompt with two arguments.",
        arguments=[
            types.PromptArgument(name="arg1", description="First argument", required=True),
            types.PromptArgument(name="arg2", description="Second argument", required=True),
        ],
    ),
    types.Prompt(
        name="test_prompt_with_embedded_resource",
        description="A prompt embedding a resource.",
        arguments=[types.PromptArgument(name="resourceUri", required=True)],
    ),
    types.Prompt(name="test_prompt_with_image", description="A prompt with an image."),
]


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


def _modern(ctx: Any) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def _ask(
    ctx: Any, params: types.CallToolRequestParams, request: types.InputRequest, result: type[Any]
) -> Any:
    """Ask the client: a request on 2025 connections, an input round on 2026-07-28 ones."""
    if not _modern(ctx):
        return await ctx.session.send_request(
            request, result, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
    answered = (params.input_responses or {}).get("ask")
    if answered is not None:
        return answered
    return types.InputRequiredResult(input_requests={"ask": request}, request_state="asked")


ENUM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                ]
            },
        },
    },
}
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}


async def _elicited(
    ctx: Any, params: types.CallToolRequestParams, message: str, schema: dict[str, Any]
) -> Any:
    request = types.ElicitRequest(
        params=types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )
    answer = await _ask(ctx, params, request, types.ElicitResult)
    if isinstance(answer, types.InputRequiredResult):
        return answer
    content = json.dumps(answer.content, sort_keys=True)
    return _text(f"Elicitation completed: action={answer.action}, content={content}")


async def _sampled(ctx: Any, params: types.CallToolRequestParams) -> Any:
    prompt = str((params.arguments or {}).get("prompt", ""))
    request = types.CreateMessageRequest(
        params=types.CreateMessageRequestParams(
            messages=[
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=prompt)
                )
            ],
            max_tokens=100,
        )
    )
    answer = await _ask(ctx, params, request, types.CreateMessageResult)
    if isinstance(answer, types.InputRequiredResult):
        return answer
    content = answer.content
    said = content.text if isinstance(content, types.TextContent) else json.dumps(str(content))
    return _text(f"LLM response: {said}")


async def _rooted(ctx: Any, params: types.CallToolRequestParams) -> Any:
    answer = await _ask(ctx, params, types.ListRootsRequest(), types.ListRootsResult)
    if isinstance(answer, types.InputRequiredResult):
        return answer
    return _text(json.dumps([str(root.uri) for root in answer.roots]))


async def _logged(ctx: Any) -> types.CallToolResult:
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.session.send_notification(
            types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level="info", data=message, logger="everything"
                )
            ),
            related_request_id=ctx.request_id,
        )
    return _text("Logged three messages")


async def _progressed(ctx: Any) -> types.CallToolResult:
    for done in (0, 50, 100):
        await ctx.session.report_progress(done, 100, f"{done} of 100")
    return _text("Progress reported")


def _huge() -> types.CallToolResult:
    text = "x" * HUGE_CHARS
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"text": text},
    )


_FIXED: dict[str, types.CallToolResult] = {
    "test_simple_text": _text("This is a simple text response for testing."),
    "test_image_content": types.CallToolResult(
        content=[types.ImageContent(type="image", data=PNG, mime_type="image/png")]
    ),
    "test_audio_content": types.CallToolResult(
        content=[types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]
    ),
    "test_embedded_resource": types.CallToolResult(
        content=[
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://embedded-resource",
                    mime_type="text/plain",
                    text="This is an embedded resource content.",
                ),
            )
        ]
    ),
    "test_multiple_content_types": types.CallToolResult(
        content=[
            types.TextContent(type="text", text="Multiple content types test:"),
            types.ImageContent(type="image", data=PNG, mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text='{"test":"data","value":123}',
                ),
            ),
        ]
    ),
    "test_error_handling": _text(
        "This tool intentionally returns an error for testing", error=True
    ),
    "test_reconnection": _text("Reconnection test completed successfully"),
    "json_schema_2020_12_tool": _text("2020-12 schema tool ran"),
}


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
    """Answer one tool call (tasks are answered in :class:`_Tasks`)."""
    name = params.name
    if name in _FIXED:
        return _FIXED[name]
    if name == "test_tool_with_logging":
        return await _logged(ctx)
    if name == "test_tool_with_progress":
        return await _progressed(ctx)
    if name == "test_sampling":
        return await _sampled(ctx, params)
    if name == "test_elicitation":
        message = str((params.arguments or {}).get("message", "Please answer"))
        return await _elicited(ctx, params, message, _USER_SCHEMA)
    if name == "test_elicitation_sep1034_defaults":
        return await _elicited(ctx, params, "Please accept the defaults", DEFAULTS_SCHEMA)
    if name == "test_elicitation_sep1330_enums":
        return await _elicited(ctx, params, "Please choose", ENUM_SCHEMA)
    if name == "test_roots":
        return await _rooted(ctx, params)
    if name == "test_huge_result":
        return _huge()
    raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")


_USER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


class _Tasks:
    """Task-augmented ``tools/call`` for ``test_task`` (2025-11-25): one working poll, then done.

    The SDK checks that a ``tools/call`` handler returns a ``CallToolResult``, so the
    task answer comes from a middleware that answers before the handler. On
    2026-07-28 connections tasks are not part of the protocol and the tool just runs.
    """

    def __init__(self) -> None:
        self._polls: dict[str, int] = {}
        self._texts: dict[str, str] = {}
        self.changes = InMemorySubscriptionBus()

    def _task(self, task_id: str, status: types.TaskStatus) -> dict[str, Any]:
        now = datetime(2025, 11, 25, tzinfo=UTC).isoformat()
        task = types.Task(
            task_id=task_id,
            status=status,
            created_at=now,
            last_updated_at=now,
            ttl=None,
            poll_interval=10,
        )
        dumped = task.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {**dumped, "ttl": None}  # required, and null means unlimited

    async def call(self, ctx: Any, params: types.CallToolRequestParams) -> Any:
        if params.name == "test_touch_resource":
            if _modern(ctx):  # 2026-07-28: listen streams only
                await self.changes.publish(ResourceUpdated(uri="test://static-text"))
            else:
                await ctx.session.send_resource_updated("test://static-text")
            return _text("touched test://static-text")
        if params.name != "test_task":
            return await call_tool(ctx, params)
        if _modern(ctx):
            return _text(f"ran {(params.arguments or {}).get('text', '')} without a task")
        raise MCPError(code=types.METHOD_NOT_FOUND, message="test_task requires task augmentation")

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        """The middleware: a ``tools/call`` of ``test_task`` with a ``task`` creates one."""
        params = ctx.params or {}
        if ctx.method != "tools/call" or params.get("name") != "test_task" or "task" not in params:
            return await call_next(ctx)
        text = str((params.get("arguments") or {}).get("text", ""))
        if text == "now":  # a server may answer a task request at once
            return {"content": [{"type": "text", "text": "done at once"}]}
        task_id = f"task-{len(self._polls) + 1}"
        self._polls[task_id] = 0
        self._texts[task_id] = text
        return {"task": self._task(task_id, "working")}

    async def get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        self._polls[params.task_id] += 1
        if self._texts[params.task_id] == "fail":
            return {**self._task(params.task_id, "failed"), "statusMessage": "out of disk"}
        return self._task(
            params.task_id, "working" if self._polls[params.task_id] < 2 else "completed"
        )

    async def result(
        self, ctx: Any, params: types.GetTaskPayloadRequestParams
    ) -> types.CallToolResult:
        return _text(f"task {params.task_id} echoed {self._texts[params.task_id]}")


class EverythingServer(Server[Any]):
    """The server; it offers task-augmented ``tools/call`` in its capabilities."""

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        capabilities = super().get_capabilities(*args, **kwargs)
        capabilities.tasks = types.ServerTasksCapability(
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            )
        )
        return capabilities


def build_server(name: str = "everything") -> Server[Any]:
    """The server, with every handler registered."""
    tasks = _Tasks()
    server = EverythingServer(
        name,
        version="1.0.0",
        on_list_tools=lambda ctx, params: _listed(types.ListToolsResult(tools=TOOLS)),
        on_call_tool=tasks.call,
        on_list_resources=lambda ctx, params: _listed(
            types.ListResourcesResult(resources=RESOURCES)
        ),
        on_list_resource_templates=lambda ctx, params: _listed(
            types.ListResourceTemplatesResult(resource_templates=TEMPLATES)
        ),
        on_read_resource=_read,
        on_subscribe_resource=lambda ctx, params: _listed(types.EmptyResult()),
        on_unsubscribe_resource=lambda ctx, params: _listed(types.EmptyResult()),
        on_list_prompts=lambda ctx, params: _listed(types.ListPromptsResult(prompts=PROMPTS)),
        on_get_prompt=_prompt,
        on_completion=_complete,
        on_subscriptions_listen=ListenHandler(tasks.changes),
    )
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, tasks.get)
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, tasks.result)
    server.middleware.append(tasks)
    return server


async def _listed[T](value: T) -> T:
    return value


async def _set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


async def _read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    if uri == "test://static-text":
        contents: Any = types.TextResourceContents(
            uri=uri, mime_type="text/plain", text="This is the content of the static text resource."
        )
    elif uri == "test://static-binary":
        contents = types.BlobResourceContents(uri=uri, mime_type="image/png", blob=PNG)
    elif uri.startswith("test://template/") and uri.endswith("/data"):
        item = uri.removeprefix("test://template/").removesuffix("/data")
        text = json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"})
        contents = types.TextResourceContents(uri=uri, mime_type="application/json", text=text)
    else:
        raise MCPError(code=-32002, message=f"Resource not found: {uri}")
    return types.ReadResourceResult(contents=[contents])


async def _prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    arguments = params.arguments or {}

    def user(content: Any) -> types.PromptMessage:
        return types.PromptMessage(role="user", content=content)

    def text(value: str) -> types.TextContent:
        return types.TextContent(type="text", text=value)

    if params.name == "test_simple_prompt":
        messages = [user(text("This is a simple prompt for testing."))]
    elif params.name == "test_prompt_with_arguments":
        arg1, arg2 = arguments.get("arg1", ""), arguments.get("arg2", "")
        messages = [user(text(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]
    elif params.name == "test_prompt_with_embedded_resource":
        resource = types.TextResourceContents(
            uri=arguments.get("resourceUri", "test://example-resource"),
            mime_type="text/plain",
            text="Embedded resource content for testing.",
        )
        messages = [
            user(types.EmbeddedResource(type="resource", resource=resource)),
            user(text("Please process the embedded resource above.")),
        ]
    elif params.name == "test_prompt_with_image":
        image = types.ImageContent(type="image", data=PNG, mime_type="image/png")
        messages = [user(image), user(text("Please analyze the image above."))]
    else:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown prompt: {params.name}")
    return types.GetPromptResult(messages=messages)


async def _complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
    words = ["paris", "park", "party"] if params.argument.name == "arg1" else []
    values = [word for word in words if word.startswith(params.argument.value)]
    return types.CompleteResult(
        completion=types.Completion(values=values, total=len(values), has_more=False)
    )


async def _serve_stdio(server: Server[Any], legacy: bool) -> None:
    options = server.create_initialization_options(NotificationOptions(resources_changed=True))
    async with stdio_server() as (read, write):
        if legacy:
            await serve_loop(server, read, write, lifespan_state={}, init_options=options)
        else:
            await server.run(read, write, options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="everything")
    parser.add_argument("--legacy", action="store_true")
    args = parser.parse_args()
    anyio.run(_serve_stdio, build_server(args.name), args.legacy)
