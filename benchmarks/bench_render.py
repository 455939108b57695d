"""Render and construction cost of a 1,000-section prompt, as ratios to two floors.

The tree: 200 top-level sections with 4 children each, half of the top level SUMMARY,
one tool per top-level section, every section filled from one params dataclass.
Two floors:

- ``string.Template.substitute`` of every section's text (templates pre-parsed) plus
  the join: what rendering section by section must at least do;
- the equivalent compiled Jinja2 template (issue 31's measure: render at most 2x it):
  the same text written as one template, each top-level section an ``{% if %}`` on
  whether it is open, rendered from the same params object.

Rounds interleave the rows and keep the best, in process time (other jobs on a shared
machine then move no row more than another). "A new shape each time" opens a set of
sections never opened before at every render: what a template's first render with new
overrides costs (a shape is compiled the second time it is seen).
Needs the ``bench`` extra (jinja2).

Run: ``.venv/bin/python benchmarks/bench_render.py``
"""

from __future__ import annotations

import itertools
import string
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import jinja2

from weakincentives.prompt import (
    MarkdownSection,
    PromptTemplate,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)

TOP_LEVEL = 200
CHILDREN = 4
REPEATS = 7


@dataclass(frozen=True)
class DocParams:
    project: str
    owner: str
    version: str
    limit: int


@dataclass(frozen=True)
class LookupParams:
    query: str


def _lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[str]:
    return ToolResult(message=params.query, value=None)


BODY = "Notes on $project ${version}, owned by $owner.\nKeep answers under ${limit} lines."
SUMMARY = "Summary of $project owned by $owner."


def build() -> PromptTemplate:
    sections = []
    for index in range(TOP_LEVEL):
        children = [
            MarkdownSection[DocParams](
                title=f"Detail {index}.{child}", key=f"d{child}", template=BODY
            )
            for child in range(CHILDREN)
        ]
        summarized = index % 2 == 0
        sections.append(
            MarkdownSection[DocParams](
                title=f"Topic {index}",
                key=f"topic-{index}",
                template=BODY,
                summary=SUMMARY,
                visibility=SectionVisibility.SUMMARY if summarized else SectionVisibility.FULL,
                children=children,
                tools=[
                    Tool[LookupParams, str](
                        name=f"lookup_{index}", description="Look something up.", handler=_lookup
                    )
                ],
            )
        )
    return PromptTemplate(ns="bench", key="render", sections=sections)


PARAMS = DocParams(project="weakincentives", owner="maintainers", version="0.1", limit=12)


def floor_render(templates: list[string.Template]) -> str:
    mapping = asdict(PARAMS)
    return "\n\n".join(template.substitute(mapping) for template in templates)


def best_ms(action: Callable[[], object], repeats: int = REPEATS, inner: int = 20) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            action()
        best = min(best, (time.perf_counter() - start) / inner)
    return best * 1000


@dataclass(frozen=True, slots=True, kw_only=True)
class _Node:
    """Stands in for one section or tool in the construction floor: a frozen value."""

    title: str
    key: str
    template: str
    children: tuple[_Node, ...] = ()


def floor_construction() -> tuple[_Node, ...]:
    """The same number of frozen dataclasses as the tree has sections and tools."""
    tree = []
    for index in range(TOP_LEVEL):
        children = tuple(
            _Node(title=f"Child {j}", key=f"child-{j}", template=BODY) for j in range(CHILDREN)
        )
        tree.append(_Node(title=f"Topic {index}", key=f"topic-{index}", template=BODY))
        tree.append(_Node(title="tool", key=f"lookup_{index}", template="", children=children))
    return tuple(tree)


def jinja_template() -> jinja2.Template:
    """The tree as one Jinja2 template: the text an author would write for it by hand."""

    def jinja(text: str) -> str:
        for name in ("project", "owner", "version", "limit"):
            text = text.replace(f"${{{name}}}", f"{{{{ p.{name} }}}}")
            text = text.replace(f"${name}", f"{{{{ p.{name} }}}}")
        return text

    parts = []
    for index in range(TOP_LEVEL):
        number = index + 1
        full = f"## {number} Topic {index}\n{jinja(BODY)}"
        for child in range(CHILDREN):
            full += f"\n\n### {number}.{child + 1} Detail {index}.{child}\n{jinja(BODY)}"
        keys = ", ".join(f"d{child}" for child in range(CHILDREN))
        summary = (
            f"## {number} Topic {index}\n{jinja(SUMMARY)}\n\n---\n[This section is summarized. "
            f'Call `open_sections` with key "topic-{index}" to view full content including '
            f"subsections: {keys}.]"
        )
        parts.append(
            f'{{% if "topic-{index}" in opened %}}{full}{{% else %}}{summary}{{% endif %}}'
        )
    environment = jinja2.Environment(autoescape=False, keep_trailing_newline=True)
    return environment.from_string("\n\n".join(parts))


def interleaved(rows: dict[str, Callable[[], object]], inner: int = 20) -> dict[str, float]:
    """Best milliseconds per call of each row, rounds interleaved, in process time."""
    best = dict.fromkeys(rows, float("inf"))
    for _ in range(REPEATS * 2):
        for name, action in rows.items():
            start = time.process_time()
            for _ in range(inner):
                action()
            best[name] = min(best[name], (time.process_time() - start) / inner)
    return {name: seconds * 1000 for name, seconds in best.items()}


def main() -> None:
    # Construction first: what the render rows leave alive (compiled shapes) would
    # otherwise make the collector's passes during construction longer.
    construction = best_ms(build, repeats=3, inner=2)
    dataclass_floor = best_ms(floor_construction, repeats=3, inner=5)
    template = build()
    sections = TOP_LEVEL * (CHILDREN + 1)
    floor_templates = [string.Template(BODY) for _ in range(sections)]
    opened: dict[tuple[str, ...], SectionVisibility] = {
        (f"topic-{i}",): SectionVisibility.FULL for i in range(0, TOP_LEVEL, 2)
    }
    compiled = jinja_template()
    half_open = {f"topic-{i}" for i in range(1, TOP_LEVEL, 2)}
    all_open = {f"topic-{i}" for i in range(TOP_LEVEL)}
    assert compiled.render(p=PARAMS, opened=half_open) == template.render(PARAMS).text
    assert (
        compiled.render(p=PARAMS, opened=all_open)
        == template.render(PARAMS, visibility_overrides=opened).text
    )
    serials = itertools.count(1)
    another = build()  # its own template: new shapes push the old out of a template's cache

    def new_shape() -> object:
        # Opens the summarized topics whose bits are set in a fresh serial: a shape never
        # rendered before, so the render goes section by section.
        serial = next(serials)
        return another.render(
            PARAMS,
            visibility_overrides={
                (f"topic-{2 * bit}",): SectionVisibility.FULL
                for bit in range(TOP_LEVEL // 2)
                if serial >> bit & 1
            },
        )

    times = interleaved(
        {
            "floor": lambda: floor_render(floor_templates),
            "jinja half": lambda: compiled.render(p=PARAMS, opened=half_open),
            "jinja all": lambda: compiled.render(p=PARAMS, opened=all_open),
            "half": lambda: template.render(PARAMS),
            "all": lambda: template.render(PARAMS, visibility_overrides=opened),
            "new": new_shape,
        }
    )
    floor = times["floor"]
    print(f"{'name':<38}{'n':>6}{'best_ms':>10}{'ratio':>8}{'x_jinja':>9}")
    rows = [
        ("floor: Template.substitute + join", floor, None),
        ("compiled Jinja2 (half summarized)", times["jinja half"], None),
        ("compiled Jinja2 (all open)", times["jinja all"], None),
        ("render (half summarized)", times["half"], times["jinja half"]),
        ("render (all opened by overrides)", times["all"], times["jinja all"]),
        ("render, a new shape each time", times["new"], times["jinja half"]),
        ("construction (validate + compile)", construction, None),
    ]
    for name, value, jinja in rows:
        against = "" if jinja is None else f"{value / jinja:.2f}"
        print(f"{name:<38}{sections:>6}{value:>10.3f}{value / floor:>8.2f}{against:>9}")
    print(
        f"{'floor: 1,200 frozen dataclasses':<38}{sections:>6}{dataclass_floor:>10.3f}{1.0:>8.2f}"
    )
    print(
        f"{'construction vs that floor':<38}{sections:>6}{construction:>10.3f}"
        f"{construction / dataclass_floor:>8.2f}"
    )


if __name__ == "__main__":
    main()
