"""Load the shared tool-retrieval data sets that benchmarks read.

The data is never copied into the repository. It lives in the shared data
directory beside the checkout (``../shared/data/<name>``), or under the
directory ``WINK_DATA_DIR`` points at. ``WINK_TOOLBENCH_DIR`` and
``WINK_METATOOL_DIR`` override one set each. Each set's ``SOURCE.md``
describes the format: ``catalog.jsonl`` (tool records) and ``queries.jsonl``
(labelled queries).

* ``toolbench``: 2,490 RapidAPI endpoints under 47 categories and 814 APIs,
  765 long, often multi-request queries.
* ``metatool``: 199 flat plugins (one category, no parameters), 21,041 short
  queries, almost all with one relevant tool.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

__all__ = [
    "DATASETS",
    "DataMissingError",
    "Dataset",
    "DatasetName",
    "Query",
    "data_dir",
    "load",
    "load_queries",
    "load_records",
]

type DatasetName = Literal["toolbench", "metatool"]
DATASETS: tuple[DatasetName, ...] = ("toolbench", "metatool")

_CHECKOUT = Path(__file__).resolve().parents[1]


class DataMissingError(RuntimeError):
    """A shared data set is not available on this machine."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    qid: str
    group: str
    query: str
    relevant: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Dataset:
    name: DatasetName
    records: list[dict[str, object]]
    queries: list[Query]


def data_dir(name: DatasetName = "toolbench") -> Path:
    """Return the directory holding ``name``'s catalog.jsonl and queries.jsonl."""
    candidates: list[Path] = []
    if override := os.environ.get(f"WINK_{name.upper()}_DIR"):
        candidates.append(Path(override))
    if shared := os.environ.get("WINK_DATA_DIR"):
        candidates.append(Path(shared) / name)
    candidates.append(_CHECKOUT.parent / "shared" / "data" / name)
    for candidate in candidates:
        if (candidate / "catalog.jsonl").is_file() and (candidate / "queries.jsonl").is_file():
            return candidate
    raise DataMissingError(
        f"{name} data not found (looked in {', '.join(map(str, candidates))}); set WINK_DATA_DIR "
        f"to the shared data directory or WINK_{name.upper()}_DIR to the {name} directory"
    )


def _lines(name: DatasetName, file: str) -> list[dict[str, object]]:
    text = (data_dir(name) / file).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_records(name: DatasetName = "toolbench") -> list[dict[str, object]]:
    """The catalogue records, in file order."""
    return _lines(name, "catalog.jsonl")


def load_queries(name: DatasetName = "toolbench") -> list[Query]:
    """The labelled queries, in file order."""
    return [
        Query(
            qid=str(row["qid"]),
            group=str(row["group"]),
            query=str(row["query"]),
            relevant=tuple(str(tool_id) for tool_id in cast("list[object]", row["relevant"])),
        )
        for row in _lines(name, "queries.jsonl")
    ]


def load(name: DatasetName) -> Dataset:
    """Both files of one data set."""
    return Dataset(name=name, records=load_records(name), queries=load_queries(name))
