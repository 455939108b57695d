"""The command line speaks in its own words: program name, version, help, hints."""

from __future__ import annotations

import argparse
import importlib.metadata
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from weakincentives._cli import _parser, main
from weakincentives._cli._parser import build_parser, package_version

MODULE = textwrap.dedent(
    """
    from dataclasses import dataclass, field

    from weakincentives.prompt import MarkdownSection, PromptTemplate


    @dataclass(frozen=True)
    class TaskParams:
        goal: str
        limit: int = 3


    @dataclass(frozen=True)
    class AudienceParams:
        team: str
        tone: str = "plain"
        tags: tuple[str, ...] = field(default_factory=tuple)


    @dataclass(frozen=True)
    class StyleParams:
        voice: str = "calm"


    def explode(params: StyleParams) -> bool:
        raise RuntimeError("no")


    template = PromptTemplate(
        ns="cli",
        key="messages",
        sections=[
            MarkdownSection[TaskParams](title="Task", template="Do $goal."),
            MarkdownSection[AudienceParams](title="Audience", template="For $team."),
            MarkdownSection[StyleParams](title="Style", template="Be $voice."),
            MarkdownSection(
                title="Defaults",
                template="Aim for $goal.",
                default_params=TaskParams(goal="a default"),
            ),
        ],
    )
    broken = PromptTemplate(
        ns="cli",
        key="broken",
        sections=[MarkdownSection[StyleParams](title="Style", template="x", enabled=explode)],
    )
    """
)


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "cli_message_prompts.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "cli_message_prompts"


def run_process(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=60)


class TestProgramName:
    def test_help_names_wink_by_default(self, capsys: pytest.CaptureFixture[str]) -> None:
        """`main` is the `wink` script's entry point, so help says `wink`."""
        with pytest.raises(SystemExit):
            main(["--help"])
        assert capsys.readouterr().out.startswith("usage: wink [-h] [--version] COMMAND ...\n")

    def test_installed_script_says_wink(self) -> None:
        """The console script prints `usage: wink` (it is installed next to the interpreter)."""
        completed = run_process(str(Path(sys.executable).with_name("wink")), "--help")
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.startswith("usage: wink ")

    def test_module_run_says_python_m(self) -> None:
        """Run as a module, the help shows the command the user typed."""
        completed = run_process(sys.executable, "-m", "weakincentives", "render", "--help")
        assert completed.returncode == 0, completed.stderr
        assert completed.stdout.startswith("usage: python -m weakincentives render ")
        assert "  python -m weakincentives render myagent.prompts:triage" in completed.stdout

    def test_errors_are_prefixed_with_the_program_name(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A command's error reads `PROG: error: ...` like argparse's own errors."""
        assert main(["render", "nocolon"], prog="python -m weakincentives") == 1
        assert capsys.readouterr().err == (
            "python -m weakincentives: error: expected MODULE:ATTR "
            "(e.g. myagent.prompts:triage), got 'nocolon'\n"
        )


class TestVersion:
    def test_version_prints_the_installed_version(self, capsys: pytest.CaptureFixture[str]) -> None:
        """--version prints the program name and the distribution's version."""
        with pytest.raises(SystemExit) as caught:
            main(["--version"])
        assert caught.value.code == 0
        expected = importlib.metadata.version("weakincentives")
        assert capsys.readouterr().out == f"wink {expected}\n"

    def test_uninstalled_tree_says_so(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without package metadata the version says it is unknown instead of crashing."""

        def missing(name: str) -> str:
            raise importlib.metadata.PackageNotFoundError(name)

        monkeypatch.setattr(_parser, "version", missing)
        assert package_version() == "unknown (not installed)"


class TestGroupsWithoutSubcommand:
    @pytest.mark.parametrize(
        ("argv", "usage", "listed"),
        [
            ([], "usage: wink [-h] [--version] COMMAND ...", "    render "),
            (["catalog"], "usage: wink catalog [-h] COMMAND ...", "    search "),
        ],
    )
    def test_bare_group_prints_its_help(
        self, argv: list[str], usage: str, listed: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """`wink` or `wink catalog` alone lists the subcommands instead of an argparse error."""
        out = io.StringIO()
        assert main(argv, out=out) == 0
        text = out.getvalue()
        assert text.startswith(usage + "\n")
        assert listed in text
        assert "required" not in text
        assert capsys.readouterr().err == ""


def _commands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                found.extend(_commands(child))
    return found


@pytest.mark.parametrize("parser", _commands(build_parser("wink")), ids=lambda p: p.prog)
def test_every_command_help_ends_with_an_example(parser: argparse.ArgumentParser) -> None:
    """Each command's help shows at least one full command line to copy."""
    examples = parser.format_help().split("\nexample", 1)
    assert len(examples) == 2, parser.prog
    lines = examples[1].splitlines()[1:]
    assert lines
    assert all(line.startswith(f"  {parser.prog}") for line in lines)


def test_command_tree_is_complete() -> None:
    """The tree the example test walks holds every command."""
    assert [parser.prog for parser in _commands(build_parser("wink"))] == [
        "wink",
        "wink demo",
        "wink render",
        "wink catalog",
        "wink catalog search",
        "wink catalog eval",
        "wink mcp",
        "wink mcp serve",
    ]


class TestRenderHints:
    @pytest.mark.parametrize(
        ("target", "start", "suggestion"),
        [
            ("research.py:template", "cannot import module 'research.py'", "research:template"),
            (
                "./agents/research.py:build",
                "'./agents/research.py' is not an importable module name",
                "agents.research:build",
            ),
            (
                "agents/research:build",
                "'agents/research' is not an importable module name",
                "agents.research:build",
            ),
            (
                ".research:build",
                "'.research' is not an importable module name",
                "research:build",
            ),
        ],
    )
    def test_file_path_suggests_the_module_name(
        self, target: str, start: str, suggestion: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file path where a module goes gets a did-you-mean with the module spelling."""
        assert main(["render", target], out=io.StringIO()) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"wink: error: {start}")
        assert f"did you mean {suggestion}? (run from the directory that holds" in err

    def test_missing_module_without_path_gets_no_file_hint(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The file hint only appears when the target looks like a path."""
        assert main(["render", "no_such_module_xyz:t"], out=io.StringIO()) == 1
        assert "did you mean" not in capsys.readouterr().err

    def test_missing_params_name_the_flag_with_an_example(
        self, module: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Every params type that needs a value is listed, with a --params line to copy."""
        assert main(["render", f"{module}:template"], out=io.StringIO()) == 1
        assert capsys.readouterr().err == (
            f"wink: error: {module}:template needs params: TaskParams (fields: goal); "
            "AudienceParams (fields: team); pass them with --params "
            '\'{"TaskParams": {"goal": "..."}, "AudienceParams": {"team": "..."}}\'\n'
        )

    def test_params_already_given_are_not_asked_for(
        self, module: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Only what is still missing is listed."""
        argv = ["render", f"{module}:template", "--params", '{"TaskParams": {"goal": "x"}}']
        assert main(argv, out=io.StringIO()) == 1
        assert capsys.readouterr().err == (
            f"wink: error: {module}:template needs params: AudienceParams (fields: team); "
            'pass them with --params \'{"AudienceParams": {"team": "..."}}\'\n'
        )

    def test_other_render_errors_keep_their_own_message(
        self, module: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A render error that is not about missing params is reported as it is."""
        assert main(["render", f"{module}:broken"], out=io.StringIO()) == 1
        assert capsys.readouterr().err == (
            "wink: error: enabled function of section ('style',) raised RuntimeError: no\n"
        )
