"""MCP servers as a discovery catalogue: search, expand and call an MCP tool, offline.

This file is also the MCP server: run with the argument ``serve`` it serves a small
weather toolset over stdio with the official SDK. Run without arguments, it starts
itself as that server, imports the server's tools into a discovery catalogue (a
category named after the server), and lets the scripted offline model search the
catalogue, expand the tool it found and call it on the server.

Run: python examples/mcp_discovery.py   (needs the mcp extra: pip install -e '.[mcp]')
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.discovery import ToolDiscoverySection
from weakincentives.mcp import MCPToolbox, StdioServer
from weakincentives.prompt import MarkdownSection, Prompt


def weather_server() -> MCPServer:
    """A small MCP server with a handful of weather tools."""
    server = MCPServer("weather", instructions="Forecasts, alerts and unit conversions.")
    read_only = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=read_only)
    def get_forecast(city: str, days: int = 1) -> str:
        """Daily weather forecast for a city."""
        return f"{city}: sunny for {days} day(s), highs of 21 C"

    @server.tool(annotations=read_only)
    def list_alerts(region: str) -> str:
        """Active severe-weather alerts for a region."""
        return f"no active alerts for {region}"

    @server.tool(annotations=read_only)
    def convert_temperature(celsius: float) -> str:
        """Convert a temperature from Celsius to Fahrenheit."""
        return f"{celsius * 9 / 5 + 32:.1f} F"

    return server


@dataclass(frozen=True)
class Trip:
    city: str


def main() -> None:
    server = StdioServer(command=sys.executable, args=(__file__, "serve"))
    with MCPToolbox.open([server]) as toolbox:
        print("catalogue:", [tool.tool_id for tool in toolbox.catalog.tools])
        prompt = Prompt(
            ns="examples/mcp",
            key="trip",
            sections=[
                MarkdownSection[Trip](title="Task", template="Tell me the weather in ${city}."),
                ToolDiscoverySection(toolbox.discovery(require_expansion=True)),
            ],
        )
        model = OfflineAdapter(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="search_tool_by_category", arguments={"query": "weather forecast"}
                        ),
                    )
                ),
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="expand_tool", arguments={"tool_id": "weather.get_forecast"}
                        ),
                    )
                ),
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="call_tool",
                            arguments={
                                "tool_id": "weather.get_forecast",
                                "arguments": {"city": "Lisbon", "days": 2},
                            },
                        ),
                    )
                ),
                ScriptedTurn(text="Lisbon will be sunny for the next two days."),
            ]
        )
        response = model.evaluate(prompt.bind(Trip(city="Lisbon")))
    search, expand, call = response.tool_executions
    print("search:", search.result.message)
    print("expand:", expand.result.message)
    print("called:", call.call.name, "->", call.result.message)
    assert call.result.message == "Lisbon: sunny for 2 day(s), highs of 21 C"
    print("answer:", response.text)


if __name__ == "__main__":
    if sys.argv[1:] == ["serve"]:
        weather_server().run()
    else:
        main()
