"""Markdown sections: a ``string.Template`` body filled from a params dataclass."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from weakincentives.prompt._section import Enabled, ParamsT, Section, Visibility
from weakincentives.prompt._text import CompiledText, compile_text
from weakincentives.prompt._visibility import SectionVisibility

if TYPE_CHECKING:
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["MarkdownSection"]


class MarkdownSection(Section[ParamsT]):
    """A section whose body is a markdown template with ``$name``/``${name}`` placeholders.

    ``template`` and ``summary`` are dedented and stripped; ``$$`` is a literal dollar sign.
    Every placeholder must be a field of the params dataclass, which the enclosing
    ``PromptTemplate`` checks when it is built.
    """

    def __init__(
        self,
        *,
        title: str,
        template: str,
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
        super().__init__(
            title=title,
            key=key,
            default_params=default_params,
            children=children,
            enabled=enabled,
            tools=tools,
            hosted_tools=hosted_tools,
            summary=summary,
            summary_suffix=summary_suffix,
            visibility=visibility,
            accepts_overrides=accepts_overrides,
        )
        self._template = compile_text(template)

    @property
    def template(self) -> CompiledText:
        """The compiled body template."""
        return self._template

    def texts(self) -> dict[str, CompiledText]:
        """The body template and, when present, the summary."""
        return {"template": self._template, **super().texts()}

    def render_body(self, params: ParamsT) -> str:
        """Fill the body template from ``params``."""
        return self._template.render(params)
