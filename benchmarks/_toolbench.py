"""Load the ToolBench retrieval data that benchmarks (and one test module) read.

The data is never copied into the repository: it lives in the shared data
directory beside the checkout (``../shared/data/toolbench``), or wherever
``WINK_TOOLBENCH_DIR`` points. ``SOURCE.md`` there describes the format.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import cast

__all__ = ["DataMissingError", "Query", "data_dir", "load_queries", "load_records"]

_CANDIDATES = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "toolbench",
    Path("/work/shared/data/toolbench"),
)


class DataMissingError(RuntimeError):
    """The ToolBench files are not available on this machine."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    qid: str
    group: str
    query: str
    relevant: tuple[str, ...]


def data_dir() -> Path:
    """Return the directory holding catalog.jsonl and queries.jsonl."""
    override = os.environ.get("WINK_TOOLBENCH_DIR")
    for candidate in ((Path(override),) if override else ()) + _CANDIDATES:
        if (candidate / "catalog.jsonl").is_file() and (candidate / "queries.jsonl").is_file():
            return candidate
    raise DataMissingError(
        "ToolBench data not found; set WINK_TOOLBENCH_DIR to a directory holding "
        "catalog.jsonl and queries.jsonl"
    )


def _lines(name: str) -> list[dict[str, object]]:
    text = (data_dir() / name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_records() -> list[dict[str, object]]:
    """The 2,490 endpoint records, in file order."""
    return _lines("catalog.jsonl")


def load_queries() -> list[Query]:
    """The 765 labelled queries."""
    return [
        Query(
            qid=str(row["qid"]),
            group=str(row["group"]),
            query=str(row["query"]),
            relevant=tuple(str(tool_id) for tool_id in cast("list[object]", row["relevant"])),
        )
        for row in _lines("queries.jsonl")
    ]
