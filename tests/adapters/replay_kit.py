"""What the record-and-replay tests share: an agent with a tool, and one deterministic run.

A run gets its own clock, id source and session id, so a recorded run and its replay
(in this process or another) publish equal events when the provider answers alike.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from uuid import UUID

from weakincentives.adapters import Adapter, LoopSettings, PromptResponse
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    PromptTemplate,
    ToolContext,
    ToolResult,
    tool,
)
from weakincentives.runtime import EVENT_DOCUMENT, InProcessEventBus, Session
from weakincentives.serde import JSONValue, dump_document, dump_typed

SESSION_ID = UUID(int=24)

type Entry = Literal["evaluate", "evaluate_async"]


@dataclass(frozen=True, slots=True, kw_only=True)
class City:
    """The weather tool's params."""

    city: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Forecast:
    """The weather tool's result."""

    city: str
    summary: str


def forecast(params: City, *, context: ToolContext) -> ToolResult[Forecast]:
    """A deterministic forecast."""
    return ToolResult(
        message=f"Forecast for {params.city}.",
        value=Forecast(city=params.city, summary="sunny, 24 C"),
    )


def cloudy(params: City, *, context: ToolContext) -> ToolResult[Forecast]:
    """Another forecast, for a tool whose results changed since a recording."""
    return ToolResult(
        message=f"Forecast for {params.city}.",
        value=Forecast(city=params.city, summary="cloudy, 18 C"),
    )


WEATHER_DESCRIPTION = "Today's weather in a city."
WEATHER = tool(name="get_weather", description=WEATHER_DESCRIPTION)(forecast)


def weather_prompt(
    question: str = "What is the weather in Lisbon?",
    *,
    description: str = WEATHER_DESCRIPTION,
    handler: Callable[..., ToolResult[Forecast]] = forecast,
) -> Prompt[Any]:
    """A one-section prompt offering the weather tool (its description or handler may change)."""
    weather = (
        WEATHER
        if description == WEATHER_DESCRIPTION and handler is forecast
        else tool(name="get_weather", description=description)(handler)
    )
    template = PromptTemplate(
        ns="tests/replay",
        key="weather",
        name="weather",
        sections=[
            MarkdownSection(
                key="task",
                title="Task",
                template=f"{question}\nUse the tool, then answer in one sentence.",
                tools=(weather,),
            )
        ],
    )
    return Prompt(template)


def settings() -> LoopSettings:
    """Loop settings with a clock and ids that start over for every run."""
    start = datetime(2026, 5, 1, tzinfo=UTC)
    ticks: Iterator[int] = iter(range(1_000_000))
    ids: Iterator[int] = iter(range(1, 1_000_000))
    return LoopSettings(
        clock=lambda: start + timedelta(milliseconds=next(ticks)),
        new_id=lambda: f"id-{next(ids)}",
    )


@dataclass(frozen=True, slots=True)
class Run:
    """One evaluation: its response and every event it published, in order."""

    response: PromptResponse[Any]
    events: list[object]


def run(adapter: Adapter[Any], prompt: Prompt[Any], entry: Entry = "evaluate") -> Run:
    """Evaluate ``prompt`` once on a fresh bus and session, collecting every event."""
    bus = InProcessEventBus()
    events: list[object] = []
    bus.subscribe(object, events.append)
    session = Session(bus=bus, session_id=SESSION_ID)
    try:
        if entry == "evaluate":
            response = adapter.evaluate(prompt, bus=bus, session=session)
        else:
            response = asyncio.run(adapter.evaluate_async(prompt, bus=bus, session=session))
    finally:
        session.close()
    return Run(response=response, events=events)


def comparable(response: PromptResponse[Any]) -> JSONValue:
    """What a response holds apart from live objects (tools), as typed JSON."""
    return dump_typed(
        {
            "evaluation_id": response.evaluation_id,
            "text": response.text,
            "output": response.output,
            "rounds": response.rounds,
            "usage": response.usage,
            "model": response.model,
            "conversation": response.conversation,
            "calls": [
                (execution.call, execution.params, execution.result)
                for execution in response.tool_executions
            ],
            "hosted_outputs": dict(response.hosted_outputs),
        }
    )


def event_documents(events: list[object]) -> list[str]:
    """Each event as its stored document."""
    return [dump_document(EVENT_DOCUMENT, event) for event in events]
