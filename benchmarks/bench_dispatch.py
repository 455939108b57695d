"""Per-call tool dispatch cost, as ratios to pydantic-core in the same process.

One call: a JSON argument payload for a six-field params dataclass (one field a
list of nested objects) is parsed, a trivial handler runs, and its result is
rendered to JSON text. The rows build up from the parser alone to the whole
``execute_tool_call`` path (tool lookup, ``ToolContext``, the ``ToolInvoked`` event
published on a real ``InProcessEventBus`` to a real ``Session``), so a reader can
see where the time goes. Two baselines: ``TypeAdapter.validate_json`` alone, and
validate_json + the same handler + ``dump_json`` of an equivalent pydantic result.
The goal (issue 15): one more call in a 200-call turn through the whole loop costs at
most 5x the pydantic path.

A session keeps every event (up to its retention), so the full path is timed on a session
that is reset every ``SESSION_BATCH`` calls, and once more on a session already
holding ``LONG_SESSION`` events (what a long-running agent's session looks like).

``execute_tool_call`` is a coroutine. The per-call rows run the tool with
``run_in_thread=False``, so the coroutine finishes without suspending, and drive it
with one ``send`` (:func:`drive`): the whole path, without an event loop's scheduling
around each call. The loop rows at the end measure a real turn, worker threads and all.

Run: ``.venv/bin/python benchmarks/bench_dispatch.py`` (needs the ``bench`` extra).
Add ``--profile`` to print the cProfile hot spots of ``execute_tool_call``.
"""

from __future__ import annotations

import cProfile
import gc
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Coroutine, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

import pydantic

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import (
    ExecutionScope,
    MarkdownSection,
    Prompt,
    Tool,
    ToolContext,
    ToolInvocationContext,
    ToolResult,
    build_tool_context,
)
from weakincentives.runtime import (
    InProcessEventBus,
    Session,
    ToolCall,
    ToolExecution,
    ToolInvoked,
    execute_tool_call,
)
from weakincentives.serde import parse_json

REPEATS = 7
TURN_REPEATS = 30
CALLS = 5_000
SESSION_BATCH = 100
LONG_SESSION = 10_000
LONG_CALLS = 1_000
type Priority = Literal["low", "normal", "high"]


# --- the tool, as a library user writes it ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineItem:
    """One line of an order."""

    sku: str = field(metadata={"description": "Stock keeping unit", "min_length": 1})
    quantity: int = field(metadata={"ge": 1})
    price: float = 0.0


@dataclass(frozen=True, slots=True)
class OrderParams:
    """Arguments of the ``place_order`` tool."""

    customer_id: str = field(metadata={"description": "Customer identifier", "min_length": 1})
    items: tuple[LineItem, ...]
    priority: Priority = "normal"
    note: str | None = None
    express: bool = False
    discount: float = field(default=0.0, metadata={"ge": 0, "le": 1})


@dataclass(frozen=True, slots=True)
class OrderSummary:
    """What ``place_order`` reports back."""

    customer_id: str
    lines: int
    total: float
    priority: Priority


class _Line(Protocol):
    @property
    def quantity(self) -> int: ...
    @property
    def price(self) -> float: ...


def order_total(items: Iterable[_Line], discount: float) -> float:
    """The handler's whole job, shared by both paths so they do the same work."""
    return round(sum(item.quantity * item.price for item in items) * (1 - discount), 2)


def place_order(params: OrderParams, *, context: ToolContext) -> ToolResult[OrderSummary]:
    return ToolResult(
        message="Order placed.",
        value=OrderSummary(
            customer_id=params.customer_id,
            lines=len(params.items),
            total=order_total(params.items, params.discount),
            priority=params.priority,
        ),
    )


TOOL = Tool(name="place_order", description="Place an order.", handler=place_order)
INLINE_TOOL = Tool(
    name="place_order", description="Place an order.", handler=place_order, run_in_thread=False
)
"""The same tool kept on the caller's thread: the per-call rows drive it without a loop."""


def drive(coroutine: Coroutine[Any, Any, ToolExecution]) -> ToolExecution:
    """Run a coroutine that never suspends to its end with one ``send``."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        execution: ToolExecution = finished.value
        return execution
    coroutine.close()
    raise RuntimeError("the call suspended; drive() only runs calls that stay on this thread")


def call_once(call: ToolCall, scope: ExecutionScope) -> ToolExecution:
    """One call through the whole execution path (it publishes its ToolInvoked)."""
    return drive(execute_tool_call(call, scope))


# --- the pydantic equivalent -----------------------------------------------------------------


class LineItemModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")
    sku: str = pydantic.Field(description="Stock keeping unit", min_length=1)
    quantity: int = pydantic.Field(ge=1)
    price: float = 0.0


class OrderModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")
    customer_id: str = pydantic.Field(description="Customer identifier", min_length=1)
    items: tuple[LineItemModel, ...]
    priority: Priority = "normal"
    note: str | None = None
    express: bool = False
    discount: float = pydantic.Field(default=0.0, ge=0, le=1)


class OrderSummaryModel(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(frozen=True)
    customer_id: str
    lines: int
    total: float
    priority: Priority


def place_order_pydantic(params: OrderModel) -> OrderSummaryModel:
    return OrderSummaryModel(
        customer_id=params.customer_id,
        lines=len(params.items),
        total=order_total(params.items, params.discount),
        priority=params.priority,
    )


PAYLOAD = json.dumps(
    {
        "customer_id": "c-42",
        "items": [
            {"sku": "apple", "quantity": 3, "price": 0.5},
            {"sku": "pear", "quantity": 1, "price": 0.75},
            {"sku": "plum", "quantity": 12, "price": 0.2},
        ],
        "priority": "high",
        "note": "leave at the door",
        "express": True,
        "discount": 0.1,
    }
)


# --- timing ----------------------------------------------------------------------------------


def _nothing() -> None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One timed row: ``n`` calls of ``action``, split into batches of ``batch`` calls.

    ``reset`` runs untimed before every batch (to keep a session small); ``before``
    runs untimed once before each repeat (to build a large one).
    """

    name: str
    action: Callable[[], object]
    n: int = CALLS
    batch: int = CALLS
    reset: Callable[[], None] = _nothing
    before: Callable[[], None] = _nothing


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    n: int
    total_ms: float


def measure(cases: Sequence[Case]) -> list[Row]:
    """Best total time of each case over REPEATS rounds.

    Rounds interleave the cases, so a burst of load on a shared machine slows
    every row a little instead of one row a lot.
    """
    best = [float("inf")] * len(cases)
    for _ in range(REPEATS):
        for index, case in enumerate(cases):
            case.before()
            elapsed = 0.0
            for _ in range(case.n // case.batch):
                case.reset()
                start = time.perf_counter()
                for _ in range(case.batch):
                    case.action()
                elapsed += time.perf_counter() - start
            best[index] = min(best[index], elapsed)
    return [Row(case.name, case.n, ms * 1000) for case, ms in zip(cases, best, strict=True)]


@dataclass(frozen=True, slots=True)
class World:
    """A real bus and session, a prompt exposing the tool, and the scope of one evaluation."""

    bus: InProcessEventBus
    session: Session
    scope: ExecutionScope
    call: ToolCall


def build_world() -> World:
    prompt: Prompt[None] = Prompt(
        ns="bench",
        key="dispatch",
        sections=[MarkdownSection(title="Orders", template="Place orders.", tools=[INLINE_TOOL])],
    )
    bus = InProcessEventBus()
    session = Session(bus=bus)
    scope = ExecutionScope(
        prompt=prompt,
        session=session,
        event_bus=bus,
        rendered_prompt=prompt.render(),
        adapter_name="bench",
        evaluation_id="eval-1",
    )
    call = ToolCall(call_id="call-1", name="place_order", arguments=PAYLOAD)
    return World(bus=bus, session=session, scope=scope, call=call)


def check_equivalent(world: World, adapter: pydantic.TypeAdapter[OrderModel]) -> None:
    """Both paths must read the same payload and write the same answer."""
    execution = call_once(world.call, world.scope)
    assert execution.result.success, execution.result.message
    ours = json.loads(execution.result.render())
    theirs = json.loads(place_order_pydantic(adapter.validate_json(PAYLOAD)).model_dump_json())
    assert ours == theirs == {"customer_id": "c-42", "lines": 3, "total": 4.19, "priority": "high"}
    assert len(world.session.select(ToolInvoked)) == 1
    world.session.reset()


def print_rows(title: str, rows: Iterable[Row], validate: Row, pydantic_path: Row) -> None:
    """Ratios compare per-call time with validate_json alone and with the pydantic path."""
    print(title)
    print(f"{'name':<46}{'n':>6}{'best_ms':>10}{'us/call':>9}{'x_valid':>9}{'x_pyd_path':>11}")
    per_validate = validate.total_ms / validate.n
    per_path = pydantic_path.total_ms / pydantic_path.n
    for row in rows:
        per_call = row.total_ms / row.n
        print(
            f"{row.name:<46}{row.n:>6}{row.total_ms:>10.2f}{per_call * 1000:>9.2f}"
            f"{per_call / per_validate:>9.2f}{per_call / per_path:>11.2f}"
        )


def profile(world: World) -> None:
    """Print where ``execute_tool_call`` spends its time (own time, then cumulative)."""
    profiler = cProfile.Profile()
    for _ in range(CALLS // SESSION_BATCH):
        world.session.reset()
        profiler.enable()
        for _ in range(SESSION_BATCH):
            call_once(world.call, world.scope)
        profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.strip_dirs().sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats(25)


def main() -> None:
    adapter: pydantic.TypeAdapter[OrderModel] = pydantic.TypeAdapter(OrderModel)
    summary_adapter = pydantic.TypeAdapter(OrderSummaryModel)
    world = build_world()
    check_equivalent(world, adapter)
    scope, call, session, bus = world.scope, world.call, world.session, world.bus

    # Built once: this row leaves out the per-call context, event and session work.
    context = build_tool_context(prompt=scope.prompt, tool=TOOL, session=session, event_bus=bus)

    def ours_no_events() -> str:
        params = parse_json(OrderParams, PAYLOAD)
        return place_order(params, context=context).render()

    def pydantic_full() -> bytes:
        return summary_adapter.dump_json(place_order_pydantic(adapter.validate_json(PAYLOAD)))

    def fill_session() -> None:
        session.reset()
        for _ in range(LONG_SESSION):
            call_once(call, scope)

    silent_scope = replace(scope, event_bus=InProcessEventBus())
    execution = call_once(call, scope)
    event, value = execution.event, execution.result.value
    summary = place_order_pydantic(adapter.validate_json(PAYLOAD))

    path = measure(
        [
            Case(name="pydantic validate_json", action=lambda: adapter.validate_json(PAYLOAD)),
            Case(name="pydantic validate + handler + dump_json", action=pydantic_full),
            Case(name="json.loads alone", action=lambda: json.loads(PAYLOAD)),
            Case(name="serde.parse_json", action=lambda: parse_json(OrderParams, PAYLOAD)),
            Case(name="parse_json + handler + ToolResult.render", action=ours_no_events),
            Case(
                name="execute_tool_call, bus without subscribers",
                action=lambda: call_once(call, silent_scope),
            ),
            Case(
                name=f"execute_tool_call (session reset every {SESSION_BATCH})",
                action=lambda: call_once(call, scope),
                batch=SESSION_BATCH,
                reset=session.reset,
            ),
            Case(
                name=f"execute_tool_call ({LONG_SESSION // 1000}k events in session)",
                action=lambda: call_once(call, scope),
                n=LONG_CALLS,
                batch=LONG_CALLS,
                before=fill_session,
            ),
        ]
    )
    validate, pydantic_path = path[0], path[1]
    pieces = measure(
        [
            Case(
                name="build_tool_context (+ ToolInvocationContext)",
                action=lambda: build_tool_context(
                    prompt=scope.prompt,
                    tool=TOOL,
                    session=session,
                    event_bus=bus,
                    invocation=ToolInvocationContext(
                        invocation_id=call.call_id, timestamp=event.started_at
                    ),
                    rendered_prompt=scope.rendered_prompt,
                ),
            ),
            Case(
                name="telemetry lookup on the payload type",
                action=lambda: getattr(type(value), "telemetry", None),
            ),
            Case(name="ToolResult.render", action=execution.result.render),
            Case(
                name="pydantic dump_json of the result",
                action=lambda: summary_adapter.dump_json(summary),
            ),
            Case(
                name=f"bus.publish(ToolInvoked), reset every {SESSION_BATCH}",
                action=lambda: bus.publish(event),
                batch=SESSION_BATCH,
                reset=session.reset,
            ),
        ]
    )
    session.reset()  # the loop rows run on their own sessions; drop this one's events
    print_rows("== dispatch, built up piece by piece", path, validate, pydantic_path)
    print()
    print_rows("== pieces of execute_tool_call, each alone", pieces, validate, pydantic_path)
    print()
    print_loop_rows(pydantic_full)
    if "--profile" in sys.argv:
        profile(world)


def _turn_seconds(calls: int, tool: Tool[OrderParams, OrderSummary]) -> float:
    """Process time of one evaluation whose first turn makes ``calls`` calls of ``tool``."""
    prompt = Prompt(
        ns="bench", key="turn", sections=[MarkdownSection(title="T", template="Go.", tools=[tool])]
    )
    turn = ScriptedTurn(
        calls=tuple(
            ScriptedCall(name=tool.name, arguments=PAYLOAD, call_id=f"c{index}")
            for index in range(calls)
        )
    )
    adapter = OfflineAdapter([turn, ScriptedTurn(text="done")])
    gc.collect()  # garbage left by earlier rows is not this turn's cost (GC stays on)
    start = time.process_time()
    adapter.evaluate(prompt)
    return time.process_time() - start


def _pydantic_seconds(calls: int, baseline: Callable[[], object]) -> float:
    """Process time of ``calls`` runs of the pydantic path, measured like a turn."""
    gc.collect()
    start = time.process_time()
    for _ in range(calls):
        baseline()
    return time.process_time() - start


def print_loop_rows(baseline: Callable[[], object]) -> None:
    """The marginal cost of one more call in a turn of 200, through the whole loop.

    This machine's speed drifts by 2x from one turn to the next, so each repeat times
    the pydantic path right beside the two turns. The row reports the best per-call
    times (as every other row does) and their ratio, and the median of the paired
    per-repeat ratios beside it.
    """
    print("== one turn of 200 calls on the offline adapter: marginal cost per call")
    print(f"({TURN_REPEATS} repeats, each paired with a pydantic timing of 200 calls)")
    print(f"{'name':<46}{'n':>6}{'us/call':>9}{'pyd_us':>9}{'x_pyd_path':>11}{'x_median':>10}")
    variants = (
        ("sync handler on a worker thread (default)", TOOL),
        (
            "sync handler on the loop (run_in_thread=False)",
            Tool(
                name="place_order", description="Place.", handler=place_order, run_in_thread=False
            ),
        ),
    )
    for name, tool in variants:
        _turn_seconds(10, tool)
        per_call: list[float] = []
        per_baseline: list[float] = []
        for _ in range(TURN_REPEATS):
            per_call.append((_turn_seconds(200, tool) - _turn_seconds(1, tool)) / 199 * 1e6)
            per_baseline.append(_pydantic_seconds(200, baseline) / 200 * 1e6)
        paired = statistics.median(o / p for o, p in zip(per_call, per_baseline, strict=True))
        best, best_baseline = min(per_call), min(per_baseline)
        print(
            f"{name:<46}{200:>6}{best:>9.2f}{best_baseline:>9.2f}"
            f"{best / best_baseline:>11.2f}{paired:>10.2f}"
        )


if __name__ == "__main__":
    main()
