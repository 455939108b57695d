"""``python -m weakincentives render MODULE:ATTR``: show a prompt as the model sees it."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from weakincentives.adapters.openai import function_tool
from weakincentives.errors import ParseError, WinkError
from weakincentives.prompt import (
    Prompt,
    PromptTemplate,
    SectionPath,
    SectionVisibility,
    parse_dotted,
)
from weakincentives.serde import parse

__all__ = ["CommandError", "load_prompt", "parse_params", "render_command"]


class CommandError(WinkError):
    """A command-line argument is wrong; the message says which and how to fix it."""


def load_prompt(target: str) -> Prompt[Any]:
    """Import ``module:attribute`` (a template, a prompt, or a factory) as a Prompt."""
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise CommandError(f"expected MODULE:ATTR (e.g. myagent.prompts:triage), got {target!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CommandError(f"cannot import module {module_name!r}: {exc}") from exc
    try:
        value = getattr(module, attribute)
    except AttributeError:
        raise CommandError(f"module {module_name!r} has no attribute {attribute!r}") from None
    if callable(value) and not isinstance(value, PromptTemplate | Prompt):
        value = value()
    if isinstance(value, PromptTemplate):
        return Prompt(value)
    if isinstance(value, Prompt):
        return value
    raise CommandError(f"{target} is a {type(value).__name__}, not a PromptTemplate or Prompt")


def parse_params(prompt: Prompt[Any], text: str | None) -> tuple[object, ...]:
    """Build params from ``{"TypeName": {...fields}}`` JSON, one entry per params type."""
    if text is None:
        return ()
    try:
        raw = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"--params is not valid JSON: {exc}") from exc
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
    rendered = prompt.render(*params, visibility_overrides=overrides)
    out.write(rendered.text + "\n")
    out.write("\n# Tools\n")
    for tool in rendered.tools:
        out.write(json.dumps(function_tool(tool), indent=2) + "\n")
    for hosted in rendered.hosted_tools:
        out.write(f"# hosted: {hosted.name} (kind {hosted.kind})\n")
    if not rendered.tools and not rendered.hosted_tools:
        out.write("(none)\n")
    return 0
