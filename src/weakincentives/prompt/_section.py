"""The section base class: one titled node of a prompt tree."""

from __future__ import annotations

import re
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, is_dataclass
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import TypeVar

from weakincentives.errors import PromptValidationError
from weakincentives.prompt._text import CompiledText, compile_text
from weakincentives.prompt._tool import Tool
from weakincentives.prompt._visibility import SectionVisibility

if TYPE_CHECKING:
    from weakincentives.prompt._deferred import DeferredTools
    from weakincentives.prompt._hosted import HostedTool

__all__ = ["EmptyParams", "Section", "slugify"]


@dataclass(frozen=True, slots=True)
class EmptyParams:
    """Params for sections that take none; filled in automatically at render time."""


# A TypeVar default (PEP 696) lets `MarkdownSection(title=..., template=...)` type-check
# without a subscript. PEP 695 syntax only gains defaults in Python 3.13, hence
# typing_extensions here.
ParamsT = TypeVar("ParamsT", default=EmptyParams)

KEY_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

type Enabled[P] = bool | Callable[[P], bool]
type Visibility[P] = SectionVisibility | Callable[[P], SectionVisibility]


def slugify(title: str) -> str:
    """Turn a title into a section key: lowercase, runs of other characters become ``-``."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


class Section(ABC, Generic[ParamsT]):
    """A titled node of a prompt tree that renders markdown from a params dataclass.

    Sections are immutable once built. The params type comes from the subscript
    (``MarkdownSection[TaskParams](...)``), a subclass's base
    (``class Mine(MarkdownSection[TaskParams])``) or ``default_params``; a section with
    none takes :class:`EmptyParams`. Validation that needs the whole tree (placeholders,
    sibling keys, tool names) runs once when a ``PromptTemplate`` is built.
    """

    def __init__(
        self,
        *,
        title: str,
        key: str | None = None,
        default_params: ParamsT | None = None,
        children: Sequence[Section[Any]] = (),
        enabled: Enabled[ParamsT] = True,
        tools: Sequence[Tool[Any, Any]] = (),
        hosted_tools: Sequence[HostedTool[Any]] = (),
        summary: str | None = None,
        summary_suffix: str | None = None,
        visibility: Visibility[ParamsT] = SectionVisibility.FULL,
        accepts_overrides: bool = True,
    ) -> None:
        resolved_key = slugify(title) if key is None else key
        problems = _check_identity(title, resolved_key, key is None)
        problems.extend(_check_members(children, tools, resolved_key))
        if problems:
            raise PromptValidationError.combine(problems, subject=f"section {resolved_key!r}")
        self._title = title
        self._key = resolved_key
        self._default_params = default_params
        self._children: tuple[Section[Any], ...] = tuple(children)
        self._enabled = enabled
        self._tools: tuple[Tool[Any, Any], ...] = tuple(tools)
        self._hosted_tools: tuple[HostedTool[Any], ...] = tuple(hosted_tools)
        self._summary = None if summary is None else compile_text(summary)
        self._summary_suffix = None if summary_suffix is None else compile_text(summary_suffix)
        self._visibility = visibility
        self._accepts_overrides = accepts_overrides

    @property
    def title(self) -> str:
        """The heading text shown to the model."""
        return self._title

    @property
    def key(self) -> str:
        """The segment naming this section in paths; lowercase, no dots."""
        return self._key

    @property
    def default_params(self) -> ParamsT | None:
        """Params used when ``render`` receives no instance of this section's params type."""
        return self._default_params

    @property
    def children(self) -> tuple[Section[Any], ...]:
        """Child sections, rendered after this section's body in declaration order."""
        return self._children

    @property
    def enabled(self) -> Enabled[ParamsT]:
        """Whether the section (and its subtree) renders: a bool or a predicate on params."""
        return self._enabled

    @property
    def visibility(self) -> Visibility[ParamsT]:
        """The declared visibility: a value or a function of params."""
        return self._visibility

    @property
    def summary(self) -> CompiledText | None:
        """The compiled summary template shown at SUMMARY visibility."""
        return self._summary

    @property
    def summary_suffix(self) -> CompiledText | None:
        """A custom note appended to the summary; ``${section_key}`` names the section."""
        return self._summary_suffix

    @property
    def accepts_overrides(self) -> bool:
        """Whether automatic override pipelines may rewrite this section."""
        return self._accepts_overrides

    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """Function tools this section contributes while it renders FULL."""
        return self._tools

    def hosted_tools(self) -> tuple[HostedTool[Any], ...]:
        """Provider-executed tools this section contributes while it renders FULL."""
        return self._hosted_tools

    def deferred_tools(self) -> DeferredTools | None:
        """A catalogue providers may load on demand while this section renders FULL.

        None by default. A section returning one offers its tools as the fallback for
        providers without native deferred loading (see ``prompt._deferred``).
        """
        return None

    @property
    def params_type(self) -> type[Any]:
        """The params dataclass this section renders from."""
        return _resolve_params_type(self)

    def texts(self) -> dict[str, CompiledText]:
        """Every compiled text whose placeholders come from params, by name, for validation."""
        return {} if self._summary is None else {"summary": self._summary}

    @abstractmethod
    def render_body(self, params: ParamsT) -> str:
        """Return the markdown body shown at FULL visibility, without the heading."""

    def render_summary(self, params: ParamsT) -> str:
        """Return the summary text shown at SUMMARY visibility, without heading or suffix."""
        if self._summary is None:
            raise AssertionError("PromptTemplate only asks sections with a summary")
        return self._summary.render(params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(key={self._key!r}, title={self._title!r})"


def _check_identity(title: object, key: object, derived: bool) -> list[PromptValidationError]:
    problems: list[PromptValidationError] = []
    if not isinstance(title, str) or not title.strip():
        problems.append(PromptValidationError(f"section title must be non-empty, got {title!r}"))
    if not isinstance(key, str) or KEY_PATTERN.fullmatch(key) is None:
        origin = f" (derived from title {title!r}; pass key=...)" if derived else ""
        problems.append(
            PromptValidationError(
                f"section key {key!r}{origin} must match {KEY_PATTERN.pattern}: lowercase "
                "letters, digits, '-' or '_', no dots (dots join keys into paths)"
            )
        )
    return problems


def _check_members(
    children: Sequence[object], tools: Sequence[object], key: str
) -> list[PromptValidationError]:
    problems = [
        PromptValidationError(
            f"child {index} of section {key!r} is a {type(child).__name__}, not a Section",
            section_path=(key,),
        )
        for index, child in enumerate(children)
        if not isinstance(child, Section)
    ]
    problems.extend(
        PromptValidationError(
            f"tool {index} of section {key!r} is a {type(tool).__name__}, not a Tool",
            section_path=(key,),
        )
        for index, tool in enumerate(tools)
        if not isinstance(tool, Tool)
    )
    return problems


def _resolve_params_type(section: Section[Any]) -> type[Any]:
    alias = getattr(section, "__orig_class__", None)
    if alias is not None:
        return _concrete(typing.get_args(alias)[0])
    for klass in type(section).__mro__:
        for base in getattr(klass, "__orig_bases__", ()):
            origin = typing.get_origin(base)
            if isinstance(origin, type) and issubclass(origin, Section):
                args = typing.get_args(base)
                if args and not isinstance(args[0], typing.TypeVar):
                    return _concrete(args[0])
    if section.default_params is not None:
        return type(section.default_params)
    return EmptyParams


def _concrete(candidate: object) -> type[Any]:
    if isinstance(candidate, type):
        return candidate
    # Not a class (a TypeVar, a union, a string): the template reports it as invalid.
    return type(candidate)


def is_params_type(candidate: type[Any]) -> bool:
    """Whether ``candidate`` can serve as a section's params type (a dataclass class)."""
    return isinstance(candidate, type) and is_dataclass(candidate)
