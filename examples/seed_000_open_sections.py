"""Seed 000 (open_sections): the Example Flow, the custom suffix, and a full offline run.

Run: python examples/seed_000_open_sections.py
"""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.adapters import Disclosure, OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    SectionVisibility,
)
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked


# --- The seed's "Example Flow", as written ---------------------------------------------------
@dataclass
class TaskParams:
    objective: str


@dataclass
class ContextParams:
    project_name: str


# Define a prompt with summarized context
prompt = PromptTemplate(
    ns="agents/assistant",
    key="task-executor",
    name="task_executor",
    sections=[
        MarkdownSection[TaskParams](
            title="Task",
            template="Complete the following: ${objective}",
            key="task",
        ),
        MarkdownSection[ContextParams](
            title="Project Context",
            template="""
            Detailed documentation for ${project_name}:
            - Architecture overview
            - API reference
            - Code conventions
            - Historical decisions
            """,
            summary="Documentation for ${project_name} is available.",
            key="context",
            visibility=SectionVisibility.SUMMARY,
        ),
    ],
)

# Initial render with summarized context
rendered = prompt.render(
    TaskParams(objective="Refactor the authentication module"),
    ContextParams(project_name="WeakIncentives"),
)
print(rendered.text)
print("tools offered:", [tool.name for tool in rendered.tools])

# Model calls: open_sections(section_keys=("context",), reason="Need architecture details ...")

# Caller receives OpenSectionsResult and retries:
rendered = prompt.render(
    TaskParams(objective="Refactor the authentication module"),
    ContextParams(project_name="WeakIncentives"),
    visibility_overrides={("context",): SectionVisibility.FULL},
)
print(rendered.text)


# --- The seed's custom suffix, completed with a params type and a template ------------------
@dataclass
class Params:
    area: str


section = MarkdownSection[Params](
    title="Reference Documentation",
    template="Signatures and examples for ${area}.",
    summary="Overview of available APIs and their purposes.",
    summary_suffix=(
        "Call `open_sections` with key '${section_key}' to see detailed API signatures "
        "and usage examples."
    ),
    key="reference",
    visibility=SectionVisibility.SUMMARY,
)
reference = PromptTemplate(ns="examples", key="reference", sections=[section])
print(reference.render(Params(area="billing")).text)

# --- The whole flow on the offline adapter: the model opens the section, then answers -------
adapter = OfflineAdapter(
    [
        ScriptedTurn(
            calls=(
                ScriptedCall(
                    name="open_sections",
                    arguments={
                        "section_keys": ["context"],
                        "reason": "Need architecture details for refactoring",
                    },
                ),
            )
        ),
        ScriptedTurn(text="Plan: split the auth module along the documented architecture."),
    ]
)
bus = InProcessEventBus()
session = Session(bus=bus)
response = adapter.evaluate(
    prompt,
    TaskParams(objective="Refactor the authentication module"),
    ContextParams(project_name="WeakIncentives"),
    bus=bus,
    session=session,
    disclosure=Disclosure(policy="eager"),  # the default: open what the model asks for
)
assert "Detailed documentation for WeakIncentives" in adapter.provider.requests[-1].rendered.text
(expansion,) = session.select(ToolInvoked)
print("model asked for:", expansion.telemetry["requested_sections"])
print("answer:", response.text)
