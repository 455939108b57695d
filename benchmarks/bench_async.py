"""The async core against the loop it replaced: per-turn overhead and concurrent calls.

Two scenarios, each run in a fresh subprocess for the current tree and for a baseline
tree (the last commit before the async core, extracted with ``git archive``), so both
are measured the same way in one run:

- ``turn``: one evaluation of ``TURNS`` rounds on the offline adapter, each round one
  call of a trivial tool, then an answer. Reported per round (the loop's overhead:
  request, tool dispatch, events, history), once with a sync handler (which the async
  loop runs on a worker thread, so it cannot block the event loop) and once with an
  ``async def`` handler (which the old loop ran with a fresh ``asyncio.run`` per call).
- ``rounds``: runs of 10 and of 400 rounds (text plus one call each), per round, to
  show whether a round's cost grows with the length of the run (the old offline
  adapter re-estimated usage over the whole history every round).
- ``concurrent``: one round with 10 calls of an ``async def`` tool that sleeps 50 ms.
  The async core runs them at once (about 50 ms); the old loop ran them one after the
  other (about 500 ms).
- ``wakeups``: how many times the event loop wakes during one round of two sync calls,
  one of which blocks for ``BLOCKED_SECONDS``, counted with an event loop that counts
  its iterations (``_run_once``). A loop that polls for stalled worker threads wakes
  hundreds of times; one driven by events only when something happens.

Run: ``.venv/bin/python benchmarks/bench_async.py [--baseline REF]`` (default ref:
``5b681ba``, the commit before the async core). Without git or that ref, only the
current tree is measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "5b681ba"
REPEATS = 7
TURNS = 200
BLOCKED_SECONDS = 0.5

SCENARIO = r"""
import asyncio, json, sys, time
from dataclasses import dataclass, fields
import weakincentives.adapters as adapters
from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult

TURNS, REPEATS, BLOCKED = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])

# The same scenario runs on the baseline tree, whose names differ: ScriptedTurn's calls
# were ``tool_calls`` and loop settings had shorthand keywords on the adapter.
_CALLS = "calls" if "calls" in {f.name for f in fields(ScriptedTurn)} else "tool_calls"

def turn(text="", calls=()):
    return ScriptedTurn(text=text, **{_CALLS: calls})

def offline(script, max_rounds=None):
    if max_rounds is None:
        return OfflineAdapter(script)
    if hasattr(adapters, "OfflineModel"):
        settings = adapters.LoopSettings(max_rounds=max_rounds)
        return adapters.Adapter(adapters.OfflineModel(script), settings=settings)
    return OfflineAdapter(script, max_rounds=max_rounds)

@dataclass(frozen=True)
class Ping:
    n: int

def ping(params: Ping, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="pong")

async def nap(params: Ping, *, context: ToolContext) -> ToolResult[None]:
    await asyncio.sleep(0.05)
    return ToolResult(message="rested")

def prompt(tool):
    section = MarkdownSection(title="T", template="Go.", tools=(tool,))
    return Prompt(ns="b", key="b", sections=[section])

async def aping(params: Ping, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="pong")

def turn_run(handler=ping):
    script = [
        turn(calls=(ScriptedCall(name="ping", arguments={"n": i}),))
        for i in range(TURNS)
    ]
    script.append(turn(text="done"))
    adapter = offline(script, max_rounds=TURNS + 1)
    start = time.perf_counter()
    adapter.evaluate(prompt(Tool(name="ping", description="Ping.", handler=handler)))
    return time.perf_counter() - start

def concurrent_run():
    calls = tuple(ScriptedCall(name="nap", arguments={"n": i}, call_id=f"c{i}") for i in range(10))
    adapter = offline([turn(calls=calls), turn(text="done")])
    start = time.perf_counter()
    adapter.evaluate(prompt(Tool(name="nap", description="Nap.", handler=nap)))
    return time.perf_counter() - start

def rounds_run(rounds):
    script = [
        turn(text="thinking", calls=(ScriptedCall(name="ping", arguments={"n": i}),))
        for i in range(rounds)
    ]
    script.append(turn(text="done"))
    adapter = offline(script, max_rounds=rounds + 1)
    start = time.process_time()
    adapter.evaluate(prompt(Tool(name="ping", description="Ping.", handler=aping)))
    return (time.process_time() - start) / (rounds + 1)

class CountingLoop(asyncio.SelectorEventLoop):
    wakeups = 0

    def _run_once(self):
        CountingLoop.wakeups += 1
        super()._run_once()

def blocked(params: Ping, *, context: ToolContext) -> ToolResult[None]:
    if params.n == 0:
        time.sleep(BLOCKED)
    return ToolResult(message="done")

def wakeup_run():
    calls = (ScriptedCall(name="blocked", arguments={"n": 0}, call_id="c0"),
             ScriptedCall(name="blocked", arguments={"n": 1}, call_id="c1"))
    adapter = offline([turn(calls=calls), turn(text="done")])
    tool = Tool(name="blocked", description="Block.", handler=blocked)
    CountingLoop.wakeups = 0
    asyncio.run(adapter.evaluate_async(prompt(tool)), loop_factory=CountingLoop)
    return CountingLoop.wakeups

turn_run()  # warm caches (schemas, compiled templates)
print(json.dumps({
    "turn": min(turn_run() for _ in range(REPEATS)) / (TURNS + 1),
    "turn_async": min(turn_run(aping) for _ in range(REPEATS)) / (TURNS + 1),
    "concurrent": min(concurrent_run() for _ in range(3)),
    "rounds_10": min(rounds_run(10) for _ in range(REPEATS)),
    "rounds_400": min(rounds_run(400) for _ in range(3)),
    "wakeups": min(wakeup_run() for _ in range(3)),
}))
"""


def measure(source: Path) -> dict[str, float]:
    """Run the scenarios with ``source`` (a ``src`` directory) first on the path."""
    completed = subprocess.run(
        [sys.executable, "-c", SCENARIO, str(TURNS), str(REPEATS), str(BLOCKED_SECONDS)],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(source), "PATH": ""},
    )
    result: dict[str, float] = json.loads(completed.stdout)
    return result


def extract(ref: str, into: Path) -> Path | None:
    """The ``src`` tree of ``ref`` under ``into``, or None when git cannot provide it."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=BASELINE, help="git ref of the baseline tree")
    args = parser.parse_args()
    current = measure(ROOT / "src")
    with tempfile.TemporaryDirectory() as scratch:
        source = extract(args.baseline, Path(scratch))
        baseline = measure(source) if source is not None else None
    print(f"{'name':<46}{'n':>6}{'best_ms':>10}{'ratio':>8}")
    if baseline is None:
        print(f"(baseline {args.baseline} not available: current tree only)")
    rows = (
        ("per round, sync tool: sync loop (baseline)", "turn", baseline, TURNS),
        ("per round, sync tool: async loop", "turn", current, TURNS),
        ("per round, async tool: sync loop (baseline)", "turn_async", baseline, TURNS),
        ("per round, async tool: async loop", "turn_async", current, TURNS),
        ("10 x 50 ms async calls: sequential (baseline)", "concurrent", baseline, 10),
        ("10 x 50 ms async calls: async loop", "concurrent", current, 10),
    )
    for name, key, figures, n in rows:
        if figures is None:
            continue
        reference = (baseline or current)[key]
        print(f"{name:<46}{n:>6}{figures[key] * 1000:>10.3f}{figures[key] / reference:>8.2f}")
    for label, figures in (("baseline", baseline), ("async loop", current)):
        if figures is not None:
            wakeups = figures["wakeups"]
            reference = (baseline or current)["wakeups"]
            name = f"loop wake-ups, {BLOCKED_SECONDS:g} s blocked turn: {label}"
            print(f"{name:<46}{2:>6}{wakeups:>10.0f}{wakeups / reference:>8.2f}")
    # Linear means a round costs the same however long the run: the 400/10 ratio stays near 1.
    for label, figures in (("baseline", baseline), ("async loop", current)):
        if figures is None:
            continue
        short, long = figures["rounds_10"], figures["rounds_400"]
        print(f"{'per round at 10 rounds: ' + label:<46}{10:>6}{short * 1000:>10.3f}{1.0:>8.2f}")
        print(
            f"{'per round at 400 rounds: ' + label:<46}{400:>6}{long * 1000:>10.3f}"
            f"{long / short:>8.2f}"
        )


if __name__ == "__main__":
    main()
