"""Seed 004 (ToolContext): event emission, prompt inspection, session storage, adapter reuse.

Run: python examples/seed_004_tool_context.py
"""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, Session


@dataclass(frozen=True)
class RememberParams:
    fact: str


@dataclass(frozen=True)
class FactRemembered:
    """A custom event, published for observers through the context's bus."""

    tool: str
    fact: str
    call_id: str


@dataclass(frozen=True)
class Memory:
    facts: tuple[str, ...]


async def remember(params: RememberParams, *, context: ToolContext) -> ToolResult[Memory]:
    """Handlers may be async; this one stores a fact in the session and announces it."""
    context.event_bus.publish(
        FactRemembered(
            tool=context.tool.name,
            fact=params.fact,
            call_id=context.invocation.invocation_id,
        )
    )
    facts = context.session.storage.get("facts", tuple) or ()
    context.session.storage.set("facts", (*facts, params.fact))
    return ToolResult(message="Remembered.", value=Memory(facts=(*facts, params.fact)))


@dataclass(frozen=True)
class NoParams:
    pass


@dataclass(frozen=True)
class Outline:
    headings: tuple[str, ...]
    adapter: str


def outline(params: NoParams, *, context: ToolContext) -> ToolResult[Outline]:
    """Prompt inspection: the handler reads the render the model is looking at."""
    rendered = context.rendered_prompt
    headings = tuple(
        line for line in (rendered.text.splitlines() if rendered else ()) if line.startswith("#")
    )
    adapter = context.adapter.name if context.adapter is not None else "none"
    return ToolResult(message="Outline ready.", value=Outline(headings=headings, adapter=adapter))


prompt = Prompt(
    ns="examples/context",
    key="memory",
    sections=[
        MarkdownSection(
            title="Memory",
            template="Remember what the user tells you.",
            tools=[Tool.wrap(remember), Tool.wrap(outline)],
        )
    ],
)

adapter = OfflineAdapter(
    [
        ScriptedTurn(
            calls=(
                ScriptedCall(name="remember", arguments={"fact": "prefers tea"}),
                ScriptedCall(name="outline"),
            )
        ),
        ScriptedTurn(text="Noted: you prefer tea."),
    ]
)
bus = InProcessEventBus()
session = Session(bus=bus)
response = adapter.evaluate(prompt, bus=bus, session=session)

print("events:", session.select(FactRemembered))
print("storage:", session.storage.get("facts", tuple))
print("outline:", response.tool_results[1].value)
assert session.storage.get("facts", tuple) == ("prefers tea",)
