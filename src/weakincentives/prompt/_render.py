"""The render walk: one pass over a compiled plan, producing markdown and tools.

Everything here runs per render, so it only looks things up and formats; every check
that does not depend on params already ran when the template was compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from weakincentives.errors import PromptRenderError
from weakincentives.prompt._compile import Node
from weakincentives.prompt._visibility import SectionPath, SectionVisibility

if TYPE_CHECKING:
    from weakincentives.prompt._deferred import DeferredTools
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["Rendered", "Step", "chunks", "headings", "render_plan", "walk"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """What one walk produced, before the template adds its own fields."""

    text: str
    chunks: tuple[str, ...]
    owners: tuple[int, ...]
    tools: tuple[Tool[Any, Any], ...]
    hosted_tools: tuple[HostedTool[Any], ...]
    visibility: Mapping[SectionPath, SectionVisibility]
    deferred: DeferredTools | None = None


type Step = tuple[int, SectionVisibility, object, bool]
"""One section that renders: its node index, visibility, params, and whether the
params were made by the node's factory (not given, not the section's default)."""


def walk(
    nodes: tuple[Node, ...],
    given: dict[type[Any], object],
    overrides: Mapping[SectionPath, SectionVisibility],
    prompt_name: str,
) -> list[Step]:
    """Decide which sections render and how: the reference walk, and every render error.

    Disabled sections and the subtrees of summarized ones are skipped; enable and
    visibility functions run here, for the sections reached, in document order.
    """
    steps: list[Step] = []
    missing: list[Node] = []
    index = 0
    count = len(nodes)
    while index < count:
        node = nodes[index]
        if node.section.enabled is False:
            index = node.subtree_end
            continue
        params = given.get(node.params_type, _MISSING)
        made = False
        if params is _MISSING:
            params = node.section.default_params
            if params is None and node.params_factory is not None:
                params, made = node.params_factory(), True
            elif params is None:
                missing.append(node)
                index = node.subtree_end
                continue
        if not _is_enabled(node, params):
            index = node.subtree_end
            continue
        visibility = overrides.get(node.path) or _declared_visibility(node, params)
        steps.append((index, visibility, params, made))
        if visibility is SectionVisibility.SUMMARY:
            _check_summary(node)
            index = node.subtree_end
        else:
            index += 1
    if missing:
        raise _missing_params_error(prompt_name, missing)
    return steps


def headings(nodes: tuple[Node, ...], steps: list[Step]) -> list[str]:
    """The numbered heading of each step: ``## 2 Title``, ``### 2.1 Child``."""
    numbers = [""] * (max((node.depth for node in nodes), default=0) + 2)
    counters = [0] * len(numbers)
    result: list[str] = []
    for index, _, _, _ in steps:
        node = nodes[index]
        depth = node.depth
        counters[depth] += 1
        counters[depth + 1] = 0
        number = str(counters[depth]) if depth == 0 else f"{numbers[depth - 1]}.{counters[depth]}"
        numbers[depth] = number
        result.append(f"{node.hashes} {number} {node.title}")
    return result


def render_plan(
    nodes: tuple[Node, ...],
    given: dict[type[Any], object],
    overrides: Mapping[SectionPath, SectionVisibility],
    prompt_name: str,
) -> Rendered:
    """Render by walking the plan: the reference the compiled renders are checked against."""
    steps = walk(nodes, given, overrides, prompt_name)
    texts = chunks(nodes, steps)
    tools: list[Tool[Any, Any]] = []
    hosted: list[HostedTool[Any]] = []
    deferred: DeferredTools | None = None
    for index, visibility, _, _ in steps:
        if visibility is SectionVisibility.FULL:
            tools.extend(nodes[index].tools)
            hosted.extend(nodes[index].hosted_tools)
            deferred = deferred or nodes[index].deferred
    return Rendered(
        text="\n\n".join(texts),
        chunks=tuple(texts),
        owners=tuple(index for index, _, _, _ in steps),
        tools=tuple(tools),
        hosted_tools=tuple(hosted),
        visibility=MappingProxyType({nodes[i].path: vis for i, vis, _, _ in steps}),
        deferred=deferred,
    )


def chunks(nodes: tuple[Node, ...], steps: list[Step]) -> list[str]:
    """Each step's markdown, heading included, section by section."""
    result: list[str] = []
    for (index, visibility, params, _), heading in zip(steps, headings(nodes, steps), strict=True):
        node = nodes[index]
        if visibility is SectionVisibility.SUMMARY:
            summary = node.section.render_summary(params)
            suffix = node.suffix
            result.append(
                f"{heading}\n{summary}\n\n{suffix}" if summary else f"{heading}\n{suffix}"
            )
        else:
            body = node.section.render_body(params)
            result.append(f"{heading}\n{body}" if body else heading)
    return result


_MISSING: Any = object()


def _is_enabled(node: Node, params: object) -> bool:
    enabled = node.section.enabled
    if enabled is True or enabled is False:
        return enabled
    return bool(_call_hook(node, "enabled", enabled, params))


def _declared_visibility(node: Node, params: object) -> SectionVisibility:
    declared = node.section.visibility
    if isinstance(declared, SectionVisibility):
        return declared
    value = _call_hook(node, "visibility", declared, params)
    if not isinstance(value, SectionVisibility):
        raise PromptRenderError(
            f"visibility function of section {node.path!r} returned {value!r}, "
            "not a SectionVisibility",
            section_path=node.path,
        )
    return value


def _call_hook(node: Node, label: str, hook: Callable[[Any], object], params: object) -> object:
    try:
        return hook(params)
    except Exception as exc:
        raise PromptRenderError(
            f"{label} function of section {node.path!r} raised {type(exc).__name__}: {exc}",
            section_path=node.path,
            dataclass_type=node.params_type,
        ) from exc


def _check_summary(node: Node) -> None:
    if node.section.summary is None:
        raise PromptRenderError(
            f"section {node.path!r} renders SUMMARY (by override or visibility function) "
            "but has no summary text",
            section_path=node.path,
        )


def _missing_params_error(prompt_name: str, missing: list[Node]) -> PromptRenderError:
    first = missing[0]
    details = "; ".join(
        f"section {node.path!r} needs {node.params_type.__name__} "
        f"(required fields: {', '.join(_required_fields(node.params_type))})"
        for node in missing
    )
    return PromptRenderError(
        f"prompt {prompt_name!r} is missing params: {details}; pass an instance to render() "
        "or set default_params on the section",
        section_path=first.path,
        dataclass_type=first.params_type,
    )


def _required_fields(params_type: type[Any]) -> list[str]:
    return [
        item.name
        for item in fields(params_type)
        if item.default is MISSING and item.default_factory is MISSING and item.init
    ]
