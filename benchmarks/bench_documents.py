"""What storing values as typed, versioned documents costs over plain dump/parse, in one process.

Prints ``name  n  best_ms  ratio`` lines (best of several repeats). The ratio is the
document path over an untyped baseline on the same value: ``dump`` + ``json.dumps`` for
writing; for reading, ``json.loads`` + ``parse`` where plain serde can read the class at
all (it gives back dicts where the document gives back the recorded classes), else
``json.loads`` alone (``ToolInvoked`` holds an exception field plain ``parse`` refuses).
Run with ``python benchmarks/bench_documents.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from uuid import UUID

from weakincentives.prompt import ToolResult
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    PromptExecuted,
    Retention,
    Session,
    SessionSnapshot,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.serde import dump, dump_document, load_document, parse

REPEATS = 7
WHEN = datetime(2026, 1, 1, tzinfo=UTC)
SESSION = UUID("00000000-0000-0000-0000-000000000001")


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    """A tool's params."""

    text: str
    limit: int = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """One search hit."""

    title: str
    score: float
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Hits:
    """A tool's result payload."""

    hits: tuple[Hit, ...]


def _invoked(index: int) -> ToolInvoked:
    hits = tuple(Hit(title=f"doc {n}", score=n / 10, tags=("a", "b")) for n in range(5))
    return ToolInvoked(
        evaluation_id="ev-1",
        prompt_name="search",
        adapter="offline",
        session_id=SESSION,
        name="search",
        call_id=f"call-{index}",
        arguments={"text": "tea", "limit": 5},
        params=Query(text="tea", limit=5),
        result=ToolResult(message="5 hits", value=Hits(hits=hits)),
        rendered_output="...",
        started_at=WHEN,
        finished_at=WHEN,
        telemetry=MappingProxyType({"hits": 5}),
    )


def _executed() -> PromptExecuted:
    return PromptExecuted(
        evaluation_id="ev-1",
        prompt_name="search",
        adapter="offline",
        session_id=SESSION,
        text="done",
        output=Hits(hits=()),
        tool_call_count=3,
        rounds=2,
        halted=False,
        usage=TokenUsage(input_tokens=1200, output_tokens=80),
        started_at=WHEN,
        finished_at=WHEN,
        model="gpt-4.1",
    )


def best_ms(function: Callable[[], object], n: int) -> float:
    """Best time of ``REPEATS`` runs of ``n`` calls, in milliseconds."""
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(n):
            function()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def report(name: str, n: int, ours: float, baseline: float) -> None:
    """One line: the document path's best time and its ratio to the baseline."""
    print(f"{name:<42} {n:>6} {ours:>10.3f} {ours / baseline:>6.2f}")


def bench_event(name: str, event: object, cls: type[object] | None, n: int) -> None:
    """One event written and read as a document vs plain dump/parse of the same event."""
    text = dump_document(EVENT_DOCUMENT, event)
    plain = json.dumps(dump(event))

    def baseline() -> object:
        data = json.loads(plain)
        return data if cls is None else parse(cls, data)

    report(
        f"{name} write",
        n,
        best_ms(lambda: dump_document(EVENT_DOCUMENT, event), n),
        best_ms(lambda: json.dumps(dump(event)), n),
    )
    report(
        f"{name} read" + (" (vs json.loads)" if cls is None else ""),
        n,
        best_ms(lambda: load_document(EVENT_DOCUMENT, text), n),
        best_ms(baseline, n),
    )


def bench_snapshot(events: int) -> None:
    """A session of ``events`` ToolInvoked events: to_json/from_json vs dumping the slices."""
    session = Session(session_id=SESSION, retention=Retention.unbounded())
    for index in range(events):
        session.apply(_invoked(index))
    snapshot = session.snapshot()
    values = snapshot.select(ToolInvoked)
    text = snapshot.to_json()
    plain = json.dumps(dump(values))
    report(
        f"snapshot of {events:,} write",
        1,
        best_ms(snapshot.to_json, 1),
        best_ms(lambda: json.dumps(dump(values)), 1),
    )
    report(
        f"snapshot of {events:,} read (vs json.loads)",
        1,
        best_ms(lambda: SessionSnapshot.from_json(text), 1),
        best_ms(lambda: json.loads(plain), 1),
    )
    print(f"{'snapshot bytes per event':<42} {len(text.encode()) // events:>6}")


def main() -> None:
    """Run every comparison."""
    print(f"{'name':<42} {'n':>6} {'best_ms':>10} {'ratio':>6}")
    bench_event("ToolInvoked", _invoked(0), None, 2_000)
    bench_event("PromptExecuted", _executed(), PromptExecuted, 2_000)
    bench_snapshot(1_000)


if __name__ == "__main__":
    main()
