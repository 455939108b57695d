"""An MCP call made inside an evaluation is stamped by the evaluation's clock and id source."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from tests.mcp.conftest import HttpFactory
from tests.mcp.server_app import build_server
from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.discovery import (
    CallResponse,
    DiscoveryCalled,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.mcp import HttpServer, MCPToolbox
from weakincentives.prompt import Prompt
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked

Y2K = datetime(2000, 1, 1, tzinfo=UTC)


def _call_add(tool_id: str) -> Adapter[OfflineModel]:
    counter = itertools.count(1)
    return Adapter(
        OfflineModel(
            [
                ScriptedTurn(
                    calls=(
                        ScriptedCall(
                            name="call_tool",
                            arguments={"tool_id": tool_id, "arguments": {"a": 20, "b": 22}},
                            call_id="outer",
                        ),
                    )
                ),
                ScriptedTurn(text="42"),
            ]
        ),
        settings=LoopSettings(clock=lambda: Y2K, new_id=lambda: f"id-{next(counter)}"),
    )


def test_an_mcp_entry_called_through_the_section_is_stamped_by_the_evaluation(
    http_server: HttpFactory,
) -> None:
    """The server's tool runs; discovery's record of it uses the evaluation's clock and ids."""
    url = http_server(build_server(name="web"))
    bus = InProcessEventBus()
    session = Session(bus=bus)
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        section = ToolDiscoverySection(toolbox.discovery())
        prompt: Prompt[None] = Prompt(ns="tests/mcp", key="nested", sections=[section])
        response = _call_add("web.add").evaluate(prompt, bus=bus, session=session)
    assert response.tool_executions[0].result.value == CallResponse(
        tool_id="web.add", success=True, message="42", value={"sum": 42}
    )
    (called,) = session.select(DiscoveryCalled)
    assert (called.step_id, called.occurred_at, called.success) == ("id-2", Y2K, True)
    (outer,) = session.select(ToolInvoked)
    assert (outer.call_id, outer.evaluation_id, outer.started_at) == ("outer", "id-1", Y2K)


def test_mcp_tools_in_a_catalogue_run_as_nested_tool_calls(http_server: HttpFactory) -> None:
    """A server's tools filed in a catalogue run through the shared path: a nested ToolInvoked."""
    url = http_server(build_server(name="web"))
    bus = InProcessEventBus()
    session = Session(bus=bus)
    with MCPToolbox.open([HttpServer(url=url)]) as toolbox:
        catalog = ToolCatalog.from_tools([(("web",), tool) for tool in toolbox.section_tools()])
        discovery = ToolDiscovery(catalog)
        prompt: Prompt[None] = Prompt(
            ns="tests/mcp", key="nested-tools", sections=[ToolDiscoverySection(discovery)]
        )
        adapter = _call_add("add")  # catalogue ids of tools are their names
        response = adapter.evaluate(prompt, bus=bus, session=session)
    value = response.tool_executions[0].result.value
    assert isinstance(value, CallResponse)
    assert (value.success, value.value) == (True, {"sum": 42})
    nested, outer = session.select(ToolInvoked)
    assert (nested.call_id, nested.name, nested.evaluation_id) == ("outer/id-3", "add", "id-1")
    assert (nested.started_at, nested.finished_at) == (Y2K, Y2K)
    assert nested.result.value == {"sum": 42}
    assert outer.call_id == "outer"
