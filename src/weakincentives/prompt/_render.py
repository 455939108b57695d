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
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["Rendered", "render_plan"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Rendered:
    """What one walk produced, before the template adds its own fields."""

    text: str
    chunks: tuple[str, ...]
    owners: tuple[int, ...]
    tools: tuple[Tool[Any, Any], ...]
    hosted_tools: tuple[HostedTool[Any], ...]
    visibility: Mapping[SectionPath, SectionVisibility]


@dataclass(slots=True)
class _Walk:
    """Mutable state of one render; never shared between renders."""

    chunks: list[str]
    owners: list[int]
    """For each chunk, the index of the node that produced it."""
    tools: list[Tool[Any, Any]]
    hosted: list[HostedTool[Any]]
    visibility: dict[SectionPath, SectionVisibility]
    missing: list[Node]


def render_plan(
    nodes: tuple[Node, ...],
    given: dict[type[Any], object],
    overrides: Mapping[SectionPath, SectionVisibility],
    prompt_name: str,
) -> Rendered:
    walk = _Walk(chunks=[], owners=[], tools=[], hosted=[], visibility={}, missing=[])
    numbers = [""] * (max((node.depth for node in nodes), default=0) + 2)
    counters = [0] * len(numbers)
    index = 0
    count = len(nodes)
    while index < count:
        node = nodes[index]
        if node.section.enabled is False:
            index = node.subtree_end
            continue
        params = _params_for(node, given)
        if params is _MISSING:
            walk.missing.append(node)
            index = node.subtree_end
            continue
        if not _is_enabled(node, params):
            index = node.subtree_end
            continue
        depth = node.depth
        counters[depth] += 1
        counters[depth + 1] = 0
        number = str(counters[depth]) if depth == 0 else f"{numbers[depth - 1]}.{counters[depth]}"
        numbers[depth] = number
        heading = f"{node.hashes} {number} {node.title}"
        visibility = overrides.get(node.path) or _declared_visibility(node, params)
        walk.visibility[node.path] = visibility
        walk.owners.append(index)
        if visibility is SectionVisibility.SUMMARY:
            walk.chunks.append(_summary_chunk(node, heading, params))
            index = node.subtree_end
            continue
        body = node.section.render_body(params)
        walk.chunks.append(f"{heading}\n{body}" if body else heading)
        walk.tools.extend(node.tools)
        walk.hosted.extend(node.hosted_tools)
        index += 1
    if walk.missing:
        raise _missing_params_error(prompt_name, walk.missing)
    return Rendered(
        text="\n\n".join(walk.chunks),
        chunks=tuple(walk.chunks),
        owners=tuple(walk.owners),
        tools=tuple(walk.tools),
        hosted_tools=tuple(walk.hosted),
        visibility=MappingProxyType(walk.visibility),
    )


_MISSING: Any = object()


def _params_for(node: Node, given: dict[type[Any], object]) -> object:
    params = given.get(node.params_type, _MISSING)
    if params is not _MISSING:
        return params
    default = node.section.default_params
    if default is not None:
        return default
    if node.params_factory is not None:
        return node.params_factory()
    return _MISSING


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


def _summary_chunk(node: Node, heading: str, params: object) -> str:
    if node.section.summary is None:
        raise PromptRenderError(
            f"section {node.path!r} renders SUMMARY (by override or visibility function) "
            "but has no summary text",
            section_path=node.path,
        )
    summary = node.section.render_summary(params)
    return f"{heading}\n{summary}\n\n{node.suffix}" if summary else f"{heading}\n{node.suffix}"


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
