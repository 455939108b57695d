"""Tools and typed answers on a small local model: weakincentives vs pydantic-ai and the Agents SDK.

Runs a fixed set of tasks (``_local_tasks.py``), each ``--reps`` times at temperature 0,
through each of weakincentives' three SDK adapters on one local server (llama.cpp's
``llama-server`` speaks Responses, Chat Completions and Anthropic Messages), and the
same tasks through pydantic-ai (the three endpoints) and the OpenAI Agents SDK
(Responses and Chat Completions), in the same run. A run succeeds when its answer is
valid and grounded in the tools' results (each task's check says how). Results go to a
JSON-lines file, one line per run, so an interrupted run carries on where it stopped.

Not run in CI (too slow and random) and skipped by ``make bench`` without a base URL::

    ../shared/tools/llama/start                       # prints the server's PID
    pip install -e '.[bench-peers]'                   # pydantic-ai and openai-agents
    python benchmarks/bench_local_model.py --base-url http://127.0.0.1:8080/v1 \\
        --out local-model.jsonl
    python benchmarks/bench_local_model.py --out local-model.jsonl --table-only
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from _local_tasks import TASKS, Env, Task, shown

from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIResponses
from weakincentives.runtime import InProcessEventBus, TextDelta

ADAPTERS = ("openai", "openai-chat", "anthropic")
CONFIGS: tuple[tuple[str, str], ...] = (
    *(("weakincentives", adapter) for adapter in ADAPTERS),
    *(("pydantic-ai", adapter) for adapter in ADAPTERS),
    ("agents-sdk", "openai"),
    ("agents-sdk", "openai-chat"),
)
"""(framework, adapter): the Agents SDK has no Anthropic Messages model of its own."""


@dataclass(frozen=True, slots=True)
class Outcome:
    answer: object
    text: str
    rounds: int
    tool_calls: int
    deltas: tuple[str, ...]


def run_ours(
    task: Task, env: Env, *, adapter: str, base_url: str, max_tokens: int, max_rounds: int
) -> Outcome:
    """One run through weakincentives with the settings docs/local-models.md recommends."""
    settings = LoopSettings(
        recover_text_tool_calls=True, max_output_tokens=max_tokens, max_rounds=max_rounds
    )
    common: dict[str, Any] = {
        "model": "local",
        "api_key": "local",
        # The SDK's default retries (2), as the peers' clients have: with none, three
        # streaming runs of 2026-11-26 failed on their first attempt when llama-server
        # closed the connection without a response.
        "timeout": 900.0,
        "stream": task.stream,
        "request_options": {"temperature": 0},
    }
    provider: Any
    if adapter == "openai":
        provider = OpenAIResponses(base_url=base_url, **common)
    elif adapter == "openai-chat":
        provider = ChatCompletions(base_url=base_url, token_cap_field="max_tokens", **common)
    else:
        provider = AnthropicMessages(base_url=base_url.removesuffix("/v1"), **common)
    bus = InProcessEventBus()
    deltas: list[str] = []
    bus.subscribe(TextDelta, lambda delta: deltas.append(delta.text))
    with Adapter(provider, settings=settings) as runner:
        response = runner.evaluate(task.prompt(env), bus=bus)
    env.calls.extend((e.call.name, e.result.success) for e in response.tool_executions)
    return Outcome(
        answer=response.output,
        text=response.text,
        rounds=response.rounds,
        tool_calls=len(response.tool_executions),
        deltas=tuple(deltas),
    )


def run_peer(framework: str) -> Callable[..., Outcome]:
    from _local_peers import run_agents_sdk, run_pydantic_ai  # noqa: PLC0415 - optional peers

    peer = run_pydantic_ai if framework == "pydantic-ai" else run_agents_sdk

    def run(task: Task, env: Env, **options: Any) -> Outcome:
        outcome = peer(task, env, **options)
        answer = outcome.answer if task.output_type is not None else None
        return Outcome(
            answer=answer,
            text=outcome.text,
            rounds=outcome.rounds,
            tool_calls=len(env.calls),
            deltas=outcome.deltas,
        )

    return run


def leaked_call(deltas: tuple[str, ...]) -> bool:
    """True when streamed answer text showed a tool call's JSON."""
    text = "".join(deltas)
    return '"name"' in text and '"arguments"' in text


def one_run(
    task: Task, framework: str, adapter: str, rep: int, args: argparse.Namespace
) -> dict[str, Any]:
    env = Env()
    runner = run_ours if framework == "weakincentives" else run_peer(framework)
    record: dict[str, Any] = {
        "task": task.name,
        "framework": framework,
        "adapter": adapter,
        "rep": rep,
    }
    started = time.perf_counter()
    try:
        outcome = runner(
            task,
            env,
            adapter=adapter,
            base_url=args.base_url,
            max_tokens=args.max_tokens,
            max_rounds=args.max_rounds,
        )
    except Exception as exc:  # every failure of a run is a result, not a crash
        record.update(
            success=False,
            why=f"{type(exc).__name__}: {str(exc)[:400]}",
            rounds=None,
            tool_calls=len(env.calls),
            seconds=round(time.perf_counter() - started, 1),
            trace=traceback.format_exc(limit=3)[-600:],
        )
        return record
    grounded, why = task.grounded(outcome.answer, outcome.text, env)
    record.update(
        success=grounded,
        why=why,
        rounds=outcome.rounds,
        tool_calls=outcome.tool_calls,
        seconds=round(time.perf_counter() - started, 1),
        answer=shown(outcome.answer) if outcome.answer is not None else outcome.text[:300],
        leaked_call=leaked_call(outcome.deltas) if task.stream else None,
    )
    return record


def done_runs(path: Path) -> set[tuple[str, str, str, int]]:
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            keys.add((row["task"], row["framework"], row["adapter"], row["rep"]))
    return keys


def planned(args: argparse.Namespace) -> Iterator[tuple[Task, str, str, int]]:
    """Repetition by repetition, so an interrupted run still covers every task and framework."""
    wanted_tasks = set(args.tasks.split(",")) if args.tasks else None
    wanted_frameworks = set(args.frameworks.split(",")) if args.frameworks else None
    for rep in range(1, args.reps + 1):
        for task in TASKS:
            if wanted_tasks is not None and task.name not in wanted_tasks:
                continue
            for framework, adapter in CONFIGS:
                if wanted_frameworks is None or framework in wanted_frameworks:
                    yield task, framework, adapter, rep


def table(path: Path) -> str:
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    lines = [
        "| framework | adapter | success | mean rounds | mean s/run | runs with a tool call |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for framework, adapter in CONFIGS:
        mine = [r for r in rows if (r["framework"], r["adapter"]) == (framework, adapter)]
        if not mine:
            continue
        wins = sum(r["success"] for r in mine)
        rounds = [r["rounds"] for r in mine if r["rounds"] is not None]
        seconds = [r["seconds"] for r in mine]
        called = sum(1 for r in mine if r["tool_calls"])
        mean_rounds = f"{sum(rounds) / len(rounds):.1f}" if rounds else "-"
        lines.append(
            f"| {framework} | {adapter} | {wins}/{len(mine)} ({100 * wins / len(mine):.0f} %) | "
            f"{mean_rounds} | {sum(seconds) / len(seconds):.0f} | {called}/{len(mine)} |"
        )
    lines += ["", "| task | " + " | ".join(f"{f} {a}" for f, a in CONFIGS) + " |"]
    lines.append("| --- |" + " --- |" * len(CONFIGS))
    for task in TASKS:
        cells = []
        for framework, adapter in CONFIGS:
            mine = [
                r
                for r in rows
                if (r["task"], r["framework"], r["adapter"]) == (task.name, framework, adapter)
            ]
            cells.append(f"{sum(r['success'] for r in mine)}/{len(mine)}" if mine else "-")
        lines.append(f"| {task.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--base-url", default=os.environ.get("WINK_LOCAL_BASE_URL"), help="the server's /v1 URL"
    )
    parser.add_argument("--out", default="local-model.jsonl", help="results, one JSON line per run")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--tasks", default=None, help="comma-separated task names (default: all)")
    parser.add_argument("--frameworks", default=None, help="weakincentives,pydantic-ai,agents-sdk")
    parser.add_argument("--max-tokens", type=int, default=1024)
    parser.add_argument("--max-rounds", type=int, default=8)
    parser.add_argument(
        "--table-only", action="store_true", help="print the table of --out and stop"
    )
    args = parser.parse_args()
    out = Path(args.out)
    if args.table_only:
        print(table(out))
        return 0
    if not args.base_url:
        print("bench_local_model: skipped (pass --base-url, or set WINK_LOCAL_BASE_URL)")
        return 0
    done = done_runs(out)
    for task, framework, adapter, rep in planned(args):
        if (task.name, framework, adapter, rep) in done:
            continue
        record = one_run(task, framework, adapter, rep, args)
        with out.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(record) + "\n")
        print(
            f"{task.name:14} {framework:15} {adapter:12} rep {rep}: "
            f"{'ok ' if record['success'] else 'FAIL'} rounds={record['rounds']} "
            f"{record['seconds']}s {record['why'][:120]}",
            flush=True,
        )
    print(table(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
