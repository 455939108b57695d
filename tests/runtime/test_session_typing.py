"""The session's reducer and bus signatures reject mismatched types at type-check time."""

from __future__ import annotations

from pathlib import Path

from mypy import api

SNIPPET = """
from dataclasses import dataclass

from weakincentives.runtime import InProcessEventBus, Session, append


@dataclass(frozen=True)
class Event:
    value: int


@dataclass(frozen=True)
class Summary:
    text: str


def summarize(slice_: tuple[Summary, ...], event: Event) -> tuple[Summary, ...]:
    return (*slice_, Summary(text=str(event.value)))


def on_summary(event: Summary) -> None:
    pass


session = Session()
session.register_reducer(Event, append)
session.register_reducer(Event, summarize, slice_type=Summary)
session.register_reducer(Event, summarize)  # line 27: slice type defaults to Event
session.register_reducer(Event, summarize, slice_type=Event)  # line 28: wrong slice type
InProcessEventBus().subscribe(Event, on_summary)  # line 29: handler for another type
"""


def test_mismatched_reducers_and_handlers_are_type_errors(tmp_path: Path) -> None:
    """mypy flags exactly the reducer and handler whose types do not line up."""
    module = tmp_path / "snippet.py"
    module.write_text(SNIPPET.lstrip("\n"))
    stdout, _, status = api.run(
        [
            "--strict",
            "--no-incremental",
            "--cache-dir=/dev/null",
            "--follow-imports=silent",
            "--hide-error-context",
            "--no-error-summary",
            str(module),
        ]
    )
    lines = sorted(
        line.split(":")[1] for line in stdout.splitlines() if line.startswith(str(module))
    )
    assert (status, lines) == (1, ["27", "28", "29"]), stdout
