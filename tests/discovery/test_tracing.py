"""Each discovery operation is a span (``discovery <operation>``); refusals carry their code."""

from __future__ import annotations

import asyncio

import pytest
from opentelemetry.trace import StatusCode

from tests.conftest import RecordedSpans
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CatalogTool,
    DiscoveryError,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
)
from weakincentives.serde import JSONValue

SCHEMA: dict[str, JSONValue] = {
    "type": "object",
    "properties": {"service": {"type": "string"}},
    "required": ["service"],
}


def _discovery() -> ToolDiscovery:
    catalog = ToolCatalog(
        tools=[
            CatalogTool(
                tool_id="ops.restart_0",
                name="restart_0",
                paths=(("Ops", "Services"),),
                summary="Restart a service",
                args_schema=SCHEMA,
            ),
            CatalogTool(
                tool_id="ops.read_secret",
                name="read_secret",
                paths=(("Ops", "Secrets"),),
                summary="Read a secret value",
            ),
        ]
    )
    return ToolDiscovery(
        catalog,
        access=IdAccessPolicy(hidden=frozenset({"ops.read_secret"})),
        executor=CallableExecutor(
            functions={"ops.restart_0": lambda arguments: CallOutcome(success=True, message="ok")}
        ),
    )


def test_every_operation_has_its_span(spans: RecordedSpans) -> None:
    """list, both searches, expand and call each leave one span, in order."""
    service = _discovery()
    service.list(path=("Ops",))
    service.search_tool_by_category("restart", ())
    service.search_nodes("secrets")
    service.expand_tool("ops.restart_0")
    asyncio.run(service.call_tool_async("ops.restart_0", {"service": "web"}))
    assert [span.name for span in spans.all()] == [
        "discovery list",
        "discovery search_tool_by_category",
        "discovery search_nodes",
        "discovery expand_tool",
        "discovery call_tool",
    ]
    assert {span.status.status_code for span in spans.all()} == {StatusCode.UNSET}
    assert spans.one("discovery expand_tool").attributes == {
        "weakincentives.discovery.operation": "expand_tool",
        "weakincentives.discovery.tool_id": "ops.restart_0",
    }


def test_a_refused_operation_carries_its_code(spans: RecordedSpans) -> None:
    """A DiscoveryError is the span's error.type (its code) and status message."""
    with pytest.raises(DiscoveryError) as caught:
        _discovery().expand_tool("ops.read_secret")
    span = spans.one("discovery expand_tool")
    assert span.attributes["error.type"] == caught.value.code
    assert span.status.description == str(caught.value)


def test_a_refused_call_carries_its_code(spans: RecordedSpans) -> None:
    """An async operation refused the same way."""
    with pytest.raises(DiscoveryError) as caught:
        asyncio.run(_discovery().call_tool_async("ops.nope", {}))
    assert spans.one("discovery call_tool").attributes["error.type"] == caught.value.code


def test_tracing_off_changes_nothing() -> None:
    """Without a provider the operations answer as usual."""
    assert _discovery().expand_tool("ops.restart_0").tool_id == "ops.restart_0"
