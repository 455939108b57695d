"""``wink catalog eval CATALOG QUERIES``: measure how findable a catalogue's tools are.

Teams write down what their users ask and which tools should answer; this
command runs each query through discovery (with the same access policy a
caller would have) and reports recall, MRR and the queries whose tools were
missed, with what ranked first instead, so undiscoverable tools can be fixed
(usually by a better name or summary). Both files may be JSON lines or one
JSON array. Nothing a hidden tool holds is ever printed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, cast

from weakincentives._cli._render import CommandError
from weakincentives.discovery import (
    DiscoveryError,
    IdAccessPolicy,
    ToolCatalog,
    ToolDiscovery,
)
from weakincentives.errors import CatalogError, ParseError
from weakincentives.serde import loads

__all__ = [
    "EvalQuery",
    "catalog_eval_command",
    "read_catalog",
    "read_json_records",
    "resolve_category",
]

_DEPTH = 10
"""Ranks always looked at per query (R@10, nDCG@10); a larger ``--k`` looks deeper."""

MAX_K = 50
"""The largest ``--k``: one discovery search page holds at most 50 tools."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalQuery:
    """One labelled query: its text and the tool ids that should answer it."""

    qid: str
    query: str
    relevant: tuple[str, ...]


def read_json_records(path: Path, what: str) -> list[dict[str, object]]:
    """Objects from a JSON-lines file or a file holding one JSON array of objects.

    Decoded by serde's ``loads``: bytes that are not UTF-8, deep nesting or ``NaN``
    are a CommandError naming the line, never a decoder's exception.
    """
    if not path.is_file():
        raise CommandError(f"{what} file {str(path)!r} does not exist")
    data = path.read_bytes()
    if data.lstrip()[:1] == b"[":
        # JSON text starting with "[" that decodes is an array (trailing data is an error).
        rows = cast("list[object]", _decoded(data, str(path)))
        items = list(enumerate(rows, start=1))
        unit = "item"
    else:
        items = []
        for number, line in enumerate(data.split(b"\n"), start=1):
            if line.strip():
                items.append((number, _decoded(line, f"{path}:{number}")))
        unit = "line"
    records: list[dict[str, object]] = []
    for number, item in items:
        if not isinstance(item, dict):
            raise CommandError(f"{path}: {unit} {number} is not a JSON object")
        records.append(item)
    return records


def _decoded(text: bytes, where: str) -> object:
    try:
        return loads(text)
    except ParseError as exc:
        raise CommandError(f"{where}: not valid JSON ({exc.got})") from exc


def read_catalog(file: str) -> ToolCatalog:
    """A catalogue from a JSON-lines or JSON-array file of tool records."""
    path = Path(file)
    if not path.is_file():
        raise CommandError(f"catalogue file {str(path)!r} does not exist")
    return ToolCatalog.from_jsonl(path)


def read_queries(file: str) -> list[EvalQuery]:
    """Labelled queries: objects with ``query``, ``relevant`` (tool ids) and optional ``qid``."""
    path = Path(file)
    queries: list[EvalQuery] = []
    for number, record in enumerate(read_json_records(path, "queries"), start=1):
        text, relevant = record.get("query"), record.get("relevant")
        if not isinstance(text, str) or not text.strip():
            raise CommandError(f"{path}: query {number} needs a non-empty string 'query'")
        if (
            not isinstance(relevant, list)
            or not relevant
            or not all(isinstance(tool_id, str) for tool_id in relevant)
        ):
            raise CommandError(
                f"{path}: query {number} needs 'relevant', a non-empty list of tool ids"
            )
        qid = record.get("qid", str(number))
        queries.append(EvalQuery(qid=str(qid), query=text, relevant=tuple(relevant)))
    return queries


def resolve_category(discovery: ToolDiscovery, category: str | None) -> tuple[str, ...]:
    """Turn ``A/B`` into a category path, matching each segment case-insensitively.

    An unknown segment is reported with the discovery error's hints (the
    nearest categories the caller may see).
    """
    path: tuple[str, ...] = ()
    for segment in (part.strip() for part in (category or "").split("/")):
        if not segment:
            continue
        children = discovery.list(path=list(path), limit=50)
        names = {node.path[-1].casefold(): node.path for node in children.nodes}
        cursor = children.next_cursor
        while cursor is not None and segment.casefold() not in names:
            page = discovery.list(path=list(path), limit=50, cursor=cursor)
            names.update({node.path[-1].casefold(): node.path for node in page.nodes})
            cursor = page.next_cursor
        found = names.get(segment.casefold())
        if found is None:
            try:
                discovery.list(path=[*path, segment], limit=1)
            except DiscoveryError as error:
                raise CommandError(_with_hints(error)) from None
            raise CommandError(f"category {segment!r} under {list(path)!r} holds no tools")
        path = found
    return path


def _with_hints(error: DiscoveryError) -> str:
    lines = [str(error)]
    lines.extend(
        f"  try: {'/'.join(hint.path)}" + (f" ({hint.summary})" if hint.summary else "")
        for hint in error.hints
    )
    return "\n".join(lines)


def catalog_eval_command(
    catalog_file: str,
    queries_file: str,
    *,
    k: int,
    category: str | None,
    hidden: Sequence[str],
    show: int,
    out: TextIO,
    skip_unknown: bool,
) -> int:
    """Evaluate ``queries_file`` against ``catalog_file`` and print the report.

    A relevant id the catalogue does not hold is an error, unless ``skip_unknown``
    drops such ids from the labels (a query left with none is skipped) and says how many.
    """
    if not 1 <= k <= MAX_K:
        raise CommandError(f"--k must be from 1 to {MAX_K}, got {k}")
    if show < 0:
        raise CommandError(f"--show must be 0 or more missed queries, got {show}")
    try:
        catalog = read_catalog(catalog_file)
    except CatalogError as exc:
        raise CommandError(f"{catalog_file}: {exc}") from exc
    queries = read_queries(queries_file)
    unknown = sorted({t for q in queries for t in q.relevant if catalog.tool(t) is None})
    if unknown and not skip_unknown:
        raise CommandError(
            f"{queries_file}: {len(unknown)} relevant id(s) are not in the catalogue, "
            f"e.g. {', '.join(unknown[:3])} (--skip-unknown leaves them out)"
        )
    policy = IdAccessPolicy(hidden=frozenset(hidden)) if hidden else None
    discovery = ToolDiscovery(catalog, access=policy)
    where = resolve_category(discovery, category)
    visible = {tool.tool_id for tool in catalog.tools if policy is None or policy.can_see(tool)}
    # What a hidden tool holds is never printed: its ids leave the labels first.
    labelled = [
        EvalQuery(qid=q.qid, query=q.query, relevant=tuple(t for t in q.relevant if t in visible))
        for q in queries
    ]
    usable = [q for q in labelled if q.relevant]
    out.write(
        f"{len(usable)} queries against {discovery.overview().tool_count} tools"
        + (f" under {'/'.join(where)}" if where else "")
        + f" (k={k})\n"
    )
    if unknown:
        out.write(
            f"{len(unknown)} relevant id(s) not in the catalogue skipped, "
            f"e.g. {', '.join(unknown[:3])}\n"
        )
    if len(usable) < len(labelled):
        out.write(f"{len(labelled) - len(usable)} queries skipped: no visible expected tool\n")
    if not usable:
        return 0
    _score(discovery, usable, where, k=k, show=show, out=out)
    return 0


type _Ranked = list[tuple[str, float | None]]
"""Tool ids in rank order, each with its confidence when the ranker gives one."""


def _score(
    discovery: ToolDiscovery,
    usable: Sequence[EvalQuery],
    where: tuple[str, ...],
    *,
    k: int,
    show: int,
    out: TextIO,
) -> None:
    """Rank each query's tools as deep as ``k`` (at least 10), print the means and the misses."""
    depths = sorted({1, k, _DEPTH})
    totals = dict.fromkeys([*(f"R@{depth}" for depth in depths), "MRR", "nDCG@10", "complete"], 0.0)
    missed: list[tuple[EvalQuery, _Ranked]] = []
    for query in usable:
        ranked = _ranked(discovery, query.query, where, depth=max(k, _DEPTH))
        ids = [tool_id for tool_id, _ in ranked]
        relevant = set(query.relevant)
        for depth in depths:
            totals[f"R@{depth}"] += len(relevant.intersection(ids[:depth])) / len(relevant)
        first = next((rank for rank, tool_id in enumerate(ids, 1) if tool_id in relevant), None)
        totals["MRR"] += 1 / first if first else 0.0
        top = enumerate(ids[:_DEPTH], 1)
        gain = sum(1 / math.log2(rank + 1) for rank, t in top if t in relevant)
        ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(relevant), _DEPTH) + 1))
        totals["nDCG@10"] += gain / ideal
        if relevant <= set(ids[:k]):
            totals["complete"] += 1
        else:
            missed.append((query, ranked))
    out.write(
        "  ".join(f"{name} {value / len(usable):.3f}" for name, value in totals.items())
        + f"  (complete = every expected tool in the top {k})\n"
    )
    if missed:
        out.write(f"\n{len(missed)} queries missed an expected tool in the top {k}")
        out.write(f"; the first {min(show, len(missed))}:\n" if show else "\n")
    for query, ranked in missed[:show]:
        _report_miss(query, ranked, depth=max(k, _DEPTH), out=out)


def _report_miss(query: EvalQuery, ranked: _Ranked, *, depth: int, out: TextIO) -> None:
    ids = [tool_id for tool_id, _ in ranked]
    out.write(f"- [{query.qid}] {_clip(query.query, 100)}\n")
    for tool_id in query.relevant:
        rank = ids.index(tool_id) + 1 if tool_id in ids else None
        where_found = f"rank {rank}" if rank else f"not in the top {depth}"
        out.write(f"    expected {tool_id}: {where_found}\n")
    for tool_id, confidence in ranked[:3]:
        mark = "" if confidence is None else f" ({confidence:.2f})"
        out.write(f"    ranked   {tool_id}{mark}\n")


def _ranked(discovery: ToolDiscovery, query: str, where: tuple[str, ...], *, depth: int) -> _Ranked:
    try:
        response = discovery.search_tool_by_category(query, list(where), limit=depth)
    except DiscoveryError:
        return []
    return [(pointer.tool_id, pointer.confidence) for pointer in response.results]


def _clip(text: str, size: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= size else flat[: size - 1] + "…"
