"""`render` and `catalog search`: output for good arguments, clear errors for bad ones."""

from __future__ import annotations

import io
import json
import textwrap
from pathlib import Path

import pytest

from weakincentives._cli import main

MODULE = textwrap.dedent(
    """
    from dataclasses import dataclass

    from weakincentives.prompt import (
        MarkdownSection, PromptTemplate, SectionVisibility, Tool, ToolContext, ToolResult,
    )


    @dataclass(frozen=True)
    class TaskParams:
        goal: str


    @dataclass(frozen=True)
    class Query:
        text: str


    def search(params: Query, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message="ok")


    template = PromptTemplate(
        ns="cli",
        key="sample",
        sections=[
            MarkdownSection[TaskParams](title="Task", template="Do $goal.",
                tools=[Tool(name="search", description="Search.", handler=search)]),
            MarkdownSection(title="Docs", key="docs", template="All the docs.",
                summary="Docs exist.", visibility=SectionVisibility.SUMMARY),
        ],
    )
    @dataclass(frozen=True)
    class Verdict:
        approved: bool


    structured = PromptTemplate[Verdict](
        ns="cli",
        key="verdict",
        sections=[MarkdownSection(title="Task", template="Approve?")],
    )
    not_a_prompt = 42
    """
)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "cli_sample_prompts.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cli_sample_prompts"


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


class TestRender:
    def test_render_prints_markdown_and_tool_schemas(self, module: str) -> None:
        """The markdown comes first, then each tool as the provider receives it."""
        code, text = run(
            "render", f"{module}:template", "--params", '{"TaskParams": {"goal": "x"}}'
        )
        assert code == 0
        markdown, tools = text.split("\n# Tools\n")
        assert markdown.startswith("## 1 Task\nDo x.\n\n## 2 Docs\nDocs exist.")
        assert '"name": "search"' in tools
        assert '"name": "open_sections"' in tools

    def test_a_structured_prompt_shows_the_answer_shape_the_adapter_appends(
        self, module: str
    ) -> None:
        """What the model reads ends with the answer shape, as the adapter sends it."""
        code, text = run("render", f"{module}:structured")
        assert code == 0
        markdown, _ = text.split("\n# Tools\n")
        assert markdown == (
            "## 1 Task\nApprove?\n\n## Response format\n\nReply with one JSON value only "
            "(no prose, no code fence) that matches this JSON Schema:\n\n"
            '{"type":"object","properties":{"approved":{"type":"boolean"}},'
            '"required":["approved"],"additionalProperties":false}\n'
        )

    def test_open_shows_a_summarized_section_in_full(self, module: str) -> None:
        """--open KEY renders that section FULL."""
        _, text = run(
            "render",
            f"{module}:template",
            "--params",
            '{"TaskParams": {"goal": "x"}}',
            "--open",
            "docs",
        )
        assert "## 2 Docs\nAll the docs." in text
        assert '"name": "open_sections"' not in text

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["render", "nocolon"], "expected MODULE:ATTR"),
            (["render", "no_such_module_xyz:t"], "cannot import module 'no_such_module_xyz'"),
            (["render", "{module}:missing"], "has no attribute 'missing'"),
            (["render", "{module}:not_a_prompt"], "is a int, not a PromptTemplate"),
            (
                ["render", "json:dumps"],
                "json:dumps cannot be called without arguments (missing a required argument: "
                "'obj'); point MODULE:ATTR at a PromptTemplate",
            ),
            (["render", "builtins:dict"], "builtins:dict is a dict, not a PromptTemplate"),
            (["render", "{module}:template", "--params", "{"], "--params is not valid JSON"),
            (["render", "{module}:template", "--params", "[]"], "--params must be a JSON object"),
            (
                ["render", "{module}:template", "--params", "[" * 50_000 + "]" * 50_000],
                "--params is not valid JSON: expected valid JSON, got JSON nested more than",
            ),
            (
                ["render", "{module}:template", "--params", '{"TaskParams": {"goal": "\\ud800"}}'],
                "--params is not valid JSON: expected valid JSON, got a lone surrogate",
            ),
            (
                ["render", "{module}:template", "--params", '{"Other": {}}'],
                "names 'Other', which no section takes (known: EmptyParams, TaskParams)",
            ),
            (
                ["render", "{module}:template", "--params", '{"TaskParams": {"goal": 1}}'],
                "--params TaskParams: expected a string",
            ),
            (
                ["render", "{module}:template"],
                "needs params: TaskParams (fields: goal); pass them with --params",
            ),
            (
                [
                    "render",
                    "{module}:template",
                    "--params",
                    '{"TaskParams": {"goal": "x"}}',
                    "--open",
                    "a..b",
                ],
                "is not a dot-separated section key",
            ),
        ],
    )
    def test_bad_arguments_are_clear_errors(
        self, module: str, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Each mistake exits 1 with a message saying what was wrong."""
        code, _ = run(*[arg.replace("{module}", module) for arg in argv])
        assert code == 1
        assert message in capsys.readouterr().err


def write_catalog(path: Path) -> Path:
    records = [
        {
            "tool_id": "storage/buckets/put_object",
            "name": "put_object",
            "path": ["Storage", "Buckets"],
            "summary": "Upload a file to a bucket",
            "tags": ["upload"],
            "args_schema": {"type": "object", "properties": {}},
        },
        {
            "tool_id": "coding/refactor/rename_symbol",
            "name": "rename_symbol",
            "path": ["Coding", "Refactoring"],
            "summary": "Rename a symbol across the codebase",
            "tags": ["refactor"],
            "args_schema": {"type": "object", "properties": {}},
        },
    ]
    file = path / "catalog.jsonl"
    file.write_text("\n".join(json.dumps(record) for record in records))
    return file


class TestCatalogSearch:
    def test_search_ranks_the_matching_tool_first(self, tmp_path: Path) -> None:
        """The best match for the query is listed first with its confidence."""
        code, text = run("catalog", "search", str(write_catalog(tmp_path)), "rename a symbol")
        assert code == 0
        lines = text.splitlines()
        assert lines[0] == "2 tools in catalog.jsonl; top 1 for 'rename a symbol'"
        assert lines[1].endswith("coding/refactor/rename_symbol")

    def test_category_limits_the_search(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """--category searches one subtree; no match there is an error with a hint."""
        code, _ = run(
            "catalog", "search", str(write_catalog(tmp_path)), "rename", "--category", "Storage"
        )
        assert code == 1
        assert capsys.readouterr().err == (
            "wink: error: NO_MATCH_IN_CATEGORY: no tool in category ['Storage'] matches 'rename'\n"
        )

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (["catalog", "search", "missing.jsonl", "q"], "does not exist"),
            (["catalog", "search", "{catalog}", " "], "QUERY must not be empty"),
        ],
    )
    def test_bad_arguments_are_clear_errors(
        self, tmp_path: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Missing files and empty queries are reported."""
        catalog = str(write_catalog(tmp_path))
        code, _ = run(*[arg.replace("{catalog}", catalog) for arg in argv])
        assert code == 1
        assert message in capsys.readouterr().err


def test_help_is_available_everywhere(capsys: pytest.CaptureFixture[str]) -> None:
    """Every command answers --help."""
    for argv in (
        ["--help"],
        ["demo", "--help"],
        ["render", "--help"],
        ["catalog", "search", "--help"],
    ):
        with pytest.raises(SystemExit) as caught:
            main(argv, out=io.StringIO())
        assert caught.value.code == 0
    assert "MODULE:ATTR" in capsys.readouterr().out
