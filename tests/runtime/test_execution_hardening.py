"""Untrusted arguments and badly behaved handlers never escape the execution path."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    Session,
    ToolCall,
    ToolExecution,
    ToolInvoked,
    execute_tool_call,
)
from weakincentives.serde import JSONValue


@dataclass(frozen=True)
class Bag:
    tags: list[str] = field(default_factory=list)
    meta: dict[str, JSONValue] = field(default_factory=dict)


@dataclass(frozen=True)
class Count:
    count: int = 0


@dataclass(frozen=True)
class Anything:
    value: JSONValue = None


def scope_for(*tools: Tool[Any, Any]) -> tuple[ExecutionScope, Session]:
    bus = InProcessEventBus()
    session = Session(bus=bus)
    prompt: Prompt[None] = Prompt(
        ns="t", key="k", sections=[MarkdownSection(title="T", template="", tools=tools)]
    )
    return ExecutionScope(
        prompt=prompt, session=session, event_bus=bus, rendered_prompt=prompt.render()
    ), session


def run(tool: Tool[Any, Any], arguments: str) -> tuple[ToolExecution, Session]:
    scope, session = scope_for(tool)
    call = ToolCall(call_id="c1", name=tool.name, arguments=arguments)
    return asyncio.run(execute_tool_call(call, scope)), session


def noop(params: Any, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="ran")


class TestRecordsStayAsSent:
    def test_a_handler_mutating_its_params_does_not_change_the_record(self) -> None:
        """ToolInvoked.arguments is what the model sent, whatever the handler does after."""

        def mutate(params: Bag, *, context: ToolContext) -> ToolResult[None]:
            params.tags.append("added")
            params.meta["nested"] = {"changed": True}
            return ToolResult(message="mutated")

        tool = Tool(name="mutate", description="Mutate.", handler=mutate)
        execution, session = run(tool, '{"tags": ["a"], "meta": {"k": [1]}}')
        (event,) = session.select(ToolInvoked)
        assert event.arguments == {"tags": ["a"], "meta": {"k": [1]}}
        assert execution.result.message == "mutated"


class TestArgumentsFromTheModel:
    @pytest.mark.parametrize(
        ("arguments", "problem"),
        [
            ("[" * 10_000 + "]" * 10_000, "JSON nested more than 128 levels deep"),
            ('{"value": ' + "[" * 200 + "]" * 200 + "}", "JSON nested more than 128 levels deep"),
            ('{"count": ' + "7" * 5_000 + "}", "an integer of 5,000 digits"),
            ('{"value": NaN}', "NaN is not a JSON number"),
            ('{"value": -Infinity}', "-Infinity is not a JSON number"),
        ],
        ids=["deep-array", "deep-field", "huge-int", "nan", "infinity"],
    )
    def test_unreadable_arguments_become_a_failed_result(
        self, arguments: str, problem: str
    ) -> None:
        """Arguments no parser should accept fail softly, saying why."""
        tool = Tool(name="anything", description="A.", handler=noop, params_type=Anything)
        execution, _ = run(tool, arguments)
        assert execution.result.success is False
        assert problem in execution.result.message
        assert len(execution.result.message) < 500

    def test_a_long_unknown_tool_name_is_quoted_briefly(self) -> None:
        """The model controls the name; the message about it stays short."""
        scope, _ = scope_for(Tool(name="known", description="K.", handler=noop, params_type=Count))
        execution = asyncio.run(
            execute_tool_call(ToolCall(call_id="c", name="x" * 50_000, arguments="{}"), scope)
        )
        assert execution.result.message.startswith("Unknown tool 'xxxx")
        assert len(execution.result.message) < 400
        assert execution.result.message.endswith("Available tools: known.")

    @settings(max_examples=150, deadline=None)
    @given(
        text=st.one_of(
            st.text(max_size=200),
            st.recursive(
                st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=3), inner, max_size=3)
                ),
                max_leaves=20,
            ).map(json.dumps),
            st.integers(min_value=1, max_value=3000).map(lambda depth: "[" * depth + "]" * depth),
            st.integers(min_value=4_000, max_value=6_000).map(lambda digits: "9" * digits),
            st.sampled_from(["NaN", "Infinity", '"\\ud800"', '{"value": "\\udfff"}']),
        )
    )
    def test_arbitrary_argument_text_never_raises_out_of_evaluate(self, text: str) -> None:
        """Whatever text the model sends as arguments, evaluate returns normally."""
        tool = Tool(name="anything", description="A.", handler=noop, params_type=Anything)
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(ScriptedCall(name="anything", arguments=text),)),
                ScriptedTurn(text="done"),
            ]
        )
        prompt: Prompt[None] = Prompt(
            ns="t", key="k", sections=[MarkdownSection(title="T", template="", tools=(tool,))]
        )
        response = adapter.evaluate(prompt)
        assert response.text == "done"
        assert len(response.tool_executions) == 1


class TestBadlyBehavedHandlers:
    def test_an_exception_whose_str_raises_is_still_a_failed_result(self) -> None:
        """A handler raising an exception with a broken __str__ cannot crash the loop."""

        class UnprintableError(Exception):
            def __str__(self) -> str:
                raise RuntimeError("no text for you")

        def explode(params: Count, *, context: ToolContext) -> ToolResult[None]:
            raise UnprintableError

        tool = Tool(name="explode", description="E.", handler=explode)
        execution, _ = run(tool, "{}")
        assert execution.result.message == (
            "Tool 'explode' failed: UnprintableError: <UnprintableError object; str() failed>"
        )

    def test_a_result_whose_message_is_not_text_is_a_failed_result(self) -> None:
        """ToolResult(message=<not a str>) is refused when built; the model reads why."""

        def odd(params: Count, *, context: ToolContext) -> ToolResult[None]:
            return ToolResult(message=42)  # type: ignore[arg-type]  # the wrong type is the point

        tool = Tool(name="odd", description="O.", handler=odd)
        execution, _ = run(tool, "{}")
        assert execution.result.success is False
        assert execution.result.message == (
            "Tool 'odd' failed: ToolResultError: ToolResult message must be a str, got int 42"
        )

    def test_telemetry_that_raises_is_dropped(self) -> None:
        """A payload whose telemetry() fails still yields its result, without telemetry."""

        @dataclass(frozen=True)
        class Payload:
            n: int

            def telemetry(self) -> dict[str, JSONValue]:
                raise ValueError("broken telemetry")

        def give(params: Count, *, context: ToolContext) -> ToolResult[Payload]:
            return ToolResult(message="ok", value=Payload(n=1))

        tool = Tool(name="give", description="G.", handler=give)
        execution, _ = run(tool, "{}")
        assert execution.result.success is True
        assert dict(execution.event.telemetry) == {}


class TestAsyncPath:
    def test_the_async_path_awaits_handlers_and_publishes(self) -> None:
        """execute_tool_call runs an async handler on the running loop and publishes."""

        async def handler(params: Count, *, context: ToolContext) -> ToolResult[None]:
            await asyncio.sleep(0)
            return ToolResult(message=f"count {params.count}")

        tool = Tool(name="count", description="C.", handler=handler)
        scope, session = scope_for(tool)
        call = ToolCall(call_id="c", name="count", arguments='{"count": 3}')
        execution = asyncio.run(execute_tool_call(call, scope))
        assert execution.result.message == "count 3"
        assert [event.call_id for event in session.select(ToolInvoked)] == ["c"]

    def test_unpublished_execution_leaves_publishing_to_the_caller(self) -> None:
        """publish=False returns the event without publishing it."""
        tool = Tool(name="noop", description="N.", handler=noop, params_type=Count)
        scope, session = scope_for(tool)
        call = ToolCall(call_id="c", name="noop", arguments="{}")
        execution = asyncio.run(execute_tool_call(call, scope, publish=False))
        assert execution.result.message == "ran"
        assert session.select(ToolInvoked) == ()
