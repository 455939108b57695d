"""Durable evaluations: what a round costs to record, and how long a resume takes.

An evaluation of ``n`` rounds on the offline model (a responder), each round one tool
call with a small typed result, then a final answer. Prints ``name  n  best_ms  ratio``
lines (best of several repeats, each on a fresh database):

- the same evaluation in process (no store) is the 1.00 row; ``durable`` runs it with
  every step and event recorded (``evaluate(store=...)``);
- ``resume`` is a new adapter resuming that evaluation from its checkpoint after a crash
  just before it finished (the ``final`` step and the done checkpoint removed): it
  loads the checkpoint, reads the journal, rebuilds the session from the log and
  replays every round without sending or running anything; ``resume, done`` returns a
  finished evaluation's stored response.

Then the bytes a round adds to the store: the steps' JSON (the reply of a send, the
``ToolInvoked`` of a call), the events' JSON in the session log, and the checkpoint
(whose size does not grow with the rounds: the conversation is rebuilt by replay).

SQLite in a temporary directory (WAL, ``synchronous=FULL``); PostgreSQL on a throwaway
server like the tests' (``tests/store/pg_server.py``, fsync off) when its binaries and
the ``postgres`` extra are there. ``python benchmarks/bench_durable.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psycopg
from tests.store.pg_server import find_binaries, running_server

from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
    TurnRequest,
)
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.store import PostgresStore, SQLiteStore, Store

EVALUATION = "bench"
REPEATS = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Order:
    """The tool's params."""

    order_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderStatus:
    """The tool's typed result."""

    order_id: str
    status: str
    items: tuple[str, ...]


def _lookup(params: Order, *, context: ToolContext) -> ToolResult[OrderStatus]:
    status = OrderStatus(order_id=params.order_id, status="shipped", items=("tea", "cups"))
    return ToolResult(message=f"order {params.order_id} shipped", value=status)


PROMPT = Prompt(
    ns="bench/durable",
    key="orders",
    sections=[
        MarkdownSection(
            title="Task",
            key="task",
            template="Check every order the customer mentions and summarise.",
            tools=[
                Tool[Order, OrderStatus](name="lookup", description="An order.", handler=_lookup)
            ],
        )
    ],
)


def _adapter(rounds: int) -> Adapter[OfflineModel]:
    def respond(request: TurnRequest) -> ScriptedTurn:
        if request.round <= rounds:
            call = ScriptedCall(name="lookup", arguments={"order_id": f"A-{request.round}"})
            return ScriptedTurn(text=f"Checking order {request.round}.", calls=(call,))
        return ScriptedTurn(text="All orders shipped.")

    return Adapter(OfflineModel(responder=respond), settings=LoopSettings(max_rounds=rounds + 1))


type Fresh = Callable[[], SQLiteStore | PostgresStore]


async def _timed(work: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await work()
    return (time.perf_counter() - start) * 1000


async def _crash_before_the_end(store: Store) -> None:
    """Drop the final step and make the checkpoint ``running`` again: a crash at the end."""
    checkpoint = await store.load_checkpoint(EVALUATION)
    assert checkpoint is not None
    assert isinstance(checkpoint.document, dict)
    steps = await store.read_steps(EVALUATION)
    await store.delete_evaluation(EVALUATION)
    for step in steps:
        if step.key != "final":
            await store.record_step(EVALUATION, step.key, step.document)
    document = {key: value for key, value in checkpoint.document.items() if key != "response"}
    await store.save_checkpoint(
        EVALUATION,
        round=checkpoint.round,
        status="running",
        document=document,
        session_id=checkpoint.session_id,
    )


async def _measure(rounds: int, fresh: Fresh) -> dict[str, float]:
    best = dict.fromkeys(("process", "durable", "resume", "done"), float("inf"))
    for _ in range(REPEATS):
        times = await _one_repeat(rounds, fresh())
        best = {key: min(best[key], times[key]) for key in best}
    return best


async def _one_repeat(rounds: int, store: SQLiteStore | PostgresStore) -> dict[str, float]:
    """Each measure once, on a fresh database."""
    times = {"process": await _timed(lambda: _adapter(rounds).evaluate_async(PROMPT))}
    async with store:
        times["durable"] = await _timed(
            lambda: _adapter(rounds).evaluate_async(PROMPT, store=store, evaluation_id=EVALUATION)
        )
        times["done"] = await _timed(
            lambda: _adapter(rounds).resume_async(EVALUATION, PROMPT, store=store)
        )
        await _crash_before_the_end(store)
        times["resume"] = await _timed(
            lambda: _adapter(rounds).resume_async(EVALUATION, PROMPT, store=store)
        )
    return times


async def _sizes(rounds: int, fresh: Fresh) -> dict[str, float]:
    async with fresh() as store:
        await _adapter(rounds).evaluate_async(PROMPT, store=store, evaluation_id=EVALUATION)
        steps = await store.read_steps(EVALUATION)
        checkpoint = await store.load_checkpoint(EVALUATION)
        assert checkpoint is not None
        assert checkpoint.session_id is not None
        events = await store.read(checkpoint.session_id)
    step_bytes = sum(len(_text(step.document)) for step in steps if step.key != "final")
    event_bytes = sum(len(_text(event.document)) for event in events)
    assert isinstance(checkpoint.document, dict)
    document = {key: value for key, value in checkpoint.document.items() if key != "response"}
    return {
        "steps": step_bytes / rounds,
        "events": event_bytes / rounds,
        "checkpoint": len(_text(document)),
        "response": len(_text(checkpoint.document["response"])),
    }


def _text(value: object) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _report(backend: str, rounds: int, best: dict[str, float]) -> None:
    base = best["process"]
    for label, key in (
        ("in process (no store)", "process"),
        ("durable: every step recorded", "durable"),
        ("resume after a crash: replay every round", "resume"),
        ("resume a done evaluation: stored response", "done"),
    ):
        name = f"{backend}: {label}"
        print(f"{name:<58}{rounds:>6}{best[key]:>10.2f}{best[key] / base:>8.2f}")


async def _run(backend: str, fresh: Fresh, sizes: list[int]) -> None:
    for rounds in sizes:
        _report(backend, rounds, await _measure(rounds, fresh))
    recorded = await _sizes(10, fresh)
    print(
        f"{backend}: bytes per round (10 rounds): steps {recorded['steps']:,.0f}, log events "
        f"{recorded['events']:,.0f}; checkpoint {recorded['checkpoint']:,.0f} bytes at any "
        f"round; the done response {recorded['response']:,.0f} bytes"
    )


def main() -> None:
    sizes = [10] if "--quick" in sys.argv else [10, 100]
    print(f"{'name':<58}{'n':>6}{'best_ms':>10}{'ratio':>8}")
    with tempfile.TemporaryDirectory() as directory:
        files = itertools.count()
        asyncio.run(
            _run("sqlite", lambda: SQLiteStore(Path(directory) / f"{next(files)}.db"), sizes)
        )
    if find_binaries() is None:
        print("(PostgreSQL binaries not found: SQLite only)")
        return
    with running_server() as server:
        schemas = itertools.count()

        def fresh() -> PostgresStore:
            name = f"bench_{next(schemas)}"
            with psycopg.connect(server.conninfo(), autocommit=True) as connection:
                connection.execute(f"CREATE SCHEMA {name}")
            return PostgresStore(server.conninfo(search_path=name))

        asyncio.run(_run("postgres", fresh, sizes))


if __name__ == "__main__":
    main()
