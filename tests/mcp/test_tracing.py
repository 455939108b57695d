"""Trace context across MCP: ``traceparent`` in ``_meta`` when we call, honoured when we serve.

The official MCP SDK (2.x) implements the OpenTelemetry MCP conventions itself: its
client wraps each request in an ``MCP send <method> <target>`` span and injects the
context into ``params._meta``; its server middleware extracts it as the parent of a
``<method> <target>`` server span. The library adds no MCP spans of its own (the
conventions ask not to duplicate them); what it guarantees is that its own spans are
current when a call is sent and when a served call runs, so one trace goes from the
agent through the served catalogue and back.

The catalogue is served over streamable HTTP by ``build_server`` in this process (on a
uvicorn thread whose contexts are its own): the only way the server's spans can find
the client's as their parent is the ``_meta`` of the ``tools/call`` request.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind, StatusCode

from tests.conftest import RecordedSpans
from tests.mcp.conftest import serving_http
from tests.mcp.test_server import _discovery
from weakincentives.discovery import CallResponse
from weakincentives.mcp import HttpServer, MCPToolbox, build_server


def _parent(span: Any) -> int | None:
    return None if span.parent is None else span.parent.span_id


def _call(service: str) -> CallResponse:
    with (
        serving_http(build_server(_discovery(), name="ops")) as url,
        MCPToolbox.open([HttpServer(url=url, name="ops")]) as toolbox,
    ):
        return toolbox.discovery().call_tool(
            "ops.call_tool", {"tool_id": "ops.restart_0", "arguments": {"service": service}}
        )


def test_a_served_call_is_a_child_of_the_call_that_sent_it(spans: RecordedSpans) -> None:
    """discovery call_tool -> MCP send -> (traceparent over HTTP) -> served call -> discovery."""
    assert _call("web").success is True
    outer, inner = sorted(spans.named("discovery call_tool"), key=lambda span: span.start_time)
    sent = spans.one("MCP send tools/call call_tool")
    served = spans.one("tools/call call_tool")
    assert (sent.kind, served.kind) == (SpanKind.CLIENT, SpanKind.SERVER)
    assert _parent(outer) is None
    assert _parent(sent) == outer.context.span_id
    assert _parent(served) == sent.context.span_id
    assert _parent(inner) == served.context.span_id
    assert {span.context.trace_id for span in (outer, sent, served, inner)} == {
        outer.context.trace_id
    }
    assert outer.attributes["weakincentives.discovery.tool_id"] == "ops.call_tool"
    assert inner.attributes["weakincentives.discovery.tool_id"] == "ops.restart_0"
    assert served.attributes["gen_ai.tool.name"] == "call_tool"


def test_a_tool_error_marks_the_served_span_and_the_discovery_call(spans: RecordedSpans) -> None:
    """A failed catalogue call is a tool_error on both sides of the wire."""
    assert _call("db").success is False
    served = spans.one("tools/call call_tool")
    assert served.attributes["error.type"] == "tool_error"
    for call in spans.named("discovery call_tool"):
        assert call.attributes["error.type"] == "tool_error"
        assert call.status.status_code is StatusCode.ERROR


def test_without_tracing_calls_work() -> None:
    """Tracing off: no span, no traceparent, the call is answered as usual."""
    assert _call("web").success is True
