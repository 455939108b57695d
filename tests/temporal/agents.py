"""Prompts, tools and a scripted model for the Temporal tests (imported by worker processes).

``ledger`` tools append a line per side effect to a file named by the evaluation's
``ledger`` extra, so a test counts exactly how often each call ran, across processes.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from temporalio import activity
from temporalio.common import RetryPolicy

from weakincentives.adapters import (
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import ProviderError
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.temporal import EvaluationWorker


@dataclass(frozen=True)
class Job:
    """The prompt's params: how many tool calls the model makes, and how."""

    calls: int = 5
    per_round: int = 5
    """Calls per model turn (5 in one turn, or 1 per round)."""


@dataclass(frozen=True)
class Item:
    n: int


@dataclass(frozen=True)
class Doubled:
    value: int


@dataclass(frozen=True)
class Payout:
    account: str
    amount: int


@tool(description="Double a number.", pure=True)
def double(params: Item, *, context: ToolContext) -> ToolResult[Doubled]:
    return ToolResult(message=f"doubled: {params.n * 2}", value=Doubled(value=params.n * 2))


@tool(description="Record an item (a side effect).")
def record(params: Item, *, context: ToolContext) -> ToolResult[Doubled]:
    """Appends to the ledger; the item named by the ``stall_at`` extra takes 3 s first."""
    ledger = context.extras["ledger"]
    assert isinstance(ledger, str)
    if context.extras.get("stall_at") == params.n:
        time.sleep(3)
    line = f"{context.scope.evaluation_id} {params.n} {os.getpid()}\n"
    with Path(ledger).open("a", encoding="utf-8") as file:
        file.write(line)
    context.event_bus.publish(Item(n=params.n))
    return ToolResult(message=f"recorded {params.n}", value=Doubled(value=params.n))


@tool(description="Return a large text.")
def bulky(params: Item, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult(message="x" * params.n)


@tool(description="Pay out money.", requires_approval=lambda params: params.amount > 100)
def pay(params: Payout, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult(message=f"paid {params.amount} to {params.account}")


def _job(request: TurnRequest) -> Job:
    job = request.rendered.text.split("JOB ", 1)[1].split("\n", 1)[0]
    calls, per_round = json.loads(job)
    return Job(calls=calls, per_round=per_round)


def _outputs(request: TurnRequest) -> list[str]:
    return [item.content for item in request.history if isinstance(item, ToolOutputMessage)]


def work_model(request: TurnRequest) -> ScriptedTurn:
    """Call ``double`` and ``record`` in turn until ``calls`` ran, then sum up."""
    job = _job(request)
    done = len(_outputs(request))
    if done < job.calls:
        count = min(job.per_round, job.calls - done)
        names = ("record", "double")
        return ScriptedTurn(
            text=f"Round {request.round}.",
            calls=tuple(
                ScriptedCall(name=names[(done + i) % 2], arguments={"n": done + i + 1})
                for i in range(count)
            ),
        )
    return ScriptedTurn(text="Done: " + "; ".join(_outputs(request)))


HELD: list[str] = []
"""Evaluations whose request of round 4 hangs in this process now, or did."""

RELEASED: list[tuple[str, activity.ActivityCancellationDetails | None]] = []
"""Evaluations whose hanging request was cancelled, with why the activity was."""


async def holding_model(request: TurnRequest) -> ScriptedTurn:
    """``work_model``, except that the request of round 4 announces itself and hangs."""
    if request.round == 4:
        print(f"HOLDING {request.evaluation_id}", flush=True)
        HELD.append(request.evaluation_id)
        try:
            await asyncio.Event().wait()  # never set: until killed or cancelled
        except asyncio.CancelledError:
            RELEASED.append((request.evaluation_id, activity.cancellation_details()))
            raise
    return work_model(request)


FAILURES: dict[str, int] = {}


def flaky_model(request: TurnRequest) -> ScriptedTurn:
    """Fails per the prompt text: ``retryable`` twice, then answers; ``fatal`` always."""
    mode = request.rendered.text.split("MODE ", 1)[1].split("\n", 1)[0]
    FAILURES[request.evaluation_id] = FAILURES.get(request.evaluation_id, 0) + 1
    if mode == "fatal":
        raise ProviderError(
            "bad request: no such model", prompt_name=request.prompt_name, status_code=400
        )
    if mode == "retryable" and FAILURES[request.evaluation_id] <= 2:
        raise ProviderError(
            "overloaded", prompt_name=request.prompt_name, status_code=529, retryable=True
        )
    return ScriptedTurn(text=f"answered after {FAILURES[request.evaluation_id]} attempts")


def payout_model(request: TurnRequest) -> ScriptedTurn:
    if request.round == 1:
        return ScriptedTurn(
            calls=(
                ScriptedCall(name="pay", arguments={"account": "A", "amount": 20}),
                ScriptedCall(name="pay", arguments={"account": "B", "amount": 500}),
                ScriptedCall(name="pay", arguments={"account": "C", "amount": 900}),
            )
        )
    return ScriptedTurn(text="Paid: " + "; ".join(_outputs(request)))


def bulky_model(request: TurnRequest) -> ScriptedTurn:
    if request.round == 1:
        return ScriptedTurn(calls=(ScriptedCall(name="bulky", arguments={"n": 50_000}),))
    return ScriptedTurn(text=_outputs(request)[0][:60])


def work_prompt(job: Job = Job()) -> Prompt[str]:
    """The prompt the work model reads; its params say how many calls to make."""
    return WORK.bind(job)


WORK: Prompt[str] = Prompt(
    ns="tests/temporal",
    key="work",
    sections=[
        MarkdownSection[Job](
            title="Job",
            key="job",
            template="Do the job.\n\nJOB [${calls}, ${per_round}]",
            tools=[double, record],
        )
    ],
)
PAYOUT: Prompt[str] = Prompt(
    ns="tests/temporal",
    key="payout",
    sections=[MarkdownSection(title="Pay", key="pay", template="Pay out.", tools=[pay])],
)


@dataclass(frozen=True)
class Mode:
    mode: str = "ok"


FLAKY: Prompt[str] = Prompt(
    ns="tests/temporal",
    key="flaky",
    sections=[MarkdownSection[Mode](title="Flaky", key="flaky", template="MODE ${mode}")],
)
BULKY: Prompt[str] = Prompt(
    ns="tests/temporal",
    key="bulky",
    sections=[MarkdownSection(title="Bulky", key="bulky", template="Get it.", tools=[bulky])],
)


def route(request: TurnRequest) -> ScriptedTurn:
    """One responder for every test prompt, by prompt key."""
    if request.prompt_name.endswith("payout"):
        return payout_model(request)
    if request.prompt_name.endswith("flaky"):
        return flaky_model(request)
    if request.prompt_name.endswith("bulky"):
        return bulky_model(request)
    return work_model(request)


def offline(*, hold: bool = False, chunk: int | None = 4) -> OfflineModel:
    """The offline model the workers serve (``hold``: round 4 of ``work`` hangs)."""
    if hold:
        return OfflineModel(responder=holding_model, stream_chunk_size=chunk)
    return OfflineModel(responder=route, stream_chunk_size=chunk)


def evaluation_worker(
    *, hold: bool = False, payload_limit: int = 2_000_000, heartbeats: bool = False
) -> EvaluationWorker:
    """The worker every test serves: all the prompts, short timeouts, quick retries.

    Workers of one task queue must agree on everything the workflow reads, so every
    test (and every worker process) builds its worker here. ``heartbeats``: attempts
    may take an hour, and only a missing heartbeat (one second) ends a lost one.
    """
    attempt = timedelta(hours=1) if heartbeats else timedelta(seconds=2)
    return EvaluationWorker(
        offline(hold=hold),
        prompts=[WORK, PAYOUT, FLAKY, BULKY],
        send_timeout=attempt,
        tool_timeout=attempt,
        heartbeat_timeout=timedelta(seconds=1) if heartbeats else timedelta(seconds=30),
        retry_policy=RetryPolicy(initial_interval=timedelta(milliseconds=20), maximum_attempts=4),
        payload_limit=payload_limit,
    )
