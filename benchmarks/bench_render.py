"""Render and construction cost of a 1,000-section prompt, as ratios to a substitution floor.

The tree: 200 top-level sections with 4 children each, half of the top level SUMMARY,
one tool per top-level section, every section filled from one params dataclass.
The floor is what any renderer must at least do: ``string.Template.substitute`` of
every section's text (templates pre-parsed) plus the join. ``render`` should stay
within 1.5x of it, because validation and compilation happen once, at construction.

Run: ``.venv/bin/python benchmarks/bench_render.py``
"""

from __future__ import annotations

import string
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

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


def main() -> None:
    template = build()
    sections = TOP_LEVEL * (CHILDREN + 1)
    floor_templates = [string.Template(BODY) for _ in range(sections)]
    floor = best_ms(lambda: floor_render(floor_templates))
    rendered = best_ms(lambda: template.render(PARAMS))
    opened: dict[tuple[str, ...], SectionVisibility] = {
        (f"topic-{i}",): SectionVisibility.FULL for i in range(0, TOP_LEVEL, 2)
    }
    rendered_open = best_ms(lambda: template.render(PARAMS, visibility_overrides=opened))
    construction = best_ms(build, repeats=3, inner=2)
    dataclass_floor = best_ms(floor_construction, repeats=3, inner=5)
    print(f"{'name':<38}{'n':>6}{'best_ms':>10}{'ratio':>8}")
    rows = [
        ("floor: Template.substitute + join", floor),
        ("render (half summarized)", rendered),
        ("render (all opened by overrides)", rendered_open),
        ("construction (validate + compile)", construction),
    ]
    for name, value in rows:
        print(f"{name:<38}{sections:>6}{value:>10.3f}{value / floor:>8.2f}")
    print(
        f"{'floor: 1,200 frozen dataclasses':<38}{sections:>6}{dataclass_floor:>10.3f}{1.0:>8.2f}"
    )
    print(
        f"{'construction vs that floor':<38}{sections:>6}{construction:>10.3f}"
        f"{construction / dataclass_floor:>8.2f}"
    )


if __name__ == "__main__":
    main()
