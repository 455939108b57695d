"""`wink render` lists tools as the provider receives them, and says when one is non-strict."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from weakincentives._cli import main

MODULE = textwrap.dedent(
    """
    from dataclasses import dataclass

    from weakincentives.prompt import MarkdownSection, Prompt, PromptTemplate, Tool, ToolContext
    from weakincentives.prompt import ToolResult
    from weakincentives.tools import WebSearchSection


    @dataclass(frozen=True)
    class Labels:
        target: str
        labels: dict[str, str]


    @dataclass(frozen=True)
    class Query:
        text: str


    def label(params: Labels, *, context: ToolContext) -> ToolResult[None]:
        \"\"\"Attach labels to a target.\"\"\"
        return ToolResult(message="ok")


    def lookup(params: Query, *, context: ToolContext) -> ToolResult[None]:
        \"\"\"Look something up.\"\"\"
        return ToolResult(message="ok")


    def tooled() -> PromptTemplate[None]:
        return PromptTemplate(
            ns="cli",
            key="tools",
            sections=[
                MarkdownSection(
                    title="Ops", template="Work.", tools=[Tool.wrap(label), Tool.wrap(lookup)]
                )
            ],
        )


    searching = Prompt(ns="cli", key="search", sections=[WebSearchSection()])
    plain = PromptTemplate(
        ns="cli", key="plain", sections=[MarkdownSection(title="Note", template="Hi.")]
    )
    """
)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "cli_render_tools.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cli_render_tools"


def render(target: str) -> str:
    out = io.StringIO()
    assert main(["render", target], out=out) == 0
    return out.getvalue()


def test_non_strict_tool_gets_a_note_with_the_reason(module: str) -> None:
    """A tool with a dict field is flagged right above its definition; strict ones are not."""
    tools = render(f"{module}:tooled").split("\n# Tools\n")[1]
    notes = [line for line in tools.splitlines() if line.startswith("# note:")]
    assert notes == [
        "# note: label is sent non-strict (strict: false) because $.labels allows additional "
        "properties; the provider will not enforce its schema, the library still validates "
        "the arguments"
    ]
    after_note = tools.split(notes[0] + "\n", 1)[1]
    assert after_note.startswith('{\n  "type": "function",\n  "name": "label",')
    assert '"strict": false' in after_note.split("}\n{", 1)[0]


def test_factory_functions_are_called(module: str) -> None:
    """MODULE:ATTR may name a function returning the template."""
    assert render(f"{module}:tooled").startswith("## 1 Ops\nWork.\n")


def test_prompts_and_hosted_tools_are_shown(module: str) -> None:
    """A Prompt renders too; hosted tools are listed by name and kind."""
    assert render(f"{module}:searching").endswith(
        "\n# Tools\n# hosted: web_search (kind web_search)\n"
    )


def test_a_prompt_without_tools_says_none(module: str) -> None:
    """The tool list is never silently empty."""
    assert render(f"{module}:plain") == "## 1 Note\nHi.\n\n# Tools\n(none)\n"
