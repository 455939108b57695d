"""The evaluation the kill tests interrupt, and the store probe that stops it between calls.

Three rounds on the offline model (a responder, so a new process replies the same way):

1. the model calls ``note(a)``, ``note(b)`` and ``slow(s)``;
2. it calls ``note(c)``;
3. it answers.

Every tool is exclusive, so the calls run (and are recorded) in the model's order.
Each side effect appends a line to a file: the test counts them. ``note`` also
publishes a ``Noted`` event of its own, which must reach the log exactly once.
Times come from a fixed clock and ids from a counter, so two runs produce the same
events byte for byte.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import UUID

from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
    TurnRequest,
)
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.store import Step, Store

EVALUATION = "eval-kill"
SESSION = UUID("00000000-0000-0000-0000-0000000000aa")
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
KILL_POINTS = ("none", "request", "between", "slow")
MARKER = "KILL-POINT"
"""The line a worker prints when it reached its kill point (and then waits to be killed)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Item:
    """Params of both tools."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Noted:
    """A tool's own event: it noted something."""

    name: str


def _reached_kill_point() -> None:
    """Say so on stdout, then wait to be killed (forever: the test sends SIGKILL)."""
    print(MARKER, flush=True)
    threading.Event().wait()


def build(side_effects: Path, kill_point: str) -> tuple[Adapter[OfflineModel], Prompt[Any]]:
    """The adapter and prompt of one process; it stops at ``kill_point`` when it gets there."""

    def record(line: str) -> None:
        with side_effects.open("a", encoding="utf-8") as file:
            file.write(f"{line}\n")

    def note(params: Item, *, context: ToolContext) -> ToolResult[str]:
        record(f"note {params.name}")
        context.event_bus.publish(Noted(name=params.name))
        return ToolResult(message=f"noted {params.name}", value=params.name)

    def slow(params: Item, *, context: ToolContext) -> ToolResult[str]:
        record(f"slow-start {params.name}")
        context.event_bus.publish(Noted(name=f"slow {params.name}"))
        if kill_point == "slow":
            _reached_kill_point()
        record(f"slow-done {params.name}")
        return ToolResult(message=f"slow {params.name} done", value=params.name)

    def respond(request: TurnRequest) -> ScriptedTurn:
        if request.round == 1:
            return ScriptedTurn(
                text="Noting.",
                calls=(
                    ScriptedCall(name="note", arguments={"name": "a"}),
                    ScriptedCall(name="note", arguments={"name": "b"}),
                    ScriptedCall(name="slow", arguments={"name": "s"}),
                ),
            )
        if request.round == 2:
            if kill_point == "request":
                _reached_kill_point()
            return ScriptedTurn(calls=(ScriptedCall(name="note", arguments={"name": "c"}),))
        return ScriptedTurn(text="All noted.")

    tools = [
        Tool[Item, str](name="note", description="Note it.", handler=note, exclusive=True),
        Tool[Item, str](name="slow", description="Slowly.", handler=slow, exclusive=True),
    ]
    prompt = Prompt(
        ns="tests/durable",
        key="notes",
        sections=[MarkdownSection(title="Task", key="task", template="Note.", tools=tools)],
    )
    counter = iter(range(1, 1_000_000))
    settings = LoopSettings(clock=lambda: NOW, new_id=lambda: f"id-{next(counter)}")
    model = OfflineModel(responder=respond, stream_chunk_size=4)
    return Adapter(model, settings=settings), prompt


class StopAfterStep:
    """A store that reaches the kill point right after ``key`` is recorded (between calls)."""

    def __init__(self, store: Store, key: str) -> None:
        self._store = store
        self._key = key

    def __getattr__(self, name: str) -> Callable[..., Any]:
        attribute: Callable[..., Any] = getattr(self._store, name)
        return attribute

    async def record_step(
        self, evaluation_id: str, key: str, document: Any, **options: Any
    ) -> Step:
        step = await self._store.record_step(evaluation_id, key, document, **options)
        if key == self._key:
            _reached_kill_point()
        return step


def fail(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
    raise SystemExit(2)
