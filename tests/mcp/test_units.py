"""Pure pieces of the client: result reading, error mapping, server specs."""

from __future__ import annotations

import asyncio
from typing import cast

import httpx2
import mcp.types as types
import pytest
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError as SDKError
from pydantic import BaseModel, ValidationError

from weakincentives.discovery import CallOutcome
from weakincentives.errors import ConfigValidationError
from weakincentives.mcp import (
    HttpServer,
    MCPConnectionError,
    MCPError,
    MCPProtocolError,
    MCPTimeoutError,
    StdioServer,
    parse_server,
)
from weakincentives.mcp._hooks import ClientHooks, SessionHooks
from weakincentives.mcp._mapping import mapped
from weakincentives.mcp._results import MAX_RESULT_CHARS, outcome_of


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


class TestOutcomeOf:
    def test_text_blocks_join_into_the_message(self) -> None:
        """Several text blocks are one message, one per line."""
        result = types.CallToolResult(content=[_text("a"), _text("b")])
        assert outcome_of(result, tool_name="t") == CallOutcome(success=True, message="a\nb")

    def test_structured_content_is_the_value(self) -> None:
        """structuredContent wins over other blocks as the value."""
        result = types.CallToolResult(
            content=[_text("3")], structured_content={"sum": 3, "parts": [1, 2]}
        )
        assert outcome_of(result, tool_name="t") == CallOutcome(
            success=True, message="3", value={"sum": 3, "parts": [1, 2]}
        )

    def test_an_empty_result_says_so(self) -> None:
        """No blocks at all still gives the model a sentence."""
        result = types.CallToolResult(content=[])
        assert outcome_of(result, tool_name="t").message == "t returned nothing"

    def test_is_error_without_text_names_the_tool(self) -> None:
        """An error with no explanation is still a failure the model can read."""
        result = types.CallToolResult(content=[], is_error=True)
        assert outcome_of(result, tool_name="srv.t") == CallOutcome(
            success=False, message="srv.t reported an error without saying why"
        )

    def test_long_text_is_cut(self) -> None:
        """Megabytes of text do not reach the model."""
        result = types.CallToolResult(content=[_text("x" * (MAX_RESULT_CHARS + 5))])
        message = outcome_of(result, tool_name="t").message
        assert message.endswith("... (5 more characters not shown)")
        assert len(message) == MAX_RESULT_CHARS + len("... (5 more characters not shown)")


class _Shape(BaseModel):
    count: int


def _validation_error() -> ValidationError:
    try:
        _Shape.model_validate({"count": "many"})
    except ValidationError as exc:
        return exc
    raise AssertionError("the model accepted a bad value")


class TestMapped:
    @pytest.mark.parametrize(
        ("exc", "kind", "reason"),
        [
            (
                SDKError(code=types.REQUEST_TIMEOUT, message="late"),
                MCPTimeoutError,
                "no answer within 1.5 s",
            ),
            (TimeoutError(), MCPTimeoutError, "no answer within 1.5 s"),
            (
                SDKError(code=types.CONNECTION_CLOSED, message="gone"),
                MCPConnectionError,
                "the connection closed before the server answered (did the server exit?)",
            ),
            (
                SDKError(code=types.METHOD_NOT_FOUND, message="no tools here"),
                MCPProtocolError,
                "the server answered with error -32601: no tools here",
            ),
            (
                ConnectionRefusedError("refused"),
                MCPConnectionError,
                "cannot reach the server: ConnectionRefusedError: refused",
            ),
            (
                httpx2.ConnectError("no route"),
                MCPConnectionError,
                "cannot reach the server: ConnectError: no route",
            ),
            (
                httpx2.DecodingError("bad gzip"),
                MCPConnectionError,
                "HTTP failure: DecodingError: bad gzip",
            ),
            (
                RuntimeError("Invalid structured content returned by tool t"),
                MCPProtocolError,
                "RuntimeError: Invalid structured content returned by tool t",
            ),
        ],
    )
    def test_each_sdk_failure_has_a_typed_error(
        self, exc: BaseException, kind: type[MCPError], reason: str
    ) -> None:
        """The error class and reason say what happened, with server and step named."""
        error = mapped(exc, "srv", "call_tool", 1.5)
        assert type(error) is kind
        assert error.reason == reason
        assert str(error) == f"MCP server 'srv' (call_tool): {reason}"

    def test_a_reply_that_breaks_the_schema_is_a_protocol_error(self) -> None:
        """Pydantic's validation error becomes a short protocol error."""
        error = mapped(_validation_error(), "srv", "list_tools", None)
        assert isinstance(error, MCPProtocolError)
        assert error.reason.startswith("the server's reply breaks the MCP schema: 1 problem(s)")

    def test_groups_are_unwrapped_and_typed_errors_kept(self) -> None:
        """The first leaf of an exception group decides; our own errors pass through."""
        inner = MCPConnectionError("x", server="a", operation="connect")
        assert (
            mapped(ExceptionGroup("g", [ExceptionGroup("h", [inner])]), "b", "serve", None) is inner
        )

    def test_a_timeout_without_a_limit_reports_zero(self) -> None:
        """An unknown limit is reported as 0 s rather than crashing."""
        error = mapped(TimeoutError(), "srv", "connect", None)
        assert isinstance(error, MCPTimeoutError)
        assert error.timeout == 0.0


class TestParseServer:
    def test_urls_are_http_servers(self) -> None:
        """http and https URLs are streamable-HTTP endpoints."""
        assert parse_server(" https://mcp.example/mcp ") == HttpServer(
            url="https://mcp.example/mcp"
        )

    def test_commands_split_like_a_shell(self) -> None:
        """Quotes group words; nothing runs through a shell."""
        spec = parse_server("python 'my server.py' --flag", name="mine")
        assert spec == StdioServer(command="python", args=("my server.py", "--flag"), name="mine")
        assert spec.label == "mine"
        assert StdioServer(command="a b", args=("c",)).label == "'a b' c"
        assert HttpServer(url="http://h/mcp").label == "http://h/mcp"

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            ("   ", "an MCP server needs a command or an http(s):// URL, got an empty string"),
            (
                "python 'open",
                'cannot read MCP server command "python \'open": No closing quotation',
            ),
        ],
    )
    def test_bad_text_is_a_config_error(self, text: str, message: str) -> None:
        """Empty or unbalanced commands are refused with the text quoted."""
        with pytest.raises(ConfigValidationError) as caught:
            parse_server(text)
        assert caught.value.message == message
        assert caught.value.field_name == "server"


class TestElicitationDefaults:
    @pytest.mark.parametrize("properties", [["name"], "name", 7])
    def test_properties_that_are_not_an_object_leave_the_answer_as_given(
        self, properties: object
    ) -> None:
        """A form whose ``properties`` is not an object has no defaults to fill: no raise."""

        def answer(server: str, request: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"name": "Ada"})

        hooks = SessionHooks(
            ClientHooks(elicitation=answer), server=lambda: "srv", relay=lambda: None
        )
        params = types.ElicitRequestFormParams(
            message="Who?", requested_schema={"type": "object", "properties": properties}
        )
        answered = asyncio.run(hooks.elicit(cast(ClientRequestContext, None), params))
        assert answered == types.ElicitResult(action="accept", content={"name": "Ada"})
