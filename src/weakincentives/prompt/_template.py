"""Prompt templates: a validated, compiled section tree that renders many times."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from weakincentives.errors import PromptRenderError, PromptValidationError, UnknownSectionError
from weakincentives.prompt._compile import compile_tree
from weakincentives.prompt._compiled import RenderCache
from weakincentives.prompt._generic import SubscriptedConstruction, subscript_args
from weakincentives.prompt._open_sections import (
    OPEN_SECTIONS,
    OpenSectionsMode,
    open_sections_tool,
)
from weakincentives.prompt._output import DeclaredOutput, StructuredOutput, structured_output_of
from weakincentives.prompt._render import render_plan
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._section import Section
from weakincentives.prompt._visibility import SectionPath, SectionVisibility, VisibilityOverrides

if TYPE_CHECKING:
    from weakincentives.prompt._tool import Tool

__all__ = ["PromptTemplate"]

# Defaults to None (a text-only prompt) so `PromptTemplate(...)` type-checks without a
# subscript; PEP 695 syntax only gains defaults in Python 3.13.
OutputT = TypeVar("OutputT", default=None)

_NO_OVERRIDES: Mapping[SectionPath, SectionVisibility] = MappingProxyType({})


class PromptTemplate(SubscriptedConstruction, DeclaredOutput, Generic[OutputT]):
    """An immutable, validated prompt blueprint: ``ns``, ``key``, ``name`` and a section tree.

    Construction checks everything that does not depend on params (keys, placeholders,
    summaries, tool names, the output type) and reports every problem at once. ``render``
    then only looks things up and substitutes, so one template can render from many
    threads. ``PromptTemplate[Answer](...)`` declares a structured output type.
    """

    def __init__(
        self,
        *,
        ns: str,
        key: str,
        sections: Sequence[Section[Any]],
        name: str | None = None,
        open_sections: OpenSectionsMode = "halt",
    ) -> None:
        problems = _check_identity(ns, key, name)
        if open_sections not in ("halt", "inline"):
            problems.append(
                PromptValidationError(
                    f"open_sections must be 'halt' or 'inline', got {open_sections!r}"
                )
            )
        resolved_name = key if name is None else name
        plan = compile_tree(tuple(sections), problems)
        args = subscript_args(type(self))
        output: tuple[object, StructuredOutput | None] = (None, None)
        try:
            output = output_contract(None if args is None else args[0], f"{ns}/{key}")
        except PromptValidationError as exc:
            problems.append(exc)
        if problems:
            raise PromptValidationError.combine(problems, subject=f"prompt {ns}/{key}")
        self._ns = ns
        self._key = key
        self._name = resolved_name
        self._sections: tuple[Section[Any], ...] = tuple(sections)
        self._nodes = plan.nodes
        self._by_path = {node.path: node for node in plan.nodes}
        self._params_types = plan.params_types
        self._tools = plan.tools
        self._descriptions_with_open_sections: Mapping[str, Mapping[str, str]] = {
            **plan.tool_param_descriptions,
            OPEN_SECTIONS.name: OPEN_SECTIONS.spec.param_descriptions,
        }
        self._output = output
        self._open_sections_mode: OpenSectionsMode = open_sections
        self._open_sections = open_sections_tool(open_sections)
        self._renders = RenderCache(
            plan.nodes, resolved_name, self._open_sections, self._descriptions_with_open_sections
        )

    @property
    def ns(self) -> str:
        """Namespace grouping related prompts, e.g. ``agents/assistant``."""
        return self._ns

    @property
    def key(self) -> str:
        """Identifier of the prompt within its namespace."""
        return self._key

    @property
    def name(self) -> str:
        """Human-facing name used in events and errors (defaults to ``key``)."""
        return self._name

    @property
    def sections(self) -> tuple[Section[Any], ...]:
        """The top-level sections in declaration order."""
        return self._sections

    @property
    def open_sections(self) -> OpenSectionsMode:
        """How summarized sections open: ``halt`` (re-render) or ``inline`` (tool result)."""
        return self._open_sections_mode

    @property
    def params_types(self) -> tuple[type[Any], ...]:
        """Every params dataclass the tree renders from, in first-use order."""
        return self._params_types

    @property
    def output_contract(self) -> tuple[object, StructuredOutput | None]:
        """The declared output type and how it is requested and parsed, analysed once."""
        return self._output

    def section_paths(self) -> tuple[SectionPath, ...]:
        """Every section path in depth-first declaration order."""
        return tuple(node.path for node in self._nodes)

    def section(self, path: SectionPath) -> Section[Any]:
        """The section at ``path``; ``UnknownSectionError`` (a ``KeyError``) when there is none."""
        try:
            return self._by_path[path].section
        except KeyError:
            known = ", ".join(".".join(p) for p in self._by_path) or "none"
            raise UnknownSectionError(
                f"prompt {self._name!r} has no section at path {path!r} (sections: {known})",
                section_path=path if isinstance(path, tuple) else None,
            ) from None

    def declared_tools(self) -> tuple[Tool[Any, Any], ...]:
        """Every function tool in the tree, depth-first, whatever renders."""
        return self._tools

    def render(
        self,
        *params: object,
        visibility_overrides: VisibilityOverrides | None = None,
    ) -> RenderedPrompt[OutputT]:
        """Render markdown and collect the tools of enabled sections that render FULL.

        ``params`` are dataclass instances matched to sections by exact type; sections
        whose type is not given use ``default_params`` or a no-argument instance.
        ``visibility_overrides`` (full paths) override declared visibility.
        """
        return self.render_with_output(
            params, visibility_overrides=visibility_overrides, output=self._output
        )

    def render_with_output[T](
        self,
        params: tuple[object, ...],
        *,
        visibility_overrides: VisibilityOverrides | None,
        output: tuple[object, StructuredOutput | None],
    ) -> RenderedPrompt[T]:
        """Render with an output contract declared elsewhere (used by ``Prompt[Answer]``)."""
        given = self._match_params(params)
        overrides = self._check_overrides(visibility_overrides)
        output_type, structured = output
        shape, text = self._renders.render(given, overrides)
        return RenderedPrompt(
            ns=self._ns,
            key=self._key,
            name=self._name,
            text=text,
            tools=shape.tools,
            hosted_tools=shape.hosted_tools,
            deferred_tools=shape.deferred,
            tool_param_descriptions=shape.tool_param_descriptions,
            output_type=output_type,
            structured_output=structured,
            visibility=shape.visibility,
            visibility_overrides=overrides,
        )

    def render_sections(
        self,
        paths: Sequence[SectionPath],
        *params: object,
        visibility_overrides: VisibilityOverrides | None = None,
    ) -> Mapping[SectionPath, str]:
        """Render only the subtrees at ``paths``, each opened to FULL.

        The markdown is what the full prompt would show for those sections with them
        opened (same heading numbers, children at their own visibility). Paths that
        do not render (disabled, or inside a summarized ancestor) map to ``""``.
        """
        unknown = [path for path in paths if path not in self._by_path]
        if unknown:
            raise PromptRenderError(
                f"no section at {unknown[0]!r} in prompt {self._name!r}",
                section_path=unknown[0],
            )
        merged = dict(self._check_overrides(visibility_overrides))
        merged.update(dict.fromkeys(paths, SectionVisibility.FULL))
        rendered = render_plan(self._nodes, self._match_params(params), merged, self._name)
        index_of = {node.path: index for index, node in enumerate(self._nodes)}
        texts: dict[SectionPath, str] = {}
        for path in paths:
            start = index_of[path]
            end = self._nodes[start].subtree_end
            texts[path] = "\n\n".join(
                chunk
                for chunk, owner in zip(rendered.chunks, rendered.owners, strict=True)
                if start <= owner < end
            )
        return MappingProxyType(texts)

    def _match_params(self, params: tuple[object, ...]) -> dict[type[Any], object]:
        given: dict[type[Any], object] = {}
        accepted = set(self._params_types)
        for value in params:
            kind = type(value)
            if kind not in accepted:
                names = ", ".join(sorted(t.__name__ for t in self._params_types)) or "none"
                raise PromptRenderError(
                    f"prompt {self._name!r} has no section taking {kind.__name__} "
                    f"(params types: {names})",
                    dataclass_type=kind,
                )
            if kind in given:
                raise PromptRenderError(
                    f"prompt {self._name!r} received two {kind.__name__} instances; pass one",
                    dataclass_type=kind,
                )
            given[kind] = value
        return given

    def _check_overrides(
        self, overrides: VisibilityOverrides | None
    ) -> Mapping[SectionPath, SectionVisibility]:
        if not overrides:
            return _NO_OVERRIDES
        checked: dict[SectionPath, SectionVisibility] = {}
        for path, value in overrides.items():
            if path not in self._by_path:
                known = ", ".join(".".join(p) for p in self._by_path)
                raise PromptRenderError(
                    f"visibility override for unknown section {path!r} in prompt "
                    f"{self._name!r} (sections: {known})",
                    section_path=path if isinstance(path, tuple) else None,
                )
            if value.__class__ is SectionVisibility:  # the usual case, without the enum call
                checked[path] = value
                continue
            try:
                checked[path] = SectionVisibility(value)
            except ValueError:
                raise PromptRenderError(
                    f"visibility override for section {path!r} must be a SectionVisibility, "
                    f"got {value!r}",
                    section_path=path,
                ) from None
        return MappingProxyType(checked)

    def __repr__(self) -> str:
        return f"PromptTemplate(ns={self._ns!r}, key={self._key!r}, name={self._name!r})"


def output_contract(output_type: object, label: str) -> tuple[object, StructuredOutput | None]:
    """Interpret a declared output type once; an unsupported one is a construction error."""
    try:
        return output_type, structured_output_of(output_type)
    except TypeError as exc:
        raise PromptValidationError(f"prompt {label}: {exc}") from None


def _check_identity(ns: object, key: object, name: object) -> list[PromptValidationError]:
    problems: list[PromptValidationError] = []
    for label, value in (("ns", ns), ("key", key)):
        if not isinstance(value, str) or not value.strip() or value != value.strip():
            problems.append(
                PromptValidationError(
                    f"prompt {label} must be a non-empty string without surrounding "
                    f"whitespace, got {value!r}"
                )
            )
    if name is not None and (not isinstance(name, str) or not name.strip()):
        problems.append(PromptValidationError(f"prompt name must be non-empty, got {name!r}"))
    return problems
