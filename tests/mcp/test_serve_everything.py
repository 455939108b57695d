"""``wink mcp serve`` in front of the everything server, talked to by the official client.

The command runs as a real process, over stdio and over streamable HTTP; its
upstream speaks 2026-07-28 or only the 2025 handshake. The official SDK's
``ClientSession`` is the MCP client, with its own elicitation, sampling, logging and
progress callbacks, as an IDE would have.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.mcp.conftest import EVERYTHING_SCRIPT
from tests.mcp.everything_app import HUGE_CHARS, PNG
from weakincentives.mcp._negotiate import PACKAGE_VERSION

ROOT = Path(__file__).parent.parent.parent

type Transport = Literal["stdio", "http"]
SETUPS = [("stdio", False), ("stdio", True), ("http", False), ("http", True)]
IDS = ["stdio", "stdio/2025-upstream", "http", "http/2025-upstream"]


def _argv(legacy: bool, *extra: str) -> list[str]:
    upstream = f"{sys.executable} {EVERYTHING_SCRIPT}" + (" --legacy" if legacy else "")
    return ["-m", "weakincentives", "mcp", "serve", "--upstream", upstream, *extra]


@contextlib.contextmanager
def _http_command(argv: list[str]) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, *argv, "--http", "127.0.0.1:0"],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    try:
        line = process.stderr.readline()
        assert line.startswith("serving "), line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        process.terminate()
        process.wait(timeout=30)
        process.stderr.close()


@dataclass
class Seen:
    """What the official client's callbacks received."""

    elicited: list[types.ElicitRequestParams] = field(default_factory=list)
    sampled: list[types.CreateMessageRequestParams] = field(default_factory=list)
    logs: list[types.LoggingMessageNotificationParams] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    touched: asyncio.Event = field(default_factory=asyncio.Event)


@contextlib.asynccontextmanager
async def served(
    transport: Transport,
    *,
    legacy: bool = False,
    extra: tuple[str, ...] = (),
    sampling: bool = True,
) -> AsyncIterator[tuple[ClientSession, Seen]]:
    """An initialized official client session with ``wink mcp serve``, and its callbacks' log.

    ``sampling=False`` leaves the client without a sampling callback (not offered).
    """
    seen = Seen()

    async def elicit(
        context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        seen.elicited.append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@b.c"})

    async def sample(
        context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        seen.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="hi!"), model="m"
        )

    async def log(params: types.LoggingMessageNotificationParams) -> None:
        seen.logs.append(params)

    async def message(item: object) -> None:
        if isinstance(item, types.ResourceUpdatedNotification):
            seen.updated.append(str(item.params.uri))
            seen.touched.set()

    callbacks: dict[str, Any] = {
        "elicitation_callback": elicit,
        "sampling_callback": sample if sampling else None,
        "logging_callback": log,
        "message_handler": message,
    }
    argv = _argv(legacy, *extra)
    async with contextlib.AsyncExitStack() as stack:
        if transport == "stdio":
            parameters = StdioServerParameters(command=sys.executable, args=argv, cwd=str(ROOT))
            read, write = await stack.enter_async_context(stdio_client(parameters))
        else:
            url = stack.enter_context(_http_command(argv))
            read, write = await stack.enter_async_context(streamable_http_client(url))
        session = await stack.enter_async_context(ClientSession(read, write, **callbacks))
        await session.initialize()
        yield session, seen


def _run[T](coroutine: Any) -> Any:
    return asyncio.run(coroutine)


@pytest.mark.parametrize(("transport", "legacy"), SETUPS, ids=IDS)
class TestServedCalls:
    def test_non_text_content_is_passed_through_as_mcp_content(
        self, transport: Transport, legacy: bool
    ) -> None:
        """call_tool's reply carries the image as an image block, not base64 inside text (D3)."""

        async def go() -> types.CallToolResult:
            async with served(transport, legacy=legacy) as (session, _):
                return await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_multiple_content_types"}
                )

        result = _run(go())
        text, image = result.content
        assert isinstance(text, types.TextContent)
        assert isinstance(image, types.ImageContent)
        assert (image.data, image.mime_type) == (PNG, "image/png")
        assert PNG not in text.text
        assert result.structured_content == {
            "tool_id": "everything.test_multiple_content_types",
            "success": True,
            "message": 'Multiple content types test:\ntest://mixed-content-resource:\n{"test":'
            '"data","value":123}',
            "value": [{"type": "image", "mimeType": "image/png", "bytes": 69}],
        }

    def test_a_catalogue_tool_called_by_name_answers_as_upstream_did(
        self, transport: Transport, legacy: bool
    ) -> None:
        """Direct calls pass the upstream's blocks through unchanged."""

        async def go() -> types.CallToolResult:
            async with served(transport, legacy=legacy) as (session, _):
                return await session.call_tool("test_multiple_content_types", {})

        result = _run(go())
        assert [block.type for block in result.content] == ["text", "image", "resource"]
        assert result.is_error is False

    def test_every_channel_of_a_huge_result_is_bounded(
        self, transport: Transport, legacy: bool
    ) -> None:
        """216,000 characters of text and of structure come back as about 20,000 (D1)."""

        async def go() -> tuple[types.CallToolResult, types.CallToolResult]:
            async with served(transport, legacy=legacy) as (session, _):
                wrapped = await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_huge_result"}
                )
                direct = await session.call_tool("test_huge_result", {})
                return wrapped, direct

        wrapped, direct = _run(go())
        note = (
            f"(the structured result, {HUGE_CHARS + 11:,} characters of JSON, is over the "
            "20,000-character limit and was left out)"
        )
        assert wrapped.structured_content == {
            "tool_id": "everything.test_huge_result",
            "success": True,
            "message": "x" * 20_000
            + f"... ({HUGE_CHARS - 20_000:,} more characters not shown)\n"
            + note,
        }
        assert len(wrapped.model_dump_json(by_alias=True)) < 45_000
        assert direct.structured_content is None
        assert [block.text for block in direct.content if isinstance(block, types.TextContent)] == [
            "x" * 20_000 + f"... ({HUGE_CHARS - 20_000:,} more characters not shown)",
            f"(the structured content, {HUGE_CHARS + 11:,} characters of JSON, is over the "
            "20,000-character limit and was left out)",
        ]

    def test_elicitation_and_sampling_reach_the_calling_client(
        self, transport: Transport, legacy: bool
    ) -> None:
        """The upstream's requests go to the client whose call caused them, and back."""

        async def go() -> tuple[list[str], Seen]:
            async with served(transport, legacy=legacy) as (session, seen):
                elicited = await session.call_tool(
                    "call_tool",
                    {"tool_id": "everything.test_elicitation", "arguments": {"message": "who?"}},
                )
                sampled = await session.call_tool("test_sampling", {"prompt": "say hi"})
                texts = [
                    json.loads(elicited.content[0].text)["message"],  # type: ignore[union-attr]
                    sampled.content[0].text,  # type: ignore[union-attr]
                ]
                return texts, seen

        texts, seen = _run(go())
        assert texts == [
            'Elicitation completed: action=accept, content={"email": "a@b.c", "username": "ada"}',
            "LLM response: hi!",
        ]
        assert [params.message for params in seen.elicited] == ["who?"]
        assert [message.content for message in seen.sampled[0].messages] == [
            types.TextContent(type="text", text="say hi")
        ]

    def test_progress_and_log_messages_reach_the_calling_client(
        self, transport: Transport, legacy: bool
    ) -> None:
        """Upstream notifications of a call are forwarded on that call's stream."""

        async def go() -> tuple[list[tuple[float, float | None]], Seen]:
            reports: list[tuple[float, float | None]] = []

            async def report(progress: float, total: float | None, message: str | None) -> None:
                reports.append((progress, total))

            async with served(transport, legacy=legacy) as (session, seen):
                await session.call_tool(
                    "call_tool",
                    {"tool_id": "everything.test_tool_with_progress"},
                    progress_callback=report,
                )
                await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_tool_with_logging"}
                )
                return reports, seen

        progress, seen = _run(go())
        assert progress == [(0, 100), (50, 100), (100, 100)]
        assert [(log.level, log.data) for log in seen.logs] == [
            ("info", "Tool execution started"),
            ("info", "Tool processing data"),
            ("info", "Tool execution completed"),
        ]


@pytest.mark.parametrize(("transport", "legacy"), SETUPS, ids=IDS)
class TestServedResourcesAndPrompts:
    def test_resources_are_listed_and_read_as_upstream_serves_them(
        self, transport: Transport, legacy: bool
    ) -> None:
        """resources/list, templates, and reads by URI (exact, or through a template)."""

        async def go() -> dict[str, Any]:
            async with served(transport, legacy=legacy) as (session, _):
                listed = await session.list_resources()
                templates = await session.list_resource_templates()
                text = await session.read_resource("test://static-text")
                binary = await session.read_resource("test://static-binary")
                templated = await session.read_resource("test://template/123/data")
                return {
                    "listed": [str(resource.uri) for resource in listed.resources],
                    "templates": [t.uri_template for t in templates.resource_templates],
                    "contents": [text.contents[0], binary.contents[0], templated.contents[0]],
                }

        seen = _run(go())
        assert seen["listed"] == ["test://static-text", "test://static-binary"]
        assert seen["templates"] == ["test://template/{id}/data"]
        text, binary, templated = seen["contents"]
        assert text.text == "This is the content of the static text resource."
        assert (binary.blob, binary.mime_type) == (PNG, "image/png")
        assert json.loads(templated.text) == {
            "id": "123",
            "templateTest": True,
            "data": "Data for ID: 123",
        }

    def test_prompts_and_completions_come_from_upstream(
        self, transport: Transport, legacy: bool
    ) -> None:
        """prompts/list, prompts/get and completion/complete are passed on."""

        async def go() -> tuple[list[str], types.GetPromptResult, list[str]]:
            async with served(transport, legacy=legacy) as (session, _):
                prompts = await session.list_prompts()
                got = await session.get_prompt("test_prompt_with_image")
                completed = await session.complete(
                    types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                    {"name": "arg1", "value": "par"},
                )
                return [p.name for p in prompts.prompts], got, completed.completion.values

        names, got, values = _run(go())
        assert names == [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
        ]
        image = got.messages[0].content
        assert isinstance(image, types.ImageContent)
        assert image.data == PNG
        assert values == ["paris", "park", "party"]

    def test_an_unknown_resource_is_a_not_found_error(
        self, transport: Transport, legacy: bool
    ) -> None:
        """-32002, naming the URI."""

        async def go() -> MCPError:
            async with served(transport, legacy=legacy) as (session, _):
                with pytest.raises(MCPError) as caught:
                    await session.read_resource("test://nowhere")
                return caught.value

        error = _run(go())
        assert (error.code, error.message) == (-32002, "resource not found: test://nowhere")


@pytest.mark.parametrize("transport", ["stdio", "http"])
class TestServedProtocol:
    def test_the_server_reports_the_package_version(self, transport: Transport) -> None:
        """serverInfo.version is the installed weakincentives version (D4)."""

        async def go() -> tuple[str, str]:
            async with served(transport) as (session, _):
                info = session.server_info
                assert info is not None
                return info.name, info.version

        assert _run(go()) == ("weakincentives", PACKAGE_VERSION)
        assert PACKAGE_VERSION.count(".") >= 2

    def test_a_cursor_on_tools_list_is_invalid_params(self, transport: Transport) -> None:
        """The five tools come on one page, so any cursor is -32602 (D5)."""

        async def go() -> MCPError:
            async with served(transport) as (session, _):
                with pytest.raises(MCPError) as caught:
                    await session.list_tools(params=types.PaginatedRequestParams(cursor="c2Vjb25k"))
                return caught.value

        error = _run(go())
        assert (error.code, error.message) == (
            types.INVALID_PARAMS,
            "invalid cursor 'c2Vjb25k': this server lists its 5 tools on one page, so no cursor "
            "is valid",
        )

    def test_structured_content_follows_each_output_schema(self, transport: Transport) -> None:
        """Every served tool declares an outputSchema; answers and failures validate against it."""

        async def go() -> tuple[dict[str, Any], list[tuple[str, Any]]]:
            async with served(transport) as (session, _):
                schemas = {
                    tool.name: tool.output_schema for tool in (await session.list_tools()).tools
                }
                calls: list[tuple[str, dict[str, Any]]] = [
                    ("list", {"path": []}),
                    ("list", {"path": ["nowhere"]}),
                    ("search_tool_by_category", {"query": "image"}),
                    ("search_nodes", {"query": "prompts"}),
                    ("expand_tool", {"tool_id": "everything.test_simple_text"}),
                    ("expand_tool", {"tool_id": "nothing.here"}),
                    ("call_tool", {"tool_id": "everything.test_simple_text"}),
                    ("call_tool", {"tool_id": "everything.test_error_handling"}),
                ]
                answers = [
                    (name, (await session.call_tool(name, arguments)).structured_content)
                    for name, arguments in calls
                ]
                return schemas, answers

        schemas, answers = _run(go())
        assert set(schemas) == {
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        }
        for name, structured in answers:
            assert structured is not None, name
            jsonschema.validate(structured, schemas[name])
        codes = [structured.get("code") for _, structured in answers]
        assert codes == [None, "UNKNOWN_PATH", None, None, None, "TOOL_NOT_FOUND", None, None]

    def test_a_2020_12_schema_reaches_the_client_through_expand_tool(
        self, transport: Transport
    ) -> None:
        """$schema, $defs and additionalProperties arrive unchanged through expand_tool."""

        async def go() -> Any:
            async with served(transport) as (session, _):
                expanded = await session.call_tool(
                    "expand_tool", {"tool_id": "everything.json_schema_2020_12_tool"}
                )
                return expanded.structured_content

        schema = _run(go())["args_schema"]
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$defs"]["address"]["properties"] == {
            "street": {"type": "string"},
            "city": {"type": "string"},
        }
        assert schema["additionalProperties"] is False

    def test_a_hidden_resource_is_neither_listed_nor_readable(self, transport: Transport) -> None:
        """The access policy (--hide) holds for resources served again."""

        async def go() -> list[str]:
            async with served(
                transport, extra=("--hide", "everything.resource:test://static-text")
            ) as (session, _):
                listed = [str(r.uri) for r in (await session.list_resources()).resources]
                with pytest.raises(MCPError) as caught:
                    await session.read_resource("test://static-text")
                assert caught.value.message == "resource not found: test://static-text"
                return listed

        assert _run(go()) == ["test://static-binary"]

    def test_subscriptions_are_passed_on(self, transport: Transport) -> None:
        """resources/subscribe and unsubscribe reach the upstream and answer {}."""

        async def go() -> tuple[types.EmptyResult, types.EmptyResult]:
            async with served(transport) as (session, _):
                subscribed = await session.send_request(
                    types.SubscribeRequest(
                        params=types.SubscribeRequestParams(uri="test://static-text")
                    ),
                    types.EmptyResult,
                )
                unsubscribed = await session.send_request(
                    types.UnsubscribeRequest(
                        params=types.UnsubscribeRequestParams(uri="test://static-text")
                    ),
                    types.EmptyResult,
                )
                return subscribed, unsubscribed

        assert _run(go()) == (types.EmptyResult(), types.EmptyResult())


@pytest.mark.parametrize("transport", ["stdio", "http"])
class TestExpansion:
    def test_descriptions_do_not_claim_expansion_is_required(self, transport: Transport) -> None:
        """By default call_tool runs unexpanded, and no description says otherwise (D7)."""

        async def go() -> tuple[dict[str, str], types.CallToolResult]:
            async with served(transport) as (session, _):
                tools = {t.name: t.description or "" for t in (await session.list_tools()).tools}
                called = await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_simple_text"}
                )
                return tools, called

        tools, called = _run(go())
        assert (
            tools["expand_tool"]
            == "Get a tool's full argument schema, to build call_tool's arguments."
        )
        assert "NOT_EXPANDED" in tools["call_tool"]
        assert called.is_error is False

    def test_require_expansion_is_enforced_when_asked_for(self, transport: Transport) -> None:
        """--require-expansion refuses unexpanded calls with NOT_EXPANDED and its next action."""

        async def go() -> tuple[Any, Any]:
            async with served(transport, extra=("--require-expansion",)) as (session, _):
                refused = await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_simple_text"}
                )
                await session.call_tool("expand_tool", {"tool_id": "everything.test_simple_text"})
                allowed = await session.call_tool(
                    "call_tool", {"tool_id": "everything.test_simple_text"}
                )
                return refused, allowed

        refused, allowed = _run(go())
        assert refused.is_error is True
        assert refused.structured_content["code"] == "NOT_EXPANDED"
        assert (allowed.is_error, allowed.structured_content["message"]) == (
            False,
            "This is a simple text response for testing.",
        )


@pytest.mark.parametrize(("transport", "legacy"), SETUPS, ids=IDS)
def test_resource_updates_reach_the_subscribed_client(transport: Transport, legacy: bool) -> None:
    """subscribe goes upstream (resources/subscribe or a listen stream); updates come back."""

    async def go() -> list[str]:
        async with served(transport, legacy=legacy) as (session, seen):
            await session.send_request(
                types.SubscribeRequest(
                    params=types.SubscribeRequestParams(uri="test://static-text")
                ),
                types.EmptyResult,
            )
            await session.call_tool("test_touch_resource", {})
            async with asyncio.timeout(30):
                await seen.touched.wait()
            await session.send_request(
                types.UnsubscribeRequest(
                    params=types.UnsubscribeRequestParams(uri="test://static-text")
                ),
                types.EmptyResult,
            )
            return seen.updated

    assert _run(go()) == ["test://static-text"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
class TestServedRefusals:
    def test_log_messages_below_the_clients_level_are_not_forwarded(
        self, transport: Transport
    ) -> None:
        """logging/setLevel warning: the upstream's info messages stay upstream."""

        async def go() -> list[Any]:
            async with served(transport) as (session, seen):
                await session.send_request(
                    types.SetLevelRequest(params=types.SetLevelRequestParams(level="warning")),
                    types.EmptyResult,
                )
                await session.call_tool("test_tool_with_logging", {})
                return seen.logs

        assert _run(go()) == []

    def test_sampling_for_a_client_without_it_is_refused(self, transport: Transport) -> None:
        """No client with sampling waits on the call: the upstream hears why."""

        async def go() -> types.CallToolResult:
            async with served(transport, sampling=False) as (session, _):
                return await session.call_tool("test_sampling", {"prompt": "x"})

        result = _run(go())
        assert result.is_error is True
        assert [block.text for block in result.content] == [
            "everything.test_sampling failed: MCP server 'everything' (call_tool): the server "
            "asked for sampling/createMessage, and this client refused: -32600 no MCP client "
            "that offers sampling is waiting on a call to this server"
        ]

    def test_unknown_prompts_references_and_cursors_are_invalid_params(
        self, transport: Transport
    ) -> None:
        """Each is -32602 with a message naming what was wrong."""

        async def go() -> list[tuple[int, str]]:
            errors: list[tuple[int, str]] = []
            async with served(transport) as (session, _):
                attempts = [
                    session.get_prompt("nope"),
                    session.complete(
                        types.PromptReference(type="ref/prompt", name="nope"),
                        {"name": "a", "value": "b"},
                    ),
                    session.list_resources(params=types.PaginatedRequestParams(cursor="x1")),
                ]
                for attempt in attempts:
                    with pytest.raises(MCPError) as caught:
                        await attempt
                    errors.append((caught.value.code, caught.value.message))
            return errors

        assert _run(go()) == [
            (types.INVALID_PARAMS, "unknown prompt 'nope'"),
            (types.INVALID_PARAMS, "nothing to complete: unknown reference"),
            (types.INVALID_PARAMS, "invalid cursor 'x1'"),
        ]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_roots_given_on_the_command_line_reach_upstreams(
    transport: Transport, tmp_path: Path
) -> None:
    """--root DIR is what an upstream's roots/list answers."""

    async def go() -> str:
        async with served(transport, extra=("--root", str(tmp_path))) as (session, _):
            result = await session.call_tool("test_roots", {})
            block = result.content[0]
            assert isinstance(block, types.TextContent)
            return block.text

    assert json.loads(_run(go())) == [tmp_path.resolve().as_uri()]
