"""Seed 003 (tool runtime): the seed's example, then the tool called through the loop.

Run: python examples/seed_003_tool_runtime.py
"""

from __future__ import annotations

from dataclasses import dataclass, field

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked


# --- The seed's "Example", as written ------------------------------------------------------
@dataclass
class LookupParams:
    entity_id: str = field(metadata={"description": "Global identifier to fetch"})
    include_related: bool = field(default=False)


@dataclass
class LookupResult:
    entity_id: str
    document_url: str


def lookup_handler(params: LookupParams, *, context: ToolContext) -> ToolResult[LookupResult]:
    result = LookupResult(entity_id=params.entity_id, document_url="https://example.com")
    message = f"Fetched entity {result.entity_id}."
    return ToolResult(message=message, value=result)


lookup_tool = Tool[LookupParams, LookupResult](
    name="lookup_entity",
    description="Fetch structured information for a given entity id.",
    handler=lookup_handler,
)

prompt = Prompt(
    ns="examples/tooling",
    key="tools_overview",
    name="tools_overview",
    sections=[
        MarkdownSection(
            title="Guidance",
            template="Use tools when you need up-to-date context.",
            tools=[lookup_tool],
        )
    ],
)

rendered = prompt.render()
markdown = rendered.text
tools = rendered.tools
assert tools[0].name == "lookup_entity"

# --- Failure semantics: a bad call and a good one, through the offline adapter -------------
adapter = OfflineAdapter(
    [
        ScriptedTurn(
            calls=(
                ScriptedCall(name="lookup_entity", arguments={"entity_id": 42}),
                ScriptedCall(name="lookup_entity", arguments={"entity_id": "e-42"}),
            )
        ),
        ScriptedTurn(text="Entity e-42 is documented at https://example.com."),
    ]
)
bus = InProcessEventBus()
session = Session(bus=bus)
response = adapter.evaluate(prompt, bus=bus, session=session)
for event in session.select(ToolInvoked):
    status = "ok" if event.success else "failed"
    print(f"{event.name} {status}: {event.result.message} {event.rendered_output}")
print("answer:", response.text)
assert [result.success for result in response.tool_results] == [False, True]
