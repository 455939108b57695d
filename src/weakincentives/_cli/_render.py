"""``wink render MODULE:ATTR``: show a prompt as the model sees it."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from weakincentives._cli._commands import CommandGroup, add_command
from weakincentives.adapters import OutputSchema, render_output_instructions
from weakincentives.adapters.openai import function_tool
from weakincentives.errors import ParseError, PromptRenderError, WinkError
from weakincentives.prompt import (
    Prompt,
    PromptTemplate,
    Section,
    SectionPath,
    SectionVisibility,
    parse_dotted,
)
from weakincentives.serde import loads, parse

__all__ = ["CommandError", "load_prompt", "parse_params", "register", "render_command"]


class CommandError(WinkError):
    """A command-line argument is wrong; the message says which and how to fix it."""


def load_prompt(target: str) -> Prompt[Any]:
    """Import ``module:attribute`` (a template, a prompt, or a factory) as a Prompt."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CommandError(f"expected MODULE:ATTR (e.g. myagent.prompts:triage), got {target!r}")
    if "/" in module_name or "\\" in module_name or module_name.startswith("."):
        # A path (or a relative import) is never importable by name: say so up front.
        raise CommandError(
            f"{module_name!r} is not an importable module name (MODULE:ATTR takes a dotted "
            f"module name, not a file path): {_file_hint(module_name, attribute)}"
        )
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        hint = ""
        if module_name.endswith(".py"):
            hint = "; MODULE:ATTR takes a module name, not a file: " + _file_hint(
                module_name, attribute
            )
        raise CommandError(f"cannot import module {module_name!r}: {exc}{hint}") from exc
    try:
        value = getattr(module, attribute)
    except AttributeError:
        raise CommandError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if callable(value) and not isinstance(value, PromptTemplate | Prompt):
        _check_takes_no_arguments(target, value)
        value = value()
    if isinstance(value, PromptTemplate):
        return Prompt(value)
    if isinstance(value, Prompt):
        return value
    raise CommandError(f"{target} is a {type(value).__name__}, not a PromptTemplate or Prompt")


def _check_takes_no_arguments(target: str, factory: Callable[..., object]) -> None:
    """Refuse a factory that cannot be called with no arguments, saying what it needs."""
    try:
        inspect.signature(factory).bind()
    except TypeError as exc:
        raise CommandError(
            f"{target} cannot be called without arguments ({exc}); point MODULE:ATTR at a "
            "PromptTemplate, a Prompt, or a function that takes none"
        ) from None
    except ValueError:  # no signature to read (some builtins): calling it will tell
        return


def _file_hint(module_name: str, attribute: str) -> str:
    """The did-you-mean for a file path given where a module name goes."""
    path = module_name.replace("\\", "/").removesuffix(".py")
    parts = [part.lstrip(".") for part in path.split("/") if part.lstrip(".")]
    return (
        f"did you mean {'.'.join(parts)}:{attribute}? (run from the directory that holds "
        "the module, or add that directory to PYTHONPATH)"
    )


def parse_params(prompt: Prompt[Any], text: str | None) -> tuple[object, ...]:
    """Build params from ``{"TypeName": {...fields}}`` JSON, one entry per params type."""
    if text is None:
        return ()
    try:
        raw = loads(text)  # refuses NaN, lone surrogates and nesting json.loads recurses on
    except ParseError as exc:
        raise CommandError(f"--params is not valid JSON: {exc.message}") from exc
    if not isinstance(raw, dict):
        raise CommandError('--params must be a JSON object like {"TaskParams": {"goal": "..."}}')
    by_name = {kind.__name__: kind for kind in prompt.template.params_types}
    params: list[object] = []
    for name, fields in raw.items():
        kind = by_name.get(name)
        if kind is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise CommandError(f"--params names {name!r}, which no section takes (known: {known})")
        try:
            params.append(parse(kind, fields))
        except ParseError as exc:
            raise CommandError(f"--params {name}: {exc.message}") from exc
    return tuple(params)


def render_command(
    target: str, params_json: str | None, open_keys: Sequence[str], out: TextIO
) -> int:
    """Print the rendered markdown and the tool schemas of a user's prompt."""
    prompt = load_prompt(target)
    params = parse_params(prompt, params_json)
    overrides: dict[SectionPath, SectionVisibility] = {}
    for key in open_keys:
        path = parse_dotted(key)
        if not path:
            raise CommandError(f"--open {key!r} is not a dot-separated section key")
        overrides[path] = SectionVisibility.FULL
    try:
        rendered = prompt.render(*params, visibility_overrides=overrides)
    except PromptRenderError as exc:
        missing = _missing_params(prompt.template, params)
        if exc.dataclass_type not in missing:
            raise
        raise CommandError(_missing_message(target, missing)) from exc
    out.write(rendered.text + "\n")
    if rendered.structured_output is not None:
        # The adapter appends the answer shape to what the model reads (by default).
        schema = OutputSchema.of(rendered.structured_output)
        out.write("\n" + render_output_instructions(schema) + "\n")
    out.write("\n# Tools\n")
    for tool in rendered.tools:
        problem = tool.spec.strict_problem
        if problem is not None:
            out.write(
                f"# note: {tool.name} is sent non-strict (strict: false) because {problem}; "
                "the provider will not enforce its schema, the library still validates the "
                "arguments\n"
            )
        out.write(json.dumps(function_tool(tool), indent=2) + "\n")
    for hosted in rendered.hosted_tools:
        out.write(f"# hosted: {hosted.name} (kind {hosted.kind})\n")
    if not rendered.tools and not rendered.hosted_tools:
        out.write("(none)\n")
    return 0


def _sections(sections: Sequence[Section[Any]]) -> Iterator[Section[Any]]:
    for section in sections:
        yield section
        yield from _sections(section.children)


def _required_fields(params_type: type[Any]) -> list[str]:
    return [
        item.name
        for item in dataclasses.fields(params_type)
        if item.init
        and item.default is dataclasses.MISSING
        and item.default_factory is dataclasses.MISSING
    ]


def _missing_params(
    template: PromptTemplate[Any], given: Sequence[object]
) -> dict[type[Any], list[str]]:
    """Params types some section needs, that --params did not give and nothing defaults."""
    given_types = {type(item) for item in given}
    missing: dict[type[Any], list[str]] = {}
    for section in _sections(template.sections):
        kind = section.params_type
        if section.default_params is not None or kind in given_types or kind in missing:
            continue
        required = _required_fields(kind)
        if required:
            missing[kind] = required
    return missing


def _missing_message(target: str, missing: dict[type[Any], list[str]]) -> str:
    needs = "; ".join(
        f"{kind.__name__} (fields: {', '.join(required)})" for kind, required in missing.items()
    )
    example = json.dumps(
        {kind.__name__: dict.fromkeys(required, "...") for kind, required in missing.items()}
    )
    return f"{target} needs params: {needs}; pass them with --params '{example}'"


def _run(arguments: argparse.Namespace, out: TextIO) -> int:
    return render_command(arguments.target, arguments.params, arguments.open, out)


def register(group: CommandGroup) -> None:
    """Add ``render`` to the command line."""
    render = add_command(
        group,
        "render",
        summary="print a prompt's markdown and tool schemas",
        description=(
            "Render MODULE:ATTR (a PromptTemplate, a Prompt, or a function returning one) as "
            "the model would see it: the markdown, then each tool as the provider receives "
            "it. MODULE is a module name importable from the current directory, not a file "
            "path."
        ),
        examples=(
            'myagent.prompts:triage --params \'{"TaskParams": {"goal": "triage"}}\'',
            'myagent.prompts:triage --params \'{"TaskParams": {"goal": "triage"}}\' --open runbook',
        ),
        run=_run,
    )
    render.add_argument(
        "target", metavar="MODULE:ATTR", help="module and attribute, e.g. myagent.prompts:triage"
    )
    render.add_argument(
        "--params",
        default=None,
        metavar="JSON",
        help='params by dataclass name: {"TaskParams": {"goal": "..."}}',
    )
    render.add_argument(
        "--open",
        action="append",
        default=[],
        metavar="KEY",
        help="open a summarized section by dotted key (repeatable)",
    )
