"""Prompts: a template together with the params bound to it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Generic, overload

from weakincentives.errors import PromptValidationError
from weakincentives.prompt._generic import SubscriptedConstruction, subscript_args
from weakincentives.prompt._open_sections import OpenSectionsMode
from weakincentives.prompt._output import DeclaredOutput, StructuredOutput
from weakincentives.prompt._rendered import RenderedPrompt
from weakincentives.prompt._section import Section
from weakincentives.prompt._template import OutputT, PromptTemplate, output_contract
from weakincentives.prompt._visibility import SectionPath, VisibilityOverrides

__all__ = ["Prompt"]


class Prompt(SubscriptedConstruction, DeclaredOutput, Generic[OutputT]):
    """A template plus bound params: what adapters evaluate.

    Build it from a template (``Prompt(template).bind(TaskParams(...))``) or inline
    (``Prompt(ns=..., key=..., sections=[...])``). ``Prompt[Answer](...)`` declares a
    structured output type (checked here, at construction); otherwise the template's
    declaration applies. Prompts are immutable: ``bind`` returns a new prompt.
    """

    __slots__ = ("_output", "_params", "_template")
    _template: PromptTemplate[OutputT]
    _params: tuple[object, ...]
    _output: tuple[object, StructuredOutput | None]

    @overload
    def __init__(self, template: PromptTemplate[OutputT], /) -> None: ...
    @overload
    def __init__(
        self,
        *,
        ns: str,
        key: str,
        sections: Sequence[Section[Any]],
        name: str | None = None,
        open_sections: OpenSectionsMode = "halt",
    ) -> None: ...
    def __init__(
        self,
        template: PromptTemplate[OutputT] | None = None,
        *,
        ns: str | None = None,
        key: str | None = None,
        sections: Sequence[Section[Any]] | None = None,
        name: str | None = None,
        open_sections: OpenSectionsMode = "halt",
    ) -> None:
        if template is None:
            if ns is None or key is None or sections is None:
                raise PromptValidationError(
                    "Prompt needs a PromptTemplate, or ns=, key= and sections= to build one"
                )
            template = PromptTemplate(
                ns=ns, key=key, sections=sections, name=name, open_sections=open_sections
            )
        elif not isinstance(template, PromptTemplate):
            raise PromptValidationError(
                f"Prompt(template) needs a PromptTemplate, got {type(template).__name__}"
            )
        elif any(value is not None for value in (ns, key, sections, name)):
            raise PromptValidationError(
                "pass either a PromptTemplate or ns=/key=/sections=/name=, not both"
            )
        args = subscript_args(type(self))
        output = (
            template.output_contract
            if args is None
            else output_contract(args[0], f"{template.ns}/{template.key}")
        )
        self._set(template, (), output)

    def _set(
        self,
        template: PromptTemplate[OutputT],
        params: tuple[object, ...],
        output: tuple[object, StructuredOutput | None],
    ) -> None:
        object.__setattr__(self, "_template", template)
        object.__setattr__(self, "_params", params)
        object.__setattr__(self, "_output", output)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Prompt is immutable; bind() returns a new prompt (set {name!r})")

    @property
    def template(self) -> PromptTemplate[OutputT]:
        """The validated blueprint this prompt renders."""
        return self._template

    @property
    def params(self) -> tuple[object, ...]:
        """The params bound so far, at most one per dataclass type."""
        return self._params

    @property
    def ns(self) -> str:
        """The template's namespace."""
        return self._template.ns

    @property
    def key(self) -> str:
        """The template's key."""
        return self._template.key

    @property
    def name(self) -> str:
        """The template's name."""
        return self._template.name

    @property
    def sections(self) -> tuple[Section[Any], ...]:
        """The template's top-level sections."""
        return self._template.sections

    def bind(self, *params: object) -> Prompt[OutputT]:
        """Return a prompt with ``params`` bound; a new instance replaces one of its type."""
        bound: Prompt[OutputT] = object.__new__(type(self))
        bound._set(self._template, _merge(self._params, params), self._output)
        return bound

    def render(
        self, *params: object, visibility_overrides: VisibilityOverrides | None = None
    ) -> RenderedPrompt[OutputT]:
        """Render with the bound params, overridden by any ``params`` given here."""
        return self._template.render_with_output(
            _merge(self._params, params),
            visibility_overrides=visibility_overrides,
            output=self._output,
        )

    def render_sections(
        self,
        paths: Sequence[SectionPath],
        *params: object,
        visibility_overrides: VisibilityOverrides | None = None,
    ) -> Mapping[SectionPath, str]:
        """Render only the sections at ``paths`` (opened), with the bound params."""
        return self._template.render_sections(
            paths, *_merge(self._params, params), visibility_overrides=visibility_overrides
        )

    def __repr__(self) -> str:
        return f"Prompt(ns={self.ns!r}, key={self.key!r}, params={len(self._params)})"


def _merge(bound: tuple[object, ...], given: tuple[object, ...]) -> tuple[object, ...]:
    """Given params replace bound ones of the same type; duplicates in ``given`` stay visible."""
    replaced = {type(value) for value in given}
    return (*(value for value in bound if type(value) not in replaced), *given)
