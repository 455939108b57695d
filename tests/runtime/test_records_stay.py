"""What a session records never changes after the fact: copies of lists and dicts, not aliases."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import given

from tests.conftest import FakeClock
from tests.strategies import ParcelShipped, stored_values
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
from weakincentives.serde import JSONValue, dump_typed


def _scramble(value: object) -> None:
    """Change every list, dict and set reachable in ``value``."""
    if isinstance(value, list):
        for item in value:
            _scramble(item)
        value.append("scrambled")
    elif isinstance(value, dict):
        for item in list(value.values()):
            _scramble(item)
        value["scrambled"] = True
    elif isinstance(value, set):
        value.add("scrambled")
    elif isinstance(value, tuple | frozenset):
        for item in value:
            _scramble(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            _scramble(item)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _scramble(getattr(value, name))


@given(stored_values())
def test_a_published_event_is_recorded_as_it_was(details: object) -> None:
    """The publisher changing its event afterwards changes neither the slice nor a snapshot."""
    bus = InProcessEventBus()
    session = Session(bus=bus)
    event = ParcelShipped(parcel_id="p1", details=details)
    expected = dump_typed(event)  # the event as JSON, before anything changes
    bus.publish(event)
    before = session.snapshot()
    _scramble(details)
    ((recorded,), (earlier,)) = session.select(ParcelShipped), before.select(ParcelShipped)
    assert dump_typed(recorded) == expected
    assert dump_typed(earlier) == expected


@dataclass(frozen=True, slots=True, kw_only=True)
class _Shipped:
    parcel_id: str


def test_an_immutable_event_is_recorded_without_a_copy() -> None:
    session = Session()
    event = _Shipped(parcel_id="p1")
    session.apply(event)
    assert session.select(_Shipped)[0] is event


def test_storage_keeps_what_was_set_and_snapshots_never_change() -> None:
    session = Session()
    queue = ["a"]
    session.storage.set("queue", queue)
    before = session.snapshot()
    queue.append("after set")
    read = session.storage.get("queue", list)
    assert read == ["a"]
    read.append("after get")
    assert session.storage.get("queue", list) == ["a"]
    session.storage.set("queue", [*read, "set again"])
    assert session.storage.get("queue", list) == ["a", "after get", "set again"]
    session.rollback(before)
    assert session.storage.get("queue", list) == ["a"]
    assert before.storage == {"queue": ["a"]}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Batch:
    items: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Facts:
    seen: list[str]

    def telemetry(self) -> Mapping[str, JSONValue]:
        return {"seen": list[JSONValue](self.seen)}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Cycle:
    """A payload that renders itself but contains itself."""

    parts: list[object]

    def render(self) -> str:
        return "a cycle"


def _execute(
    handler: Any, arguments: str | Mapping[str, JSONValue]
) -> tuple[ToolExecution, Session]:
    bus = InProcessEventBus()
    session = Session(bus=bus)
    tool = Tool[_Batch, Any](name="batch", description="Batch.", handler=handler)
    prompt: Prompt[None] = Prompt(
        ns="tests", key="records", sections=[MarkdownSection(title="T", template="", tools=[tool])]
    )
    scope = ExecutionScope(
        prompt=prompt,
        session=session,
        event_bus=bus,
        rendered_prompt=prompt.render(),
        evaluation_id="eval-1",
        clock=FakeClock(),
    )
    call = ToolCall(call_id="call-1", name="batch", arguments=arguments)
    return asyncio.run(execute_tool_call(call, scope)), session


def test_mapping_arguments_are_recorded_as_sent() -> None:
    """A caller passing decoded arguments may change its mapping afterwards."""

    def handler(params: _Batch, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="ok")

    arguments: dict[str, JSONValue] = {"items": ["a"]}
    execution, session = _execute(handler, arguments)
    items = arguments["items"]
    assert isinstance(items, list)
    items.append("later")
    assert session.select(ToolInvoked)[0].arguments == {"items": ["a"]}
    assert execution.event.params == _Batch(items=["a"])


def test_telemetry_is_recorded_as_it_was() -> None:
    seen = ["first"]

    def handler(params: _Batch, *, context: ToolContext) -> ToolResult[_Facts]:
        return ToolResult(message="ok", value=_Facts(seen=seen))

    execution, _ = _execute(handler, '{"items": []}')
    seen.append("later")
    assert dict(execution.event.telemetry) == {"seen": ["first"]}
    assert execution.event.result.value == _Facts(seen=["first"])
    assert execution.result.value is not execution.event.result.value


def test_a_value_that_contains_itself_fails_the_call() -> None:
    """Recording such a value would not end: the model reads why the call failed."""
    cycle = _Cycle(parts=[])
    cycle.parts.append(cycle)

    def handler(params: _Batch, *, context: ToolContext) -> ToolResult[_Cycle]:
        return ToolResult(message="ok", value=cycle)

    execution, session = _execute(handler, '{"items": []}')
    assert execution.result.success is False
    assert execution.result.message.startswith(
        "Tool 'batch' returned a value that cannot be rendered: RecursionError: "
    )
    (event,) = session.select(ToolInvoked)
    assert event.result == execution.result
    assert event.rendered_output == ""
