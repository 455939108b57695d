"""Compile a section tree once: validate it and flatten it into a render plan."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from weakincentives.errors import PromptValidationError
from weakincentives.prompt._section import Section, is_params_type
from weakincentives.prompt._text import compile_text
from weakincentives.prompt._visibility import SectionPath, SectionVisibility, dotted

if TYPE_CHECKING:
    from weakincentives.prompt._deferred import DeferredTools
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["OPEN_SECTIONS_TOOL_NAME", "Node", "Plan", "compile_tree", "summary_suffix"]

OPEN_SECTIONS_TOOL_NAME = "open_sections"
"""Reserved for the tool the prompt injects when sections render as summaries."""

_MAX_HASHES = 6
_DEFAULT_SUFFIX = compile_text(
    "[This section is summarized. To view full content, call `open_sections` "
    'with key "${section_key}".]'
)
_DEFAULT_SUFFIX_WITH_CHILDREN = compile_text(
    '[This section is summarized. Call `open_sections` with key "${section_key}" '
    "to view full content including subsections: ${subsections}.]"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """One section in depth-first order, with everything render needs precomputed."""

    section: Section[Any]
    path: SectionPath
    depth: int
    subtree_end: int
    """Index just past this section's last descendant, to skip a hidden subtree."""
    title: str
    hashes: str
    params_type: type[Any]
    params_factory: Callable[[], object] | None
    """Builds default params when every field has a default; None otherwise."""
    tools: tuple[Tool[Any, Any], ...]
    hosted_tools: tuple[HostedTool[Any], ...]
    deferred: DeferredTools | None
    """The catalogue the section offers for native deferred loading, if any."""
    suffix: str
    """The summary suffix shown at SUMMARY visibility."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Plan:
    """A compiled tree: nodes in render order and what was gathered on the way."""

    nodes: tuple[Node, ...]
    params_types: tuple[type[Any], ...]
    tools: tuple[Tool[Any, Any], ...]
    tool_param_descriptions: Mapping[str, Mapping[str, str]]


def summary_suffix(section: Section[Any], path: SectionPath) -> str:
    """The note after a summary telling the model how to open the section."""
    values = {
        "section_key": dotted(path),
        "subsections": ", ".join(child.key for child in section.children),
    }
    custom = section.summary_suffix
    if custom is not None:
        text = custom.substitute(values)
        if section.children:
            text += f"\n(Subsections: {values['subsections']}.)"
    elif section.children:
        text = _DEFAULT_SUFFIX_WITH_CHILDREN.substitute(values)
    else:
        text = _DEFAULT_SUFFIX.substitute(values)
    return f"---\n{text}"


def compile_tree(sections: tuple[Section[Any], ...], problems: list[PromptValidationError]) -> Plan:
    """Validate ``sections`` and flatten them; problems are appended, not raised."""
    if not sections:
        problems.append(PromptValidationError("a prompt needs at least one section"))
    builder = _Builder(problems)
    builder.visit_siblings(sections, parent=(), depth=0)
    return Plan(
        nodes=tuple(node for node in builder.slots if node is not None),
        params_types=tuple(builder.params_types),
        tools=tuple(builder.tools),
        tool_param_descriptions=MappingProxyType(builder.descriptions),
    )


class _Builder:
    def __init__(self, problems: list[PromptValidationError]) -> None:
        self.problems = problems
        self.slots: list[Node | None] = []
        self.params_types: list[type[Any]] = []
        self.tools: list[Tool[Any, Any]] = []
        self.descriptions: dict[str, Mapping[str, str]] = {}
        self.tool_owner: dict[str, SectionPath] = {}

    def visit_siblings(
        self, sections: tuple[Section[Any], ...], *, parent: SectionPath, depth: int
    ) -> None:
        seen: set[str] = set()
        for section in sections:
            if section.key in seen:
                where = f"under {parent!r}" if parent else "at the top level"
                self.problems.append(
                    PromptValidationError(
                        f"duplicate section key {section.key!r} {where}; sibling keys must "
                        "be unique",
                        section_path=(*parent, section.key),
                    )
                )
                continue
            seen.add(section.key)
            self.visit(section, parent=parent, depth=depth)

    def visit(self, section: Section[Any], *, parent: SectionPath, depth: int) -> None:
        path = (*parent, section.key)
        params_type = section.params_type
        factory = self.check_params(section, path, params_type)
        suffix = summary_suffix(section, path) if self.check_summary(section, path) else ""
        index = len(self.slots)
        self.slots.append(None)  # filled once the subtree's extent is known
        self.collect_tools(section, path)
        self.visit_siblings(section.children, parent=path, depth=depth + 1)
        self.slots[index] = Node(
            section=section,
            path=path,
            depth=depth,
            subtree_end=len(self.slots),
            title=section.title,
            hashes="#" * min(depth + 2, _MAX_HASHES),
            params_type=params_type,
            params_factory=factory,
            tools=section.tools(),
            hosted_tools=section.hosted_tools(),
            deferred=section.deferred_tools(),
            suffix=suffix,
        )

    def check_params(
        self, section: Section[Any], path: SectionPath, params_type: type[Any]
    ) -> Callable[[], object] | None:
        if not is_params_type(params_type):
            self.problems.append(
                PromptValidationError(
                    f"params type {params_type!r} of section {path!r} is not a dataclass",
                    section_path=path,
                    dataclass_type=params_type,
                )
            )
            return None
        if params_type not in self.params_types:
            self.params_types.append(params_type)
        names = [item.name for item in fields(params_type)]
        for label, text in section.texts().items():
            for fragment in text.invalid:
                self.problems.append(
                    PromptValidationError(
                        f"invalid placeholder {fragment!r} in {label} of section {path!r}; "
                        "use $name or ${name}, and $$ for a literal dollar sign",
                        section_path=path,
                        dataclass_type=params_type,
                    )
                )
            for placeholder in text.placeholders:
                if placeholder not in names:
                    self.problems.append(
                        PromptValidationError(
                            f"placeholder ${{{placeholder}}} in {label} of section {path!r} "
                            f"is not a field of {params_type.__name__} "
                            f"(fields: {', '.join(names) or 'none'})",
                            section_path=path,
                            dataclass_type=params_type,
                            placeholder=placeholder,
                        )
                    )
        required = [
            item
            for item in fields(params_type)
            if item.init and item.default is MISSING and item.default_factory is MISSING
        ]
        return None if required else params_type

    def check_summary(self, section: Section[Any], path: SectionPath) -> bool:
        if section.visibility is SectionVisibility.SUMMARY and section.summary is None:
            self.problems.append(
                PromptValidationError(
                    f"section {path!r} is declared SUMMARY but has no summary text; "
                    "pass summary=...",
                    section_path=path,
                )
            )
        suffix = section.summary_suffix
        unknown = [] if suffix is None else [p for p in suffix.placeholders if p != "section_key"]
        for placeholder in unknown:
            self.problems.append(
                PromptValidationError(
                    f"placeholder ${{{placeholder}}} in summary_suffix of section "
                    f"{path!r} is not supported; only ${{section_key}} is",
                    section_path=path,
                    placeholder=placeholder,
                )
            )
        return not unknown

    def collect_tools(self, section: Section[Any], path: SectionPath) -> None:
        named: list[tuple[str, Tool[Any, Any] | None]] = [(t.name, t) for t in section.tools()]
        named.extend((hosted.name, None) for hosted in section.hosted_tools())
        for name, tool in named:
            if name == OPEN_SECTIONS_TOOL_NAME:
                self.problems.append(
                    PromptValidationError(
                        f"tool name {name!r} in section {path!r} is reserved for the prompt's "
                        "built-in tool that opens summarized sections; rename the tool",
                        section_path=path,
                        tool_name=name,
                    )
                )
                continue
            owner = self.tool_owner.get(name)
            if owner is not None:
                self.problems.append(
                    PromptValidationError(
                        f"duplicate tool name {name!r}: declared by section {owner!r} and "
                        f"section {path!r}",
                        section_path=path,
                        tool_name=name,
                    )
                )
                continue
            self.tool_owner[name] = path
            if tool is not None:
                self.add_tool(tool, path)

    def add_tool(self, tool: Tool[Any, Any], path: SectionPath) -> None:
        # A Tool is fully analysed when it is built, so its spec is always there.
        self.descriptions[tool.name] = tool.spec.param_descriptions
        self.tools.append(tool)
