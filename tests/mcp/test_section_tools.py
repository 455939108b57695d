"""A small server's tools offered to the model directly, as ordinary tools of a section."""

from __future__ import annotations

from typing import Any

import pytest

from tests.mcp.conftest import HttpFactory
from tests.mcp.server_app import build_server
from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.discovery import CatalogTool
from weakincentives.errors import ConfigValidationError
from weakincentives.mcp import HttpServer, MCPToolbox
from weakincentives.mcp._import import MCPToolHandle
from weakincentives.mcp._section_tools import _params_type, section_tools
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.serde import parse, schema


def test_a_model_calls_server_tools_directly(http_server: HttpFactory) -> None:
    """Tools run on the server; isError and bad arguments come back as failures."""
    url = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        tools = toolbox.section_tools("web")
        assert [tool.name for tool in tools] == [
            "echo",
            "add",
            "fail",
            "hang",
            "crash",
            "grow",
            "picture",
        ]
        assert tools[0].description == "Echo: Repeat the given text back."
        section = MarkdownSection(title="Tools", template="Use the tools.", tools=tools[:3])
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(name="add", arguments={"a": 20, "b": 22}),
                        ScriptedCall(name="echo", arguments={"text": "hi"}),
                        ScriptedCall(name="fail", arguments={}),
                        ScriptedCall(name="add", arguments={"a": "x", "b": 1}),
                    )
                ),
                ScriptedTurn(text="done"),
            ]
        )
        response = adapter.evaluate(Prompt(ns="tests/mcp", key="direct", sections=[section]))
    results = [(r.success, r.message, r.value) for r in response.tool_results]
    assert results[:3] == [
        (True, "42", {"sum": 42}),
        (True, "hi", None),
        (False, "the disk is full", None),
    ]
    assert results[3][0] is False
    assert "$.a" in results[3][1]


def test_unknown_servers_and_name_collisions_are_refused(http_server: HttpFactory) -> None:
    """Ask for a server that is not there, or two servers with the same tool names."""
    first = http_server(build_server(name="web"))
    second = http_server(build_server(name="web"))
    with MCPToolbox.open([HttpServer(url=first), HttpServer(url=second)]) as toolbox:
        with pytest.raises(ConfigValidationError, match=r"no MCP server is connected as 'nope'"):
            toolbox.section_tools("nope")
        with pytest.raises(ConfigValidationError, match=r"'web-2.echo' and 'web.echo' would both"):
            toolbox.section_tools()
        foreign = CatalogTool(tool_id="x.y", name="y", paths=(("x",),))
        with pytest.raises(ConfigValidationError, match=r"'x.y' does not come from an MCP server"):
            section_tools(toolbox, [foreign])


def test_params_are_generated_from_the_input_schema() -> None:
    """Types, enums, optional fields, descriptions and awkward names survive the trip."""
    params = _params_type(
        "make-thing",
        {
            "type": "object",
            "properties": {
                "orderId": {"type": "integer", "description": "The order"},
                "class": {"type": "string", "enum": ["a", "b"]},
                "2fa-code": {"type": ["string", "null"]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "rows": {"type": "array", "items": {"type": "object"}},
                "options": {"type": "object"},
                "ratio": {"type": "number"},
                "on": {"type": "boolean"},
                "anything": {},
                "either": {"type": ["string", "integer"]},
            },
            "required": ["orderId", "class"],
        },
    )
    assert params.__name__ == "MakeThingParams"
    wire: dict[str, Any] = schema(params, strict=False)
    properties = wire["properties"]
    assert wire["required"] == ["orderId", "class"]
    assert properties["orderId"] == {"description": "The order", "type": "integer"}
    assert properties["class"] == {"type": "string", "enum": ["a", "b"]}
    assert properties["tags"]["anyOf"][0] == {"type": "array", "items": {"type": "string"}}
    value = parse(
        params,
        {"orderId": 3, "class": "b", "2fa-code": "123", "rows": [{"x": 1}], "either": 4},
    )
    assert (value.orderId, value.f_2fa_code, value.rows, value.either) == (3, "123", [{"x": 1}], 4)


def test_descriptions_are_short_ascii() -> None:
    """Provider tools want 1-200 ASCII characters; long or empty summaries are fixed."""

    def entry(summary: str) -> CatalogTool:
        return CatalogTool(
            tool_id="s.t",
            name="t",
            paths=(("s",),),
            summary=summary,
            handle=MCPToolHandle(server="s", tool_name="t"),
        )

    toolbox = MCPToolbox()
    (long,) = section_tools(toolbox, [entry("é" + "x" * 300)])
    (empty,) = section_tools(toolbox, [entry("")])
    assert long.description == "x" * 197 + "..."
    assert empty.description == "Run t on MCP server s."
