"""The single tool execution path: every problem becomes a failed ToolResult, never a raise."""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FakeClock
from weakincentives.errors import ToolValidationError
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    RenderedPrompt,
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
class Item:
    name: str
    qty: int = 1


@dataclass(frozen=True)
class OrderParams:
    customer: str
    items: list[Item] = field(default_factory=list)


@dataclass(frozen=True)
class NoParams:
    pass


@dataclass(frozen=True)
class OrderResult:
    total: int


def place_order(params: OrderParams, *, context: ToolContext) -> ToolResult[OrderResult]:
    return ToolResult(
        message=f"Order for {params.customer}.",
        value=OrderResult(total=sum(item.qty for item in params.items)),
    )


def build(*tools: Tool[Any, Any]) -> tuple[Prompt[None], RenderedPrompt[None]]:
    prompt: Prompt[None] = Prompt(
        ns="tests",
        key="orders",
        sections=[MarkdownSection(title="Orders", template="", tools=tools)],
    )
    return prompt, prompt.render()


async def run_async(
    arguments: str | dict[str, JSONValue],
    *tools: Tool[Any, Any],
    name: str | None = None,
    bus: InProcessEventBus | None = None,
    session: Session | None = None,
    clock: FakeClock | None = None,
) -> ToolExecution:
    bus = bus or InProcessEventBus()
    session = session or Session(bus=bus)
    tools = tools or (Tool(name="place_order", description="Place an order.", handler=place_order),)
    prompt, rendered = build(*tools)
    scope = ExecutionScope(
        prompt=prompt,
        session=session,
        event_bus=bus,
        rendered_prompt=rendered,
        evaluation_id="eval-1",
        clock=clock or FakeClock(),
    )
    call = ToolCall(call_id="call-1", name=name or tools[0].name, arguments=arguments)
    return await execute_tool_call(call, scope)


def run(
    arguments: str | dict[str, JSONValue],
    *tools: Tool[Any, Any],
    name: str | None = None,
    bus: InProcessEventBus | None = None,
    session: Session | None = None,
    clock: FakeClock | None = None,
) -> ToolExecution:
    return asyncio.run(
        run_async(arguments, *tools, name=name, bus=bus, session=session, clock=clock)
    )


class TestSuccess:
    def test_json_arguments_reach_the_handler_as_a_dataclass(self) -> None:
        """Arguments are parsed into the params dataclass and the result comes back."""
        execution = run('{"customer": "ada", "items": [{"name": "tea", "qty": 2}]}')
        assert execution.params == OrderParams(customer="ada", items=[Item(name="tea", qty=2)])
        assert execution.result == ToolResult(message="Order for ada.", value=OrderResult(total=2))

    def test_mapping_arguments_are_accepted(self) -> None:
        """Adapters that decode JSON themselves pass a mapping."""
        assert run({"customer": "bo"}).result.value == OrderResult(total=0)

    def test_empty_argument_text_means_no_arguments(self) -> None:
        """Providers send "" for tools without parameters."""

        def handler(params: NoParams, *, context: ToolContext) -> ToolResult[None]:
            return ToolResult(message="ran")

        execution = run("", Tool(name="noop", description="No-op.", handler=handler))
        assert execution.result.message == "ran"

    def test_tool_invoked_carries_everything_observers_need(self, clock: FakeClock) -> None:
        """The event records names, ids, arguments, params, result, rendering and timing."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        execution = run('{"customer": "ada"}', bus=bus, session=session, clock=clock)
        (event,) = session.select(ToolInvoked)
        assert event == execution.event
        assert (event.name, event.call_id, event.evaluation_id) == (
            "place_order",
            "call-1",
            "eval-1",
        )
        assert event.prompt_name == "orders"
        assert event.adapter == "direct"
        assert event.session_id == session.session_id
        assert event.arguments == {"customer": "ada"}
        assert event.params == OrderParams(customer="ada")
        assert event.rendered_output == '{"total":0}'
        assert event.duration_ms == 1.0
        assert event.success

    def test_async_handlers_are_awaited(self) -> None:
        """`async def` handlers run to completion."""

        async def handler(params: OrderParams, *, context: ToolContext) -> ToolResult[OrderResult]:
            await asyncio.sleep(0)
            return ToolResult(message="async", value=OrderResult(total=7))

        tool = Tool(name="async_order", description="Async.", handler=handler)
        assert tool.is_async
        assert run('{"customer": "x"}', tool).result.value == OrderResult(total=7)

    def test_async_handlers_run_on_the_callers_loop(self) -> None:
        """An async handler is awaited on the loop that awaits the call."""
        seen: list[asyncio.AbstractEventLoop] = []

        async def handler(params: OrderParams, *, context: ToolContext) -> ToolResult[OrderResult]:
            seen.append(asyncio.get_running_loop())
            return ToolResult(message="nested", value=OrderResult(total=1))

        tool = Tool(name="async_order", description="Async.", handler=handler)

        async def main() -> tuple[ToolExecution, asyncio.AbstractEventLoop]:
            return await run_async('{"customer": "x"}', tool), asyncio.get_running_loop()

        execution, loop = asyncio.run(main())
        assert execution.result.message == "nested"
        assert seen == [loop]

    def test_legacy_handlers_run_with_a_deprecation_warning(self) -> None:
        """Handlers without `context` still run, with a warning telling how to migrate."""

        def legacy(params: OrderParams) -> ToolResult[OrderResult]:
            return ToolResult(message="legacy", value=OrderResult(total=0))

        with pytest.warns(DeprecationWarning, match=r"define it as handler\(params, \*, context\)"):
            tool = Tool(name="legacy", description="Old.", handler=legacy)  # type: ignore[arg-type,var-annotated]  # legacy handlers are deprecated and untyped on purpose
        execution = run('{"customer": "x"}', tool)
        assert execution.result.message == "legacy"

    def test_handler_sees_a_complete_context(self) -> None:
        """ToolContext carries the prompt, render, session, bus, tool and invocation."""
        seen: list[ToolContext] = []

        def handler(params: OrderParams, *, context: ToolContext) -> ToolResult[None]:
            seen.append(context)
            return ToolResult(message="ok")

        tool = Tool(name="inspect", description="Inspect.", handler=handler)
        bus = InProcessEventBus()
        session = Session(bus=bus)
        run('{"customer": "x"}', tool, bus=bus, session=session)
        (context,) = seen
        assert context.prompt.key == "orders"
        assert context.rendered_prompt is not None
        assert context.rendered_prompt.tools == (tool,)
        assert context.session is session
        assert context.event_bus is bus
        assert context.tool is tool
        assert context.invocation.invocation_id == "call-1"
        assert context.invocation.retry_count == 0
        assert context.adapter is None
        assert dict(context.extras) == {}


class TestFailures:
    @pytest.mark.parametrize(
        ("arguments", "message"),
        [
            (
                '{"customer": ',
                "Invalid arguments for tool 'place_order': invalid JSON "
                "(Expecting value at line 1 column 14).",
            ),
            (
                '{"customer": 3}',
                "Invalid arguments for tool 'place_order': expected a string, got integer 3 "
                "at $.customer while parsing OrderParams.",
            ),
            (
                "{}",
                "Invalid arguments for tool 'place_order': expected a value (required field), "
                "got nothing at $.customer while parsing OrderParams.",
            ),
            ("[1, 2]", "Invalid arguments for tool 'place_order': expected an object"),
        ],
    )
    def test_bad_arguments_become_failed_tool_results(self, arguments: str, message: str) -> None:
        """Malformed JSON, wrong types and missing fields name the tool and the field."""
        execution = run(arguments)
        assert execution.result.success is False
        assert execution.result.value is None
        assert execution.result.message.startswith(message)
        assert execution.params is None

    def test_extra_fields_are_rejected(self) -> None:
        """Unknown argument names are refused, listing the allowed ones."""
        execution = run('{"customer": "x", "coupon": "FREE"}')
        assert not execution.result.success
        assert "coupon" in execution.result.message

    def test_unknown_tool_lists_the_available_ones(self) -> None:
        """A call to a tool that does not exist says which tools do."""
        execution = run("{}", name="refund")
        assert execution.result.message == "Unknown tool 'refund'. Available tools: place_order."
        assert execution.tool is None

    def test_tool_without_handler_cannot_run(self) -> None:
        """Declaration-only tools fail when called."""
        tool = Tool[OrderParams, OrderResult](name="declared", description="Declared.")
        execution = run('{"customer": "x"}', tool)
        assert execution.result.message == "Tool 'declared' cannot run: it has no handler."

    def test_handler_exceptions_are_caught_and_attached(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """An exception becomes a failed result; the original is logged and attached."""

        def broken(params: OrderParams, *, context: ToolContext) -> ToolResult[None]:
            raise RuntimeError("database down")

        with caplog.at_level(logging.DEBUG, logger="weakincentives.runtime"):
            execution = run(
                '{"customer": "x"}', Tool(name="broken", description="B.", handler=broken)
            )
        assert execution.result == ToolResult(
            message="Tool 'broken' failed: RuntimeError: database down", value=None, success=False
        )
        assert isinstance(execution.exception, RuntimeError)
        assert execution.event.exception is execution.exception
        assert execution.params == OrderParams(customer="x")
        failures = [r for r in caplog.records if r.getMessage().startswith("tool 'broken' failed")]
        assert [r.levelno for r in failures] == [logging.INFO]
        tracebacks = [r for r in caplog.records if r.exc_info is not None]
        assert [r.levelno for r in tracebacks] == [logging.DEBUG]

    def test_validation_errors_pass_their_message_to_the_model(self) -> None:
        """ToolValidationError is the handler's way to reject a call with guidance."""

        def picky(params: OrderParams, *, context: ToolContext) -> ToolResult[None]:
            raise ToolValidationError("customer must be known; try 'ada'", tool_name="picky")

        execution = run('{"customer": "x"}', Tool(name="picky", description="P.", handler=picky))
        assert execution.result.message == (
            "Tool 'picky' rejected the call: customer must be known; try 'ada'"
        )

    def test_non_tool_result_returns_are_failures(self) -> None:
        """Handlers must return a ToolResult."""

        def sloppy(params: OrderParams, *, context: ToolContext) -> ToolResult[None]:
            return "done"  # type: ignore[return-value]  # the wrong return type is the point

        execution = run('{"customer": "x"}', Tool(name="sloppy", description="S.", handler=sloppy))
        assert execution.result.message == "Tool 'sloppy' returned str, not a ToolResult."

    def test_unrenderable_values_become_failures(self) -> None:
        """A payload that cannot be rendered for the model is reported, not raised."""

        class Opaque:
            pass

        def opaque(params: OrderParams, *, context: ToolContext) -> ToolResult[Opaque]:
            return ToolResult(message="ok", value=Opaque())

        execution = run('{"customer": "x"}', Tool(name="opaque", description="O.", handler=opaque))
        assert execution.result.success is False
        assert execution.result.message.startswith(
            "Tool 'opaque' returned a value that cannot be rendered"
        )
        assert execution.event.rendered_output == ""

    def test_keyboard_interrupt_is_not_swallowed(self) -> None:
        """Signals meant for the process escape the execution path."""

        def interrupted(params: OrderParams, *, context: ToolContext) -> ToolResult[None]:
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            run('{"customer": "x"}', Tool(name="stop", description="S.", handler=interrupted))

    def test_failures_still_publish_tool_invoked(self) -> None:
        """Observers see failed calls, with an empty rendered output."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        run("not json", bus=bus, session=session)
        (event,) = session.select(ToolInvoked)
        assert event.success is False
        assert event.arguments == "not json"
        assert event.rendered_output == ""

    def test_failing_subscriber_does_not_change_the_result(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A broken observer is logged; the tool result stands."""
        bus = InProcessEventBus()

        def boom(event: ToolInvoked) -> None:
            raise ValueError("observer bug")

        bus.subscribe(ToolInvoked, boom)
        with caplog.at_level(logging.WARNING, logger="weakincentives.runtime"):
            execution = run('{"customer": "x"}', bus=bus)
        assert execution.result.success
        assert "failed on ToolInvoked" in caplog.text


_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@given(_json)
def test_arbitrary_json_arguments_always_yield_a_tool_result(value: JSONValue) -> None:
    """No JSON value sent as arguments makes the execution path raise."""
    execution = run(json.dumps(value))
    assert isinstance(execution.result, ToolResult)
    assert execution.result.success == (execution.params is not None)


@given(st.text())
def test_arbitrary_text_arguments_always_yield_a_tool_result(text: str) -> None:
    """Even undecodable argument text produces a result."""
    assert isinstance(run(text).result, ToolResult)
