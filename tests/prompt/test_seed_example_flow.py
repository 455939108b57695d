"""Seed 000's "Example Flow", run verbatim, renders what the seed says the model sees."""

from __future__ import annotations

from dataclasses import dataclass

from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    SectionVisibility,
)


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

SUMMARIZED = """\
## 1 Task
Complete the following: Refactor the authentication module

## 2 Project Context
Documentation for WeakIncentives is available.

---
[This section is summarized. To view full content, call `open_sections` with key "context".]"""

EXPANDED = """\
## 1 Task
Complete the following: Refactor the authentication module

## 2 Project Context
Detailed documentation for WeakIncentives:
- Architecture overview
- API reference
- Code conventions
- Historical decisions"""


def test_initial_render_shows_the_summary_and_how_to_open_it() -> None:
    """The first render summarizes the context and names its key in the suffix."""
    rendered = prompt.render(
        TaskParams(objective="Refactor the authentication module"),
        ContextParams(project_name="WeakIncentives"),
    )
    assert rendered.text == SUMMARIZED
    assert rendered.summarized_paths == (("context",),)


def test_retry_with_overrides_shows_the_full_context() -> None:
    """Rendering again with the context opened shows its full body."""
    rendered = prompt.render(
        TaskParams(objective="Refactor the authentication module"),
        ContextParams(project_name="WeakIncentives"),
        visibility_overrides={("context",): SectionVisibility.FULL},
    )
    assert rendered.text == EXPANDED
    assert rendered.summarized_paths == ()
    assert rendered.name == "task_executor"
