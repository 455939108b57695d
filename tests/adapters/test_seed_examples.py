"""Seed 003's example verbatim, and seed 004's usage patterns, run end to end offline."""

from __future__ import annotations

from dataclasses import dataclass, field

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Session,
    ToolInvoked,
)

# --- Seed 003, "Example", verbatim ---------------------------------------------------------


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

# --- End of the seed's example -------------------------------------------------------------


def test_seed_003_example_renders_its_tool() -> None:
    """The example's render lists the tool and the guidance text."""
    assert markdown == "## 1 Guidance\nUse tools when you need up-to-date context."
    assert tools == (lookup_tool,)
    assert dict(rendered.tool_param_descriptions["lookup_entity"]) == {
        "entity_id": "Global identifier to fetch"
    }


def test_seed_003_example_runs_end_to_end_with_session_events() -> None:
    """The offline adapter calls the tool; the session records every event in order."""
    bus = InProcessEventBus()
    session = Session(bus=bus)
    adapter = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(ScriptedCall(name="lookup_entity", arguments={"entity_id": "e-1"}),)
            ),
            ScriptedTurn(text="Entity e-1 lives at https://example.com."),
        ]
    )
    response = adapter.evaluate(prompt, bus=bus, session=session)
    assert response.text == "Entity e-1 lives at https://example.com."
    assert response.tool_results == (
        ToolResult(
            message="Fetched entity e-1.",
            value=LookupResult(entity_id="e-1", document_url="https://example.com"),
        ),
    )
    (rendered_event,) = session.select(PromptRendered)
    (invoked,) = session.select(ToolInvoked)
    (executed,) = session.select(PromptExecuted)
    assert rendered_event.tool_names == ("lookup_entity",)
    assert invoked.params == LookupParams(entity_id="e-1")
    assert invoked.rendered_output == '{"entity_id":"e-1","document_url":"https://example.com"}'
    assert executed.tool_call_count == 1


# --- Seed 004 usage patterns ----------------------------------------------------------------


@dataclass(frozen=True)
class NoteParams:
    text: str


@dataclass(frozen=True)
class NoteSaved:
    """A custom event a handler publishes for observers."""

    tool: str
    text: str


@dataclass(frozen=True)
class Count:
    notes: int


def save_note(params: NoteParams, *, context: ToolContext) -> ToolResult[Count]:
    """Event emission and session storage from inside a handler."""
    context.event_bus.publish(NoteSaved(tool=context.tool.name, text=params.text))
    notes = context.session.storage.get("notes", tuple) or ()
    context.session.storage.set("notes", (*notes, params.text))
    return ToolResult(message="saved", value=Count(notes=len(notes) + 1))


@dataclass(frozen=True)
class Empty:
    pass


@dataclass(frozen=True)
class PromptFacts:
    headings: int
    tools: tuple[str, ...]
    prompt_key: str


def inspect_prompt(params: Empty, *, context: ToolContext) -> ToolResult[PromptFacts]:
    """Prompt inspection: read the rendered prompt the model is looking at."""
    rendered_prompt = context.rendered_prompt
    assert rendered_prompt is not None
    return ToolResult(
        message="inspected",
        value=PromptFacts(
            headings=rendered_prompt.text.count("## "),
            tools=tuple(tool.name for tool in rendered_prompt.tools),
            prompt_key=context.prompt.key,
        ),
    )


def notes_prompt() -> Prompt[None]:
    return Prompt(
        ns="examples/context",
        key="notes",
        sections=[
            MarkdownSection(
                title="Notes",
                template="Keep notes for the user.",
                tools=[Tool.wrap(save_note), Tool.wrap(inspect_prompt)],
            )
        ],
    )


def test_handlers_emit_events_and_use_session_storage() -> None:
    """Handlers publish on context.event_bus and persist in context.session.storage."""
    bus = InProcessEventBus()
    session = Session(bus=bus)
    adapter = OfflineAdapter(
        [
            ScriptedTurn(
                calls=(
                    ScriptedCall(name="save_note", arguments={"text": "buy tea"}),
                    ScriptedCall(name="save_note", arguments={"text": "call ada"}),
                )
            ),
            ScriptedTurn(text="Saved two notes."),
        ]
    )
    response = adapter.evaluate(notes_prompt(), bus=bus, session=session)
    assert [result.value for result in response.tool_results] == [Count(notes=1), Count(notes=2)]
    assert session.select(NoteSaved) == (
        NoteSaved(tool="save_note", text="buy tea"),
        NoteSaved(tool="save_note", text="call ada"),
    )
    assert session.storage.get("notes", tuple) == ("buy tea", "call ada")


def test_handlers_inspect_the_rendered_prompt() -> None:
    """context.rendered_prompt and context.prompt describe what the model is reading."""
    adapter = OfflineAdapter(
        [ScriptedTurn(calls=(ScriptedCall(name="inspect_prompt"),)), ScriptedTurn(text="ok")]
    )
    response = adapter.evaluate(notes_prompt())
    assert response.tool_results[0].value == PromptFacts(
        headings=1, tools=("save_note", "inspect_prompt"), prompt_key="notes"
    )


def test_handlers_can_reach_the_adapter_for_nested_prompts() -> None:
    """context.adapter is the adapter running the evaluation, ready for nested calls."""
    seen: list[object] = []

    def nested(params: Empty, *, context: ToolContext) -> ToolResult[None]:
        seen.append(context.adapter)
        return ToolResult(message="ok")

    adapter = OfflineAdapter(
        [ScriptedTurn(calls=(ScriptedCall(name="nested"),)), ScriptedTurn(text="done")]
    )
    adapter.evaluate(
        Prompt(
            ns="t",
            key="nested",
            sections=[
                MarkdownSection(
                    title="N",
                    template="n",
                    tools=[Tool(name="nested", description="N.", handler=nested)],
                )
            ],
        )
    )
    assert seen == [adapter]
