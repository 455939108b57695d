"""Progressive disclosure and tool discovery through the real OpenAI SDK over loopback HTTP."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from tests.adapters.conftest import OpenAILoopback, ok, response_body
from weakincentives.discovery import CallResponse, ToolCatalog, ToolDiscovery, ToolDiscoverySection
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked
from weakincentives.serde import JSONValue

pytest.importorskip("openai")


def function_call(call_id: str, name: str, **arguments: JSONValue) -> JSONValue:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(arguments),
        "status": "completed",
    }


def message(text: str) -> JSONValue:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


@dataclass(frozen=True)
class Project:
    name: str


def disclosure_template() -> PromptTemplate[None]:
    return PromptTemplate(
        ns="tests/openai",
        key="disclosure",
        sections=[
            MarkdownSection(title="Task", key="task", template="Refactor auth."),
            MarkdownSection[Project](
                title="Project Context",
                key="context",
                template="Detailed documentation for ${name}.",
                summary="Documentation for ${name} is available.",
                visibility=SectionVisibility.SUMMARY,
            ),
        ],
    )


def test_open_sections_halts_then_the_retry_sends_the_expanded_prompt(
    openai_loopback: OpenAILoopback,
) -> None:
    """Initial render -> open_sections -> retry with overrides and the conversation so far."""
    openai_loopback.reply(
        ok(
            response_body(
                function_call("c1", "open_sections", section_keys=["context"], reason="need docs")
            )
        ),
        ok(response_body(message("Done refactoring."))),
    )
    bus = InProcessEventBus()
    session = Session(bus=bus)
    response = openai_loopback.adapter().evaluate(
        disclosure_template(), Project(name="Wink"), bus=bus, session=session
    )
    first, second = openai_loopback.bodies
    assert "Documentation for Wink is available." in first["input"][0]["content"]
    assert [tool["name"] for tool in first["tools"]] == ["open_sections"]
    assert first["tools"][0]["strict"] is True
    assert "Detailed documentation for Wink." in second["input"][0]["content"]
    replayed_call, replayed_output = second["input"][1:]
    assert (replayed_call["type"], replayed_call["name"]) == ("function_call", "open_sections")
    assert replayed_output == {
        "type": "function_call_output",
        "call_id": "c1",
        "output": "Opened sections: context. The prompt above now shows them in full; "
        "continue with the task.",
    }
    assert "tools" not in second
    assert response.text == "Done refactoring."
    (invoked,) = session.select(ToolInvoked)
    assert invoked.telemetry["requested_sections"] == ["context"]


@dataclass(frozen=True)
class RollbackParams:
    service: str = field(metadata={"description": "Service to roll back"})
    version: str


@dataclass(frozen=True)
class Rolled:
    service: str
    version: str


def rollback(params: RollbackParams, *, context: ToolContext) -> ToolResult[Rolled]:
    """Roll a service back to a version."""
    return ToolResult(
        message="rolled back", value=Rolled(service=params.service, version=params.version)
    )


def test_discovery_section_searches_expands_and_calls_over_http(
    openai_loopback: OpenAILoopback,
) -> None:
    """The model sees five discovery tools; the expanded tool runs in the same evaluation."""
    catalog = ToolCatalog.from_tools(
        [(("Ops", "Deploys"), Tool.wrap(rollback, name="deploy_rollback"))]
    )
    prompt = Prompt(
        ns="tests/openai",
        key="discovery",
        sections=[
            MarkdownSection(title="Task", template="Roll checkout back."),
            ToolDiscoverySection(ToolDiscovery(catalog, require_expansion=True)),
        ],
    )
    openai_loopback.reply(
        ok(response_body(function_call("c1", "search_tool_by_category", query="roll back"))),
        ok(response_body(function_call("c2", "expand_tool", tool_id="deploy_rollback"))),
        ok(
            response_body(
                function_call(
                    "c3",
                    "call_tool",
                    tool_id="deploy_rollback",
                    arguments={"service": "checkout", "version": "v411"},
                )
            )
        ),
        ok(response_body(message("Rolled back."))),
    )
    response = openai_loopback.adapter().evaluate(prompt)
    bodies = openai_loopback.bodies
    assert [tool["name"] for tool in bodies[0]["tools"]] == [
        "list",
        "search_tool_by_category",
        "search_nodes",
        "expand_tool",
        "call_tool",
    ]
    call_tool_spec = bodies[0]["tools"][4]
    assert call_tool_spec["strict"] is False
    outputs = [item for item in bodies[3]["input"] if item.get("type") == "function_call_output"]
    assert json.loads(outputs[2]["output"].split("\n\n", 1)[1])["value"] == {
        "service": "checkout",
        "version": "v411",
    }
    assert isinstance(response.tool_results[2].value, CallResponse)
    assert response.text == "Rolled back."
