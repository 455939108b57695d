"""The catalogue as deferred tools, for providers that load tools on demand natively.

``ToolDiscoverySection`` offers its catalogue as :class:`~weakincentives.prompt.DeferredTools`:
every tool the caller may call, with a name a provider accepts, its schema, and its
top-level category as the group (a namespace on OpenAI). Hidden and uncallable tools
are left out, so no declaration, namespace or loaded definition ever shows them.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from weakincentives.discovery._catalog import CatalogTool, ToolCatalog
from weakincentives.prompt import DeferredTool, DeferredTools, Tool
from weakincentives.serde import strict_problem

__all__ = ["MAX_WIRE_NAME", "deferred_tools", "wire_name"]

MAX_WIRE_NAME = 64
"""Function names are ``[a-zA-Z0-9_-]{1,64}`` on both OpenAI and Anthropic."""

_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")
_DIGEST = 10


def wire_name(text: str, taken: set[str]) -> str:
    """``text`` as a provider-safe function name, unique among ``taken`` (which it joins).

    Other characters become ``_``; a name that then fits and is free is used, since the
    name is what the model reads. A name too long or already taken is cut and given a
    digest of the original, so two ids never merge.
    """
    plain = _UNSAFE.sub("_", text).strip("_")
    if _NAME.fullmatch(plain) and plain not in taken:
        taken.add(plain)
        return plain
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    base = plain[: MAX_WIRE_NAME - _DIGEST - 1] or "tool"
    name = f"{base}_{digest[:_DIGEST]}"
    salt = 0
    while name in taken:  # a digest prefix collision: vanishingly rare, still handled
        salt += 1
        name = f"{base}_{hashlib.sha256(f'{salt}:{text}'.encode()).hexdigest()[:_DIGEST]}"
    taken.add(name)
    return name


def deferred_tools(
    catalog: ToolCatalog,
    callable_tools: Iterable[CatalogTool],
    *,
    search: Tool[object, object],
    call: Tool[object, object],
    replaces: tuple[str, ...],
) -> DeferredTools:
    """The deferred form of ``callable_tools`` (what the caller may call, catalogue order).

    Tools are grouped by the top-level category of their primary path; each group's
    description is the category's summary, or says what the group holds.
    """
    names: set[str] = set()
    taken_groups: set[str] = set()
    groups: dict[str, str] = {}
    group_names: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    tools: list[DeferredTool] = []
    for tool in callable_tools:
        top = tool.path[0]
        group = group_names.get(top)
        if group is None:
            group = group_names[top] = wire_name(top, taken_groups)
            members[group] = []
        members[group].append(tool.name)
        tools.append(
            DeferredTool(
                tool_id=tool.tool_id,
                name=wire_name(tool.tool_id, names),
                description=tool.summary or tool.name,
                parameters=tool.args_schema,
                strict=strict_problem(tool.args_schema) is None,
                group=group,
            )
        )
    for top, group in group_names.items():
        node = catalog.node((top,))
        summary = node.summary if node is not None else ""
        shown = ", ".join(members[group][:3])
        groups[group] = summary or f"Tools in the {top} category, such as {shown}."
    order = {group: index for index, group in enumerate(groups)}
    return DeferredTools(
        tools=tuple(sorted(tools, key=lambda item: order[item.group])),
        groups=groups,
        search_tool=search.name,
        search_description=search.description,
        search_parameters=search.spec.parameters_schema,
        call_tool=call.name,
        replaces=replaces,
    )
