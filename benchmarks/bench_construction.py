"""Building a 1,000-section prompt tree with 200 tools, against the published upstream 0.13.0.

Both packages build the same tree through the API they share (``MarkdownSection[P]``
with children, tools, summaries and visibility; ``Tool[P, R]``; ``PromptTemplate``), each
in its own fresh interpreter; the figure is the best of several builds after a warm-up,
in process time so that other load on the machine counts less. The upstream wheel is
installed into a temporary directory with ``pip install --no-deps --target``.

Run: ``.venv/bin/python benchmarks/bench_construction.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = "weakincentives==0.13.0"
PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps")

SCENARIO = r"""
import json, time
from dataclasses import dataclass
from weakincentives.prompt import MarkdownSection, PromptTemplate, SectionVisibility, Tool
from weakincentives.prompt import ToolContext, ToolResult

@dataclass(frozen=True)
class DocParams:
    project: str
    owner: str

@dataclass(frozen=True)
class LookupParams:
    query: str

@dataclass(frozen=True)
class Found:
    text: str

def lookup(params: LookupParams, *, context: ToolContext) -> ToolResult[Found]:
    return ToolResult(message="found", value=Found(text=params.query))

BODY = "Notes on $project, owned by $owner."

def build():
    sections = []
    for index in range(200):
        children = [
            MarkdownSection[DocParams](title=f"Child {j}", key=f"child-{j}", template=BODY)
            for j in range(4)
        ]
        tool = Tool[LookupParams, Found](
            name=f"lookup_{index}", description="Look something up.", handler=lookup
        )
        sections.append(
            MarkdownSection[DocParams](
                title=f"Topic {index}",
                key=f"topic-{index}",
                template=BODY,
                summary="Summary of $project.",
                visibility=SectionVisibility.SUMMARY if index % 2 else SectionVisibility.FULL,
                children=children,
                tools=[tool],
            )
        )
    return PromptTemplate(ns="bench", key="construction", sections=sections)

build()
best = float("inf")
for _ in range(7):
    start = time.process_time()
    build()
    best = min(best, time.process_time() - start)
print(json.dumps({"build": best}))
"""


def measure(path: Path) -> float:
    """Best build time, in seconds, with the package found under ``path``."""
    completed = subprocess.run(
        [sys.executable, "-c", SCENARIO],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(path), "PATH": ""},
    )
    figures: dict[str, float] = json.loads(completed.stdout)
    return figures["build"]


def main() -> None:
    ours = measure(ROOT / "src")
    with tempfile.TemporaryDirectory() as scratch:
        installed = subprocess.run(
            [*PIP_INSTALL, "--target", scratch, UPSTREAM], capture_output=True, check=False
        )
        theirs = measure(Path(scratch)) if installed.returncode == 0 else None
    print(f"{'name':<46}{'n':>6}{'best_ms':>10}{'ratio':>8}")
    reference = ours if theirs is None else theirs
    if theirs is None:
        print(f"(upstream {UPSTREAM} could not be installed: our figure only)")
    else:
        print(
            f"{'build 1,000 sections + 200 tools: upstream':<46}{1000:>6}"
            f"{theirs * 1000:>10.3f}{1.0:>8.2f}"
        )
    print(
        f"{'build 1,000 sections + 200 tools: this tree':<46}{1000:>6}"
        f"{ours * 1000:>10.3f}{ours / reference:>8.2f}"
    )


if __name__ == "__main__":
    main()
