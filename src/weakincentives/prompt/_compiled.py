"""Compiled renders: one function per template and visibility shape.

Which sections render, at which visibility, under which numbered headings, is a
template's *shape*; params only fill placeholders. The shape depends on the
visibility overrides, on which params types the caller gave (the others come from
defaults) and, for sections with enable or visibility functions, on those functions'
answers. Each shape compiles once into a format string holding every literal piece
(headings, template text, summaries' suffixes, separators) and a small generated
function that reads each distinct params value once and fills the string, so a
render costs one call per distinct value instead of about twenty per section.

The reference is :func:`~weakincentives.prompt._render.render_plan`: a compiled
shape gives the same text, byte for byte (hypothesis checks it over generated trees,
params and overrides), and every render error comes from the same walk.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from weakincentives._codegen import generated_function
from weakincentives.prompt._compile import Node
from weakincentives.prompt._markdown import MarkdownSection
from weakincentives.prompt._render import Step, chunks, headings, walk
from weakincentives.prompt._section import Section
from weakincentives.prompt._text import CompiledText
from weakincentives.prompt._visibility import SectionPath, SectionVisibility

if TYPE_CHECKING:
    from weakincentives.prompt._deferred import DeferredTools
    from weakincentives.prompt._hosted import HostedTool
    from weakincentives.prompt._tool import Tool

__all__ = ["RenderCache", "Shape"]

COMPILE_AFTER = 64
"""Sections a shape renders one by one before it is compiled (see RenderCache.render)."""

SHAPES_KEPT = 16
"""Shapes kept per template (the oldest goes first): a template has a few in practice
(as declared, and with the sections a run opened), and each keeps its text's literals."""

_NOTHING_MADE: dict[int, object] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """One compiled shape of a template: the text filler and what else the shape fixes."""

    fill: Callable[[dict[type[Any], object], dict[int, object]], str] | None
    """Given params by type and params made during the walk by node index -> the text;
    None until the shape is compiled."""
    tools: tuple[Tool[Any, Any], ...]
    """Function tools of the sections that render FULL, plus open_sections if any is summarized."""
    hosted_tools: tuple[HostedTool[Any], ...]
    tool_param_descriptions: Mapping[str, Mapping[str, str]]
    visibility: Mapping[SectionPath, SectionVisibility]
    deferred: DeferredTools | None = None
    """The first catalogue offered for native deferred loading by a section rendering FULL."""
    sections_rendered: int = 0
    """Sections rendered one by one in this shape so far, until it compiles."""


class RenderCache:
    """The compiled shapes of one template, made on first use and kept (bounded)."""

    __slots__ = (
        "_descriptions",
        "_fragments",
        "_lock",
        "_name",
        "_nodes",
        "_open_sections",
        "_shapes",
        "_static",
        "_type_numbers",
    )

    def __init__(
        self,
        nodes: tuple[Node, ...],
        prompt_name: str,
        open_sections: Tool[Any, Any],
        descriptions: Mapping[str, Mapping[str, str]],
    ) -> None:
        self._nodes = nodes
        self._name = prompt_name
        self._open_sections = open_sections
        self._descriptions = descriptions
        # Without enable or visibility functions, the overrides and the params types
        # given decide the shape, so it is found without walking the tree.
        self._static = all(
            (node.section.enabled is True or node.section.enabled is False)
            and isinstance(node.section.visibility, SectionVisibility)
            for node in nodes
        )
        self._type_numbers = {kind: n for n, kind in enumerate({n.params_type: 0 for n in nodes})}
        self._fragments: dict[tuple[int, bool, str], tuple[str | None, tuple[str, ...]]] = {}
        self._shapes: dict[object, Shape] = {}
        self._lock = threading.Lock()

    def render(
        self, given: dict[type[Any], object], overrides: Mapping[SectionPath, SectionVisibility]
    ) -> tuple[Shape, str]:
        """The shape for these params and overrides, and the text it renders."""
        if self._static:
            key: object = (frozenset(given), frozenset(overrides.items()) if overrides else None)
            shape = self._shapes.get(key)
            if shape is not None and shape.fill is not None:
                return shape, shape.fill(given, _NOTHING_MADE)
            steps = walk(self._nodes, given, overrides, self._name)
        else:
            steps = walk(self._nodes, given, overrides, self._name)
            key = (
                frozenset(given),
                tuple(i if vis is SectionVisibility.FULL else ~i for i, vis, _, _ in steps),
            )
            shape = self._shapes.get(key)
            if shape is not None and shape.fill is not None:
                made = {index: params for index, _, params, was_made in steps if was_made}
                return shape, shape.fill(given, made)
        # Compiling costs about as much as rendering COMPILE_AFTER sections one by one,
        # so a shape renders section by section until it has spent that much (and at
        # least once): one-off shapes never pay for compiling, large ones soon stop paying.
        sections = (0 if shape is None else shape.sections_rendered) + len(steps)
        if shape is None or sections < COMPILE_AFTER:
            described = self._describe(steps) if shape is None else shape
            shape = self._keep(key, replace(described, sections_rendered=sections))
            return shape, "\n\n".join(chunks(self._nodes, steps))
        fill = self._fill(steps, given, from_walk=not self._static)
        shape = self._keep(key, replace(shape, fill=fill))
        made = {index: params for index, _, params, was_made in steps if was_made}
        return shape, fill(given, made)

    def _keep(self, key: object, shape: Shape) -> Shape:
        with self._lock:
            self._shapes.pop(key, None)
            if len(self._shapes) >= SHAPES_KEPT:
                del self._shapes[next(iter(self._shapes))]
            self._shapes[key] = shape
        return shape

    def _describe(self, steps: list[Step]) -> Shape:
        """What a shape fixes besides its text: tools, their descriptions, visibility."""
        tools: list[Tool[Any, Any]] = []
        hosted: list[HostedTool[Any]] = []
        deferred: DeferredTools | None = None
        for index, shown, _, _ in steps:
            if shown is SectionVisibility.FULL:
                tools.extend(self._nodes[index].tools)
                hosted.extend(self._nodes[index].hosted_tools)
                deferred = deferred or self._nodes[index].deferred
        visibility = {self._nodes[index].path: shown for index, shown, _, _ in steps}
        if SectionVisibility.SUMMARY in visibility.values():
            tools.append(self._open_sections)
        known = self._descriptions
        return Shape(
            fill=None,
            tools=tuple(tools),
            hosted_tools=tuple(hosted),
            tool_param_descriptions=MappingProxyType({t.name: known[t.name] for t in tools}),
            visibility=MappingProxyType(visibility),
            deferred=deferred,
        )

    def _fill(
        self, steps: list[Step], given: dict[type[Any], object], *, from_walk: bool
    ) -> Callable[[dict[type[Any], object], dict[int, object]], str]:
        writer = _Writer(
            self._nodes, frozenset(given), self._type_numbers, self._fragments, from_walk=from_walk
        )
        for number, (step, heading) in enumerate(
            zip(steps, headings(self._nodes, steps), strict=True)
        ):
            writer.literal(f"\n\n{heading}" if number else heading)
            if step[1] is SectionVisibility.SUMMARY:
                writer.summary(step)
            else:
                writer.body(step)
        return writer.function(self._name)


class _Writer:
    """Builds one shape's format string and the function that fills it.

    Fields are first named after the locals that fill them (``a0_name``: attribute
    ``name`` of the first params type), and locals after where the value comes from,
    so a section's text makes the same fragment in every shape and is escaped and
    scanned once (:func:`_fragment`). One ``format_map`` pass then numbers the fields
    (positional fields are the cheaper ones to fill); literal braces are escaped twice
    for it.
    """

    def __init__(
        self,
        nodes: tuple[Node, ...],
        given: frozenset[type[Any]],
        type_numbers: Mapping[type[Any], int],
        fragments: dict[tuple[int, bool, str], tuple[str | None, tuple[str, ...]]],
        *,
        from_walk: bool,
    ) -> None:
        self.nodes = nodes
        self.fragments = fragments
        """Each section text's fragment, by node, visibility and params source; kept per
        template, since sections render the same text in every shape."""
        self.given = given
        self.type_numbers = type_numbers
        self.from_walk = from_walk
        self.format: list[str] = []
        self.lines: list[str] = []
        self.namespace: dict[str, object] = {"_str": str}
        self.known: set[str] = set()
        self.fields: dict[str, str] = {}
        """Each field's local name -> its positional field, in the order of creation."""

    def literal(self, text: str) -> None:
        self.format.append(_twice_escaped(text))

    def body(self, step: Step) -> None:
        """A newline and the body, or nothing for an empty body (as the reference does)."""
        section = self.nodes[step[0]].section
        if type(section).render_body is MarkdownSection.render_body:
            assert isinstance(section, MarkdownSection)
            self.text(section.template, step, before="\n", after="", empty="")
        else:
            self.call(section.render_body, step, before="\n", after="", empty="")

    def summary(self, step: Step) -> None:
        """A newline, the summary and a blank line (one newline if empty), then the suffix."""
        node = self.nodes[step[0]]
        section = node.section
        summary = section.summary
        if type(section).render_summary is Section.render_summary and summary is not None:
            self.text(summary, step, before="\n", after="\n\n", empty="\n")
        else:
            self.call(section.render_summary, step, before="\n", after="\n\n", empty="\n")
        self.literal(node.suffix)

    def text(self, text: CompiledText, step: Step, *, before: str, after: str, empty: str) -> None:
        if not text.placeholders:
            content = "".join(part for part in text.parts() if isinstance(part, str))
            self.literal(f"{before}{content}{after}" if content else empty)
            return
        source = self.source(step)
        key = (step[0], step[1] is SectionVisibility.SUMMARY, source)  # an enum hashes slowly
        found = self.fragments.get(key)
        if found is None:
            found = self.fragments[key] = _fragment(text, source)
        fragment, attributes = found
        if not self.known.issuperset(attributes):
            for local in attributes:
                self.value(source, local)
        if fragment is not None:  # the text has literal parts, so it is never empty
            self.format += (before, fragment, after)  # newlines need no escaping
            return
        # Only placeholders: empty when every value is, which only the render can tell.
        names = text.placeholders
        values = ", ".join(
            f"{source}_{names[part]}" for part in text.parts() if isinstance(part, int)
        )
        local = f"t{len(self.lines)}"
        self.lines.append(f"{local} = ''.join(({values},))")
        self.lines.append(f"{local} = ({before!r} + {local} + {after!r}) if {local} else {empty!r}")
        self.field(local)

    def call(
        self, method: Callable[[Any], str], step: Step, *, before: str, after: str, empty: str
    ) -> None:
        """A section that renders its own text: call it (once per render)."""
        name = f"_m{len(self.lines)}"
        self.namespace[name] = method
        local = f"t{len(self.lines)}"
        self.lines.append(f"{local} = {name}({self.source(step)})")
        self.lines.append(f"{local} = ({before!r} + {local} + {after!r}) if {local} else {empty!r}")
        self.field(local)

    def field(self, local: str) -> None:
        """A field filled with ``local``."""
        self.fields[local] = f"{{{len(self.fields)}}}"
        self.format.append(f"{{{local}}}")

    def value(self, source: str, local: str) -> None:
        """The local ``{source}_{name}``: ``str`` of attribute ``name``, read once per render."""
        if local not in self.known:
            self.known.add(local)
            self.fields[local] = f"{{{len(self.fields)}}}"
            name = local.removeprefix(f"{source}_")
            # Placeholders are fields of a dataclass: identifiers, never keywords.
            self.lines.append(f"{local} = _str({source}.{name})")

    def source(self, step: Step) -> str:
        """The local or constant holding a step's params: given, the default, or made."""
        index, _, _, made = step
        node = self.nodes[index]
        if node.params_type in self.given:
            local = f"a{self.type_numbers[node.params_type]}"
            if local not in self.known:
                self.known.add(local)
                self.namespace[f"_T{local}"] = node.params_type
                self.lines.append(f"{local} = g[_T{local}]")
            return local
        if not made:
            self.namespace[f"d{index}"] = node.section.default_params
            return f"d{index}"
        # A step asks for its source once (its body or its summary), so no check here.
        local = f"p{index}"
        if self.from_walk:
            self.lines.append(f"{local} = made[{index}]")
        else:
            self.namespace[f"_f{index}"] = node.params_factory
            self.lines.append(f"{local} = _f{index}()")
        return local

    def function(
        self, prompt_name: str
    ) -> Callable[[dict[type[Any], object], dict[int, object]], str]:
        self.namespace["_fill"] = "".join(self.format).format_map(self.fields).format
        body = [*self.lines, f"return _fill({', '.join(self.fields)})"]
        source = "def fill(g, made):\n" + "".join(f"    {line}\n" for line in body)
        label = f"prompt render {prompt_name!r}"
        return generated_function(source, "fill", self.namespace, label=label)


def _fragment(text: CompiledText, source: str) -> tuple[str | None, tuple[str, ...]]:
    """``text`` as a format fragment whose fields name ``{source}_{placeholder}`` locals.

    The fragment is None when the text is placeholders only (it may render empty).
    Also returns those locals, one per placeholder.
    """
    parts = text.parts()
    names = text.placeholders
    locals_ = tuple(f"{source}_{name}" for name in names)
    if not any(isinstance(part, str) for part in parts):
        return None, locals_
    fragment = "".join(
        _twice_escaped(part) if isinstance(part, str) else f"{{{locals_[part]}}}" for part in parts
    )
    return fragment, locals_


def _twice_escaped(text: str) -> str:
    """Literal text that survives two ``str.format`` passes (numbering, then filling)."""
    return text.replace("{", "{{{{").replace("}", "}}}}")
