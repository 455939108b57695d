"""Property tests: rendering is deterministic, total for valid params, and pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from weakincentives.prompt import MarkdownSection, PromptTemplate, Section, SectionVisibility


@dataclass(frozen=True)
class Fill:
    name: str
    count: int


_words = st.text(alphabet="abcdefghij {}#$", min_size=0, max_size=12).map(
    lambda text: text.replace("$", "$$")
)
_placeholder = st.sampled_from(["$name", "${count}", "${name}"])
_text = st.lists(st.one_of(_words, _placeholder), max_size=4).map(" ".join)


@st.composite
def sections(draw: st.DrawFn, depth: int = 0) -> Section[Any]:
    summarized = draw(st.booleans())
    children: list[Section[Any]] = []
    if depth < 3:
        count = draw(st.integers(min_value=0, max_value=3))
        children = [draw(sections(depth + 1)) for _ in range(count)]
        children = [
            child
            for index, child in enumerate(children)
            if child.key not in {c.key for c in children[:index]}
        ]
    return MarkdownSection[Fill](
        title=draw(st.sampled_from(["Alpha", "Beta", "Gamma", "Delta"])),
        template=draw(_text),
        summary=draw(_text) if summarized else None,
        visibility=SectionVisibility.SUMMARY if summarized else SectionVisibility.FULL,
        enabled=draw(st.booleans()),
        children=children,
    )


@st.composite
def templates(draw: st.DrawFn) -> PromptTemplate:
    roots = draw(st.lists(sections(), min_size=1, max_size=4, unique_by=lambda s: s.key))
    return PromptTemplate(ns="prop", key="tree", sections=roots)


def _fingerprint(template: PromptTemplate) -> tuple[object, ...]:
    return tuple(
        (path, template.section(path).title, template.section(path).enabled)
        for path in template.section_paths()
    )


@given(templates(), st.text(max_size=10), st.integers())
def test_render_is_deterministic_and_does_not_mutate(
    template: PromptTemplate, name: str, count: int
) -> None:
    """Two renders with equal params are identical and leave the template unchanged."""
    before = _fingerprint(template)
    first = template.render(Fill(name=name, count=count))
    second = template.render(Fill(name=name, count=count))
    assert first == second
    assert _fingerprint(template) == before
    assert set(first.visibility) <= set(template.section_paths())


@given(templates())
def test_opening_every_section_leaves_nothing_summarized(template: PromptTemplate) -> None:
    """Overriding every path to FULL renders no summaries."""
    overrides = dict.fromkeys(template.section_paths(), SectionVisibility.FULL)
    rendered = template.render(Fill(name="n", count=1), visibility_overrides=overrides)
    assert rendered.summarized_paths == ()
