"""A nested discovery call runs under its handler's scope: nothing of the evaluation dropped."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from datetime import UTC, datetime

from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.discovery import (
    DiscoveryCalled,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
)
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked

Y2K = datetime(2000, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Probe:
    label: str


@dataclass(slots=True)
class Seen:
    context: ToolContext
    thread: threading.Thread
    accumulated: str


def recorder(into: dict[str, Seen]) -> Tool[Probe, None]:
    def probe(params: Probe, *, context: ToolContext) -> ToolResult[None]:
        accumulator = context.response_accumulator
        into[params.label] = Seen(
            context=context,
            thread=threading.current_thread(),
            accumulated=accumulator.text() if accumulator is not None else "<none>",
        )
        return ToolResult(message=f"probed {params.label}")

    return Tool(name="probe", description="Probe the context.", handler=probe)


def test_a_nested_call_keeps_the_clock_ids_executor_extras_and_accumulator() -> None:
    """With a fixed clock and a counter, the nested call is stamped and named by them."""
    seen: dict[str, Seen] = {}
    nested_probe = recorder(seen)
    witness = Tool(name="witness", description="Probe at the top.", handler=nested_probe.handler)
    discovery = ToolDiscovery(ToolCatalog.from_tools([(("Diagnostics",), nested_probe)]))
    prompt: Prompt[None] = Prompt(
        ns="tests/discovery",
        key="nested-context",
        sections=[
            MarkdownSection(title="Task", template="Probe.", tools=[witness]),
            ToolDiscoverySection(discovery),
        ],
    )
    counter = itertools.count(1)
    adapter = Adapter(
        OfflineModel(
            [
                ScriptedTurn(
                    text="Looking.",
                    calls=(
                        ScriptedCall(
                            name="call_tool",
                            arguments={"tool_id": "probe", "arguments": {"label": "nested"}},
                            call_id="outer",
                        ),
                        ScriptedCall(name="witness", arguments={"label": "top"}, call_id="top"),
                    ),
                ),
                ScriptedTurn(text="done"),
            ]
        ),
        settings=LoopSettings(clock=lambda: Y2K, new_id=lambda: f"id-{next(counter)}"),
    )
    bus = InProcessEventBus()
    session = Session(bus=bus)
    adapter.evaluate(prompt, bus=bus, session=session, extras={"trace_id": "t-1"})

    nested, top = seen["nested"], seen["top"]
    # The very scope of the turn: clock, id source, executor, extras, accumulator, bus.
    assert nested.context.scope is top.context.scope
    assert nested.context.response_accumulator is top.context.response_accumulator
    assert nested.accumulated == top.accumulated == "Looking."
    assert dict(nested.context.extras) == {"trace_id": "t-1"}
    scope = nested.context.scope
    assert scope.executor is not None
    assert nested.thread is not threading.main_thread()
    assert nested.thread.name.startswith("weakincentives-")
    # The evaluation took id-1 and discovery's step id-2; the nested call got id-3.
    assert scope.evaluation_id == "id-1"
    invoked = {event.call_id: event for event in session.select(ToolInvoked)}
    assert set(invoked) == {"outer/id-3", "outer", "top"}
    inner = invoked["outer/id-3"]
    assert (inner.name, inner.evaluation_id, inner.started_at, inner.finished_at) == (
        "probe",
        "id-1",
        Y2K,
        Y2K,
    )
    assert nested.context.invocation.invocation_id == "outer/id-3"
    assert nested.context.invocation.parent_message_id == "outer"
    assert nested.context.invocation.timestamp == Y2K
    # Discovery's own audit event is on the evaluation's clock and id source too.
    (called,) = session.select(DiscoveryCalled)
    assert (called.step_id, called.occurred_at) == ("id-2", Y2K)
