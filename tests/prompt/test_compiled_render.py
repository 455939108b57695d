"""Compiled renders give the reference walk's text, tools and visibility, byte for byte."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from weakincentives.errors import PromptRenderError
from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    Section,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.prompt import _compiled as compiled_module
from weakincentives.prompt._compiled import SHAPES_KEPT
from weakincentives.prompt._render import render_plan

FULL, SUMMARY = SectionVisibility.FULL, SectionVisibility.SUMMARY


@pytest.fixture(autouse=True, scope="module")
def compile_at_once() -> Iterator[None]:
    """Shapes compile on their second render here, however small, so tests reach them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compiled_module, "COMPILE_AFTER", 0)
        yield


@dataclass(frozen=True)
class Fill:
    name: str
    count: int


@dataclass(frozen=True)
class Note:
    """Every field has a default: sections without given params build one per render."""

    text: str = "note"
    tags: list[str] = field(default_factory=lambda: ["t"])


@dataclass(frozen=True)
class Lookup:
    query: str


def _lookup(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult(message=params.query, value=None)


class Shouting(MarkdownSection[Fill]):
    """Renders its own body and summary instead of filling a template."""

    def render_body(self, params: Fill) -> str:
        return params.name.upper()

    def render_summary(self, params: Fill) -> str:
        return params.name[::-1]


_words = st.text(alphabet="ab {}#$\n", max_size=8).map(lambda text: text.replace("$", "$$"))
_fill_text = st.one_of(
    st.lists(st.one_of(_words, st.sampled_from(["$name ", "${name}", "${count}"])), max_size=4).map(
        "".join
    ),
    st.sampled_from(["${name}", "${name}${name}", ""]),  # may render empty
)
_note_text = st.one_of(
    st.lists(st.one_of(_words, st.sampled_from(["$text ", "${tags}"])), max_size=3).map("".join),
    st.sampled_from(["${text}", ""]),
)
_tools = itertools.count()


def _enabled(draw: st.DrawFn, hooks: bool) -> Any:
    if hooks and draw(st.integers(0, 3)) == 0:
        return lambda p: len(str(p)) % 2 == 0
    return draw(st.sampled_from([True, True, True, False]))


def _visibility(draw: st.DrawFn, summarized: bool, hooks: bool) -> Any:
    if not summarized:
        return FULL
    if hooks and draw(st.integers(0, 3)) == 0:
        return lambda p: SUMMARY if len(str(p)) % 3 else FULL
    return draw(st.sampled_from([SUMMARY, FULL]))


@st.composite
def sections(draw: st.DrawFn, hooks: bool, depth: int = 0) -> Section[Any]:
    """A section of any kind, enabled or visible by value (or by function), with children."""
    kind = draw(st.sampled_from(["fill", "note", "default", "shout"]))
    summarized = draw(st.booleans())
    children: list[Section[Any]] = []
    if depth < 2:
        drawn = draw(st.lists(sections(hooks, depth + 1), max_size=3))
        children = [c for i, c in enumerate(drawn) if c.key not in {d.key for d in drawn[:i]}]
    text = _note_text if kind in ("note", "default") else _fill_text
    common: dict[str, Any] = {
        "title": draw(st.sampled_from(["Alpha", "Beta", "Gamma"])),
        "template": draw(text),
        "summary": draw(text) if summarized else None,
        "summary_suffix": draw(st.none() | st.just("Open ${section_key} {now}.")),
        "visibility": _visibility(draw, summarized, hooks),
        "enabled": _enabled(draw, hooks),
        "children": children,
    }
    if draw(st.booleans()):
        name = f"tool_{next(_tools)}"
        common["tools"] = [Tool[Lookup, str](name=name, description="Look.", handler=_lookup)]
    if kind == "fill":
        return MarkdownSection[Fill](**common)
    if kind == "shout":
        return Shouting(**common)
    if kind == "default":
        return MarkdownSection[Note](default_params=Note(text="given default"), **common)
    return MarkdownSection[Note](**common)


@st.composite
def cases(draw: st.DrawFn) -> tuple[PromptTemplate, tuple[object, ...], dict[Any, Any]]:
    """A template (half of them with enable/visibility functions), params and overrides."""
    hooks = draw(st.booleans())
    roots = draw(st.lists(sections(hooks), min_size=1, max_size=3, unique_by=lambda s: s.key))
    template = PromptTemplate(ns="prop", key="tree", sections=roots)
    params: list[object] = []
    if draw(st.integers(0, 5)):
        params.append(Fill(name=draw(st.text(max_size=5)), count=draw(st.integers(-5, 5))))
    if draw(st.booleans()):
        params.append(
            Note(text=draw(st.text(max_size=5)), tags=draw(st.lists(st.text(max_size=2))))
        )
    paths = draw(st.lists(st.sampled_from(template.section_paths()), max_size=4))
    overrides = {path: draw(st.sampled_from([FULL, SUMMARY])) for path in paths}
    return template, tuple(params), overrides


def _compiled(template: PromptTemplate, params: tuple[object, ...], overrides: Any) -> object:
    try:
        rendered = template.render(*params, visibility_overrides=overrides)
    except PromptRenderError as error:
        return ("error", str(error))
    return (
        rendered.text,
        [tool.name for tool in rendered.tools],
        rendered.hosted_tools,
        dict(rendered.visibility),
        dict(rendered.tool_param_descriptions),
    )


def _reference(template: PromptTemplate, params: tuple[object, ...], overrides: Any) -> object:
    try:
        given = template._match_params(params)
        checked = template._check_overrides(overrides)
        rendered = render_plan(template._nodes, given, checked, template.name)
    except PromptRenderError as error:
        return ("error", str(error))
    tools = list(rendered.tools)
    if SUMMARY in rendered.visibility.values():
        tools.append(template._open_sections)
    known = template._descriptions_with_open_sections
    return (
        rendered.text,
        [tool.name for tool in tools],
        rendered.hosted_tools,
        dict(rendered.visibility),
        {tool.name: known[tool.name] for tool in tools},
    )


@given(cases())
def test_compiled_render_equals_the_reference_render(
    case: tuple[PromptTemplate, tuple[object, ...], dict[Any, Any]],
) -> None:
    """Seen once (section by section), twice (compiled) or more (cached): the same answer."""
    template, params, overrides = case
    expected = _reference(template, params, overrides)
    for _ in range(3):
        assert _compiled(template, params, overrides) == expected


@given(cases(), st.data())
def test_a_template_renders_other_params_and_overrides_as_the_reference(
    case: tuple[PromptTemplate, tuple[object, ...], dict[Any, Any]], data: st.DataObject
) -> None:
    """After a shape is compiled, other params and overrides still match, each twice."""
    template, params, overrides = case
    _compiled(template, params, overrides)
    _compiled(template, params, overrides)
    for _ in range(3):
        name, count = data.draw(st.text(max_size=5)), data.draw(st.integers(-5, 5))
        choices = [Fill(name=name, count=count), Note(text=name)]
        again = tuple(choices[i] for i in sorted(data.draw(st.sets(st.sampled_from([0, 1])))))
        paths = data.draw(st.lists(st.sampled_from(template.section_paths()), max_size=4))
        other = {path: data.draw(st.sampled_from([FULL, SUMMARY])) for path in paths}
        expected = _reference(template, again, other)
        assert _compiled(template, again, other) == expected
        assert _compiled(template, again, other) == expected


def _flat_template() -> PromptTemplate:
    return PromptTemplate(
        ns="cache",
        key="flat",
        sections=[
            MarkdownSection[Fill](
                title=f"Part {index}",
                key=f"part-{index}",
                template="${name}",
                summary="short",
            )
            for index in range(8)
        ],
    )


def test_shapes_kept_are_bounded_and_the_oldest_goes_first() -> None:
    """More shapes than kept: renders stay right, the cache stays at its bound."""
    template = _flat_template()
    paths = template.section_paths()
    params = Fill(name="x", count=1)
    subsets = list(itertools.product([FULL, SUMMARY], repeat=len(paths)))[: SHAPES_KEPT + 5]
    for visibilities in subsets:
        overrides = dict(zip(paths, visibilities, strict=True))
        expected = _reference(template, (params,), overrides)
        assert _compiled(template, (params,), overrides) == expected
        assert _compiled(template, (params,), overrides) == expected
    shapes = template._renders._shapes
    assert len(shapes) == SHAPES_KEPT
    first_kept: Any = next(iter(shapes))
    assert first_kept[1] == frozenset(dict(zip(paths, subsets[5], strict=True)).items())


def test_a_factory_made_params_object_is_made_for_every_render() -> None:
    """Sections whose params come from their type's defaults get a fresh object each time."""
    made: list[int] = []

    def next_serial() -> int:
        made.append(len(made) + 1)
        return made[-1]

    @dataclass(frozen=True)
    class Counted:
        serial: int = field(default_factory=next_serial)

    template = PromptTemplate(
        ns="cache",
        key="counted",
        sections=[MarkdownSection[Counted](title="Serial", key="serial", template="n=${serial}")],
    )
    serials = [int(template.render().text.removeprefix("## 1 Serial\nn=")) for _ in range(4)]
    assert serials == sorted(set(serials))  # a fresh object, never one kept from before
    assert serials[0] == 1


def test_a_section_with_a_function_shows_the_params_its_function_saw() -> None:
    """Params made for an enable function are the ones its text is filled from."""
    made: list[int] = []
    seen: list[int] = []

    def next_serial() -> int:
        made.append(len(made) + 1)
        return made[-1]

    @dataclass(frozen=True)
    class Counted:
        serial: int = field(default_factory=next_serial)

    def enabled(params: Counted) -> bool:
        seen.append(params.serial)
        return True

    template = PromptTemplate(
        ns="cache",
        key="seen",
        sections=[
            MarkdownSection[Counted](
                title="Serial", key="serial", template="n=${serial}", enabled=enabled
            )
        ],
    )
    for _ in range(3):  # seen once, compiled, cached
        assert template.render().text == f"## 1 Serial\nn={seen[-1]}"


def test_an_empty_body_leaves_the_heading_alone() -> None:
    """A template that renders empty gives the heading only, as the reference does."""
    template = PromptTemplate(
        ns="cache",
        key="empty",
        sections=[
            MarkdownSection[Fill](title="Named", key="named", template="${name}"),
            MarkdownSection[Fill](title="Blank", key="blank", template=""),
        ],
    )
    for _ in range(2):  # section by section, then compiled
        assert template.render(Fill(name="", count=0)).text == "## 1 Named\n\n## 2 Blank"
        assert template.render(Fill(name="x", count=0)).text == "## 1 Named\nx\n\n## 2 Blank"


@pytest.mark.parametrize("enabled", [True, lambda p: True], ids=["value", "function"])
def test_render_errors_come_from_the_walk(enabled: Any) -> None:
    """Missing params are reported the same way whether the shape is known or not."""
    template = PromptTemplate(
        ns="cache",
        key="missing",
        sections=[
            MarkdownSection[Fill](title="Needs", key="needs", template="$name", enabled=enabled)
        ],
    )
    for _ in range(2):
        with pytest.raises(PromptRenderError, match="is missing params: section \\('needs',\\)"):
            template.render()


def test_a_shape_compiles_once_it_has_rendered_enough_sections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A shape renders section by section until COMPILE_AFTER sections, then compiles."""
    monkeypatch.setattr(compiled_module, "COMPILE_AFTER", 24)
    template = _flat_template()  # eight sections
    params = Fill(name="x", count=1)
    for _ in range(2):
        template.render(params)
        (shape,) = template._renders._shapes.values()
        assert (shape.fill, shape.sections_rendered) == (None, len(shape.visibility) * (_ + 1))
    third = template.render(params)
    (shape,) = template._renders._shapes.values()
    assert shape.fill is not None
    assert shape.fill({Fill: params}, {}) == third.text
