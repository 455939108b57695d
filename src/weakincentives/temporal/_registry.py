"""What a worker serves: its prompts by ``ns``/``key``, their tools, one provider.

The workflow finds an evaluation's prompt here by the ``ns``/``key`` of its input, and
each activity is built for one prompt (its provider exchange) or one of its tools. A
tool the model can call is a tool declared in the prompt's tree or the built-in
``open_sections``; pure tools (``Tool(pure=True)``) run in the workflow and get no
activity. Everything here is read by workflow code, so it must be the same on every
worker of a task queue (see ``specs/TEMPORAL.md``, "Versioning").
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from temporalio.common import RetryPolicy

from weakincentives.adapters import LoopSettings, Provider
from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import (
    OPEN_SECTIONS,
    OPEN_SECTIONS_INLINE,
    Prompt,
    PromptTemplate,
    Tool,
)
from weakincentives.temporal._documents import send_activity_name, tool_activity_name

__all__ = ["ActivityOptions", "PromptEntry", "Registry", "prompt_modules"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityOptions:
    """How the workflow runs its activities; the same on every worker of a queue."""

    send_timeout: timedelta
    tool_timeout: timedelta
    heartbeat_timeout: timedelta | None
    retry_policy: RetryPolicy | None
    payload_limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PromptEntry:
    """One registered prompt: the prompt, the tools its renders may hold, activity names."""

    prompt: Prompt[Any]
    tools: Mapping[str, Tool[Any, Any]]
    send_activity: str
    tool_activities: Mapping[str, str] = field(default_factory=dict)
    """Activity names of the tools that run as activities (not the pure ones)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Registry:
    """The prompts a worker serves, with its provider, loop settings and options."""

    provider: Provider[Any, Any]
    settings: LoopSettings
    options: ActivityOptions
    extras: Mapping[str, object]
    prompts: Mapping[tuple[str, str], PromptEntry]

    def entry(self, ns: str, key: str) -> PromptEntry:
        """The prompt ``ns``/``key``; ``ConfigValidationError`` naming those registered."""
        found = self.prompts.get((ns, key))
        if found is None:
            known = ", ".join(f"{n}/{k}" for n, k in sorted(self.prompts)) or "none"
            raise ConfigValidationError(
                f"prompt {ns}/{key} is not registered with this worker (registered: {known}); "
                "pass it to EvaluationWorker(prompts=...) on every worker of the task queue",
                field_name="prompts",
            )
        return found


def entries(
    prompts: Iterable[Prompt[Any] | PromptTemplate[Any]],
) -> Mapping[tuple[str, str], PromptEntry]:
    """Registry entries for ``prompts``; a prompt registered twice, or not a prompt, raises."""
    found: dict[tuple[str, str], PromptEntry] = {}
    activities: dict[str, str] = {}
    for given in prompts:
        prompt = _as_prompt(given)
        identity = (prompt.ns, prompt.key)
        if identity in found:
            raise ConfigValidationError(
                f"prompt {prompt.ns}/{prompt.key} is registered twice", field_name="prompts"
            )
        tools = _tools(prompt)
        entry = PromptEntry(
            prompt=prompt,
            tools=MappingProxyType(tools),
            send_activity=send_activity_name(prompt.ns, prompt.key),
            tool_activities=MappingProxyType(
                {
                    name: tool_activity_name(prompt.ns, prompt.key, name)
                    for name, tool in tools.items()
                    if not tool.pure and tool.handler is not None
                }
            ),
        )
        label = f"(ns {prompt.ns!r}, key {prompt.key!r})"
        for name in (entry.send_activity, *entry.tool_activities.values()):
            other = activities.setdefault(name, label)
            if other != label:
                raise ConfigValidationError(
                    f"prompts {other} and {label} both need the activity {name!r}; give one "
                    "of them another ns or key",
                    field_name="prompts",
                )
        found[identity] = entry
    return MappingProxyType(found)


def _as_prompt(given: object) -> Prompt[Any]:
    if isinstance(given, PromptTemplate):
        return Prompt(given)
    if isinstance(given, Prompt):
        return given
    raise ConfigValidationError(
        f"prompts must be Prompt or PromptTemplate values, got {type(given).__name__}",
        field_name="prompts",
        value=given,
    )


def _tools(prompt: Prompt[Any]) -> dict[str, Tool[Any, Any]]:
    """Every tool a render of ``prompt`` may hold, by name."""
    template = prompt.template
    builtin = OPEN_SECTIONS if template.open_sections == "halt" else OPEN_SECTIONS_INLINE
    tools: dict[str, Tool[Any, Any]] = {builtin.name: builtin}
    for tool in template.declared_tools():
        tools[tool.name] = tool
    return tools


def prompt_modules(prompts: Sequence[Prompt[Any]], extra: Iterable[str]) -> tuple[str, ...]:
    """Modules the sandbox must pass through: where the prompts' types and handlers live.

    A workflow parses the prompt's params and the tools' results by type name; a module
    imported afresh inside the sandbox would give classes that are not the ones the
    registered prompt was built with.
    """
    modules: set[str] = {"weakincentives", *extra}
    for prompt in prompts:
        owners: list[object] = [*prompt.template.params_types, prompt.output_type]
        for tool in prompt.template.declared_tools():
            owners.extend((tool.handler, tool.spec.params_type, tool.spec.result_type))
        for owner in owners:
            module = getattr(owner, "__module__", None)
            if isinstance(module, str) and module != "builtins" and module in sys.modules:
                modules.add(module)
    return tuple(sorted(modules))
