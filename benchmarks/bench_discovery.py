"""Tool discovery on ToolBench: retrieval quality, latency, build time, memory, tokens.

Quality: recall@5, recall@10, Hit@5 and Comp@5 (definitions in the data's
SOURCE.md) for ``search_tool_by_category`` at the root with the default
ranker, next to rank-bm25 ``BM25Okapi`` baselines computed in the same run
with the tokenizer SOURCE.md describes, and next to ablations of the default
ranker (what each part of it contributes).

Speed: per-query search latency (best of 3 runs per query, to keep scheduler
noise out of the percentiles), p50/p99, and index build time at 2,490 tools
and at 100,000 tools (a synthetic scale-up: perturbed copies of the catalogue
under new API nodes), plus traced memory at 100k. Ratios compare the indexed
search with a linear scan over precomputed term sets and with rank-bm25.

Tokens: every schema up front vs one discovery round, counted with the
shared ``o200k_base`` helper when it is installed.

Run: ``.venv/bin/python benchmarks/bench_discovery.py`` (needs the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import random
import re
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import cast

from _tokens import TokenizerMissingError, count_tokens
from _toolbench import DATASETS, DatasetName, Query, load_queries, load_records
from rank_bm25 import BM25Okapi

from weakincentives.discovery import (
    BM25Ranker,
    DiscoveryError,
    E5Embedder,
    EmbeddingRanker,
    FusedRanker,
    ToolCatalog,
    ToolDiscovery,
    load_catalog_index,
    save_index,
)
from weakincentives.discovery._fusion import DEFAULT_OTHER_WEIGHT, FusedIndex
from weakincentives.discovery._index_file import load_index
from weakincentives.discovery._ranking import BM25Index
from weakincentives.discovery._text import tokenize
from weakincentives.errors import ConfigValidationError

SCALE = 100_000
LATENCY_QUERIES_AT_SCALE = 200
type Ranking = Callable[[str], Sequence[str]]


# --- metrics -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Scores:
    recall1: float
    recall5: float
    recall10: float
    ndcg10: float
    mrr: float
    comp5: float


def evaluate(rank: Ranking, queries: Sequence[Query]) -> dict[str, Scores]:
    """Mean metrics overall (key "all"), per query group (definitions in SOURCE.md), and per
    half ("tuning": even positions in ``queries``, "held-out": odd ones)."""
    sums: dict[str, list[float]] = {}
    for position, query in enumerate(queries):
        top = list(rank(query.query))[:10]
        relevant = set(query.relevant)
        gain = sum(1 / math.log2(i + 2) for i, tool_id in enumerate(top) if tool_id in relevant)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
        first = next((i + 1 for i, tool_id in enumerate(top) if tool_id in relevant), None)
        row = (
            len(relevant & set(top[:1])) / len(relevant),
            len(relevant & set(top[:5])) / len(relevant),
            len(relevant & set(top)) / len(relevant),
            gain / ideal,
            1 / first if first else 0.0,
            float(relevant <= set(top[:5])),
            1.0,
        )
        for key in ("all", query.group, "held-out" if position % 2 else "tuning"):
            sums[key] = [a + b for a, b in zip(sums.get(key, [0.0] * 7), row, strict=True)]
    return {key: Scores(**_means(v)) for key, v in sums.items()}


def _means(v: list[float]) -> dict[str, float]:
    names = ("recall1", "recall5", "recall10", "ndcg10", "mrr", "comp5")
    return {name: total / v[6] for name, total in zip(names, v, strict=False)}


# --- baselines -----------------------------------------------------------------------------

_CAMEL = (re.compile(r"([a-z0-9])([A-Z])"), re.compile(r"([A-Z]+)([A-Z][a-z])"))


def baseline_tokens(text: str) -> list[str]:
    """SOURCE.md's baseline tokenizer: split camelCase, lowercase, split on non-alphanumerics."""
    for pattern in _CAMEL:
        text = pattern.sub(r"\1 \2", text)
    return [token for token in re.split(r"[^a-z0-9]+", text.lower()) if token]


def bm25_baseline(records: Sequence[Mapping[str, object]], with_path: bool) -> Ranking:
    ids = [str(record["tool_id"]) for record in records]
    docs = []
    for record in records:
        text = f"{record['name']} {record['summary']}"
        if with_path:
            text += " " + " ".join(str(part) for part in cast("list[object]", record["path"]))
        docs.append(baseline_tokens(text))
    model = BM25Okapi(docs)

    def rank(query: str) -> list[str]:
        scores = model.get_scores(baseline_tokens(query))
        order = sorted(range(len(ids)), key=lambda i: -scores[i])
        return [ids[i] for i in order[:10]]

    return rank


def linear_scan(catalog: ToolCatalog) -> Callable[[str], list[str]]:
    """The no-index floor: overlap of query terms with each tool's precomputed term set."""
    docs = [
        (tool.tool_id, frozenset(tokenize(f"{tool.name} {tool.summary} {' '.join(tool.path)}")))
        for tool in catalog.tools
    ]

    def rank(query: str) -> list[str]:
        terms = frozenset(tokenize(query))
        scored = [(len(terms & doc), tool_id) for tool_id, doc in docs]
        scored.sort(key=lambda entry: (-entry[0], entry[1]))
        return [tool_id for _, tool_id in scored[:5]]

    return rank


# --- timing --------------------------------------------------------------------------------


def percentiles(action: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p99 in ms of the per-query best of 3 runs."""
    gc.collect()
    times = []
    for query in queries:
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            action(query)
            best = min(best, time.perf_counter() - start)
        times.append(best * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]


def best_seconds(action: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


# --- synthetic scale-up --------------------------------------------------------------------


def scaled_records(
    records: Sequence[Mapping[str, object]], size: int, seed: int = 7
) -> list[dict[str, object]]:
    """``size`` records: the originals, then perturbed copies under new API nodes.

    Copy ``k`` of an endpoint keeps its name and category, moves to the API node
    ``"<api> <k>"``, drops about a fifth of its summary words and adds two words
    drawn from the whole catalogue, so copies are near-duplicates, not clones.
    """
    rng = random.Random(seed)
    vocabulary = [word for r in records for word in str(r["summary"]).split()] or ["tool"]
    out: list[dict[str, object]] = [dict(record) for record in records]
    copy = 1
    while len(out) < size:
        for record in records:
            if len(out) == size:
                break
            category, api = cast("list[str]", record["path"])
            words = [w for w in str(record["summary"]).split() if rng.random() > 0.2]
            words.extend(rng.choice(vocabulary) for _ in range(2))
            out.append(
                {
                    **record,
                    "tool_id": f"{record['tool_id']}~{copy}",
                    "path": [category, f"{api} {copy}"],
                    "summary": " ".join(words),
                }
            )
        copy += 1
    return out


# --- token comparison ----------------------------------------------------------------------

DISCOVERY_OPERATIONS: list[dict[str, object]] = [
    {
        "name": "list",
        "description": "List child categories and tools under a category path.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "array", "items": {"type": "string"}},
                "tags": {"type": "array", "items": {"type": "string"}},
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "cursor": {"type": "string"},
            },
        },
    },
    {
        "name": "search_tool_by_category",
        "description": "Search tools by natural language within a category.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "category_path": {"type": "array", "items": {"type": "string"}},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50},
                "cursor": {"type": "string"},
            },
            "required": ["query"],
        },
    },
    {
        "name": "search_nodes",
        "description": "Search categories when unsure where to start.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
        },
    },
    {
        "name": "expand_tool",
        "description": "Return a tool's full argument schema before calling it.",
        "parameters": {
            "type": "object",
            "properties": {"tool_id": {"type": "string"}},
            "required": ["tool_id"],
        },
    },
    {
        "name": "call_tool",
        "description": "Call an expanded tool with arguments matching its schema.",
        "parameters": {
            "type": "object",
            "properties": {"tool_id": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["tool_id", "arguments"],
        },
    },
]
"""An approximation of the discovery section's tool definitions, until that section exists."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenReport:
    upfront: int
    """Every tool's definition (name, summary, argument schema) sent with each request."""
    operations: int
    """The five discovery operations' definitions."""
    round_mean: float
    """Per query: one search (limit 5) plus expanding its top 2 results."""
    round_max: int


def compare_prompt_tokens(
    discovery: ToolDiscovery, queries: Sequence[str], count_tokens: Callable[[str], int]
) -> TokenReport:
    """Tokens for every schema up front vs one discovery round per query."""
    definitions = [
        {"name": tool.tool_id, "description": tool.summary, "parameters": dict(tool.args_schema)}
        for tool in discovery.catalog.tools
    ]
    upfront = count_tokens(json.dumps(definitions))
    operations = count_tokens(json.dumps(DISCOVERY_OPERATIONS))
    rounds = []
    for query in queries:
        found = discovery.search_tool_by_category(query, limit=5)
        text = json.dumps(asdict(found))
        for pointer in found.results[:2]:
            text += json.dumps(asdict(discovery.expand_tool(pointer.tool_id)))
        rounds.append(count_tokens(text))
    return TokenReport(
        upfront=upfront,
        operations=operations,
        round_mean=sum(rounds) / len(rounds),
        round_max=max(rounds),
    )


# --- report --------------------------------------------------------------------------------


def ranking_of(discovery: ToolDiscovery) -> Ranking:
    """Top-10 tool ids from ``search_tool_by_category`` at the root."""

    def rank(query: str) -> list[str]:
        try:
            results = discovery.search_tool_by_category(query, limit=10).results
        except DiscoveryError:
            return []  # no tool shares a word with the query
        return [pointer.tool_id for pointer in results]

    return rank


def print_quality(rows: Sequence[tuple[str, dict[str, Scores]]]) -> None:
    print(f"{'ranker':<46}{'R@1':>7}{'R@5':>7}{'R@10':>7}{'nDCG10':>8}{'MRR':>7}{'Comp@5':>8}")
    for name, result in rows:
        s = result["all"]
        print(
            f"{name:<46}{s.recall1:>7.3f}{s.recall5:>7.3f}{s.recall10:>7.3f}"
            f"{s.ndcg10:>8.3f}{s.mrr:>7.3f}{s.comp5:>8.3f}"
        )
    groups = sorted(key for key in rows[0][1] if key not in {"all", "tuning", "held-out"})
    groups += ["tuning", "held-out"]
    print()
    print(
        f"{'R@5 by group':<46}"
        + "".join(f"{g.replace('_instruction', '_inst'):>13}" for g in groups)
    )
    for name, result in rows:
        print(f"{name:<46}" + "".join(f"{result[g].recall5:>13.3f}" for g in groups))


def bm25s_baseline(records: Sequence[Mapping[str, object]]) -> Ranking | None:
    """bm25s (lucene BM25, k1 1.5, b 0.75) over name+summary+path, when it is installed."""
    try:
        import bm25s  # noqa: PLC0415 - optional baseline
    except ImportError:
        return None
    ids = [str(record["tool_id"]) for record in records]
    corpus = [
        baseline_tokens(
            f"{record['name']} {record['summary']} "
            + " ".join(str(p) for p in cast("list[object]", record["path"]))
        )
        for record in records
    ]
    model = bm25s.BM25()
    model.index(corpus, show_progress=False)

    def rank(query: str) -> list[str]:
        terms = [t for t in baseline_tokens(query) if t in model.vocab_dict]
        if not terms:
            return []
        scores = model.get_scores(terms)
        order = sorted(range(len(ids)), key=lambda i: -scores[i])
        return [ids[i] for i in order[:10] if scores[i] > 0]

    return rank


def semantic_rows(
    catalog: ToolCatalog, queries: Sequence[Query], step: int
) -> list[tuple[str, dict[str, Scores]]]:
    """BM25F fused with the bundled e5 model, e5 alone, and BM25F on the same queries.

    Embedding a query takes tens of milliseconds on this machine, so the semantic rows
    use every ``step``-th query; the BM25F row beside them uses the same ones.
    """
    try:
        embedder = E5Embedder()
    except ConfigValidationError as exc:
        print(f"semantic ranker skipped: {exc}")
        return []
    sample = list(queries[::step])
    rss = _rss_mib()
    started = time.perf_counter()
    semantic = EmbeddingRanker(embedder=embedder).index(catalog)
    built = time.perf_counter() - started
    fused = FusedRanker(rankers=(BM25Ranker(), EmbeddingRanker(embedder=embedder)))
    lexical = BM25Ranker().index(catalog)
    defaults = (1.0, DEFAULT_OTHER_WEIGHT)
    fused_index = FusedIndex(
        indexes=(lexical, semantic),
        weights=defaults,
        k=fused.k,
        depth=fused.depth,
        adaptive=fused.adaptive,
    )
    adaptive_index = FusedIndex(
        indexes=(lexical, semantic), weights=(1.0, 0.5), k=fused.k, depth=fused.depth, adaptive=True
    )
    fused_service = ToolDiscovery(catalog, index=fused_index)
    label = f" (every {step}. query)" if step > 1 else ""
    rows = [
        (
            f"wink BM25F + e5, RRF (FusedRanker defaults){label}",
            evaluate(ranking_of(fused_service), sample),
        ),
        (
            f"  option: e5 weight 0.5 * (2 - coverage){label}",
            evaluate(ranking_of(ToolDiscovery(catalog, index=adaptive_index)), sample),
        ),
        (
            f"e5 alone{label}",
            evaluate(ranking_of(ToolDiscovery(catalog, index=semantic)), sample),
        ),
        (f"wink BM25F default{label}", evaluate(ranking_of(ToolDiscovery(catalog)), sample)),
    ]
    texts = [query.query for query in sample[:100]]

    # Each timed search starts with no recent query vectors, as a query seen for the first
    # time does (within one search, diversification reuses the request vectors).
    def first_time(action: Callable[[str], object]) -> Callable[[str], object]:
        def run(query: str) -> object:
            semantic.clear_query_cache()
            return action(query)

        return run

    p50, p99 = percentiles(first_time(lambda q: semantic.score_tools(q, top=50)), texts)
    f50, f99 = percentiles(
        first_time(lambda q: fused_service.search_tool_by_category(q, limit=5)), texts
    )
    print(
        f"e5: embedding {len(catalog)} tools took {built:.1f} s; query p50 {p50:.1f} ms "
        f"(p99 {p99:.1f}); fused search p50 {f50:.1f} ms (p99 {f99:.1f}); "
        f"matrix {semantic.tools.nbytes / 2**20:.1f} MiB; process RSS +{_rss_mib() - rss:.0f} MiB "
        "(model and engine, outside tracemalloc)"
    )
    return rows


def _rss_mib() -> float:
    """Resident set size of this process, from /proc (0 where it is not available)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def quality(name: DatasetName, semantic_step: int | None) -> None:
    """The quality table for one shared data set, every system in this one run."""
    records, queries = load_records(name), load_queries(name)
    catalog = ToolCatalog.from_records(records)

    def variant(ranker: BM25Ranker, *, diversify: bool = True) -> Ranking:
        return ranking_of(ToolDiscovery(catalog, ranker=ranker, diversify=diversify))

    rows = [
        ("wink BM25F + diversification (default)", evaluate(variant(BM25Ranker()), queries)),
        (
            "wink BM25F, no diversification",
            evaluate(variant(BM25Ranker(), diversify=False), queries),
        ),
        (
            "  ablation: siblings not adaptive (w = 1)",
            evaluate(variant(BM25Ranker(adaptive_siblings=False), diversify=False), queries),
        ),
        (
            "  ablation: no sibling evidence",
            evaluate(variant(BM25Ranker(sibling_weight=0), diversify=False), queries),
        ),
        ("rank-bm25 BM25Okapi name+summary+path", evaluate(bm25_baseline(records, True), queries)),
    ]
    okapi_s = bm25s_baseline(records)
    if okapi_s is not None:
        rows.append(("bm25s name+summary+path", evaluate(okapi_s, queries)))
    print(f"== quality, {name}: {len(queries)} queries, {len(catalog)} tools, search at the root")
    if semantic_step is not None:
        rows.extend(semantic_rows(catalog, queries, semantic_step))
    print_quality(rows)
    print()


def scale(big_records: list[dict[str, object]], texts: list[str], queries: list[Query]) -> None:
    """The goals at 100,000 tools: build, memory, search latency, deep pages, file."""
    started = time.perf_counter()
    big = ToolCatalog.from_records(big_records)
    print(
        f"== scale: {len(big)} tools, {len(big.nodes)} category nodes "
        f"(catalogue built in {time.perf_counter() - started:.1f} s)"
    )
    print("CPU seconds (process_time) and tracemalloc; the machine is shared, so compare rows")
    print(f"{'kernel':<30}{'build_s':>9}{'wall_s':>8}{'peak_MiB':>10}{'kept_MiB':>10}", end="")
    print(f"{'p50_ms':>8}{'p99_ms':>8}{'page20':>8}")
    sample = texts[:LATENCY_QUERIES_AT_SCALE]
    services: dict[bool, ToolDiscovery] = {}
    for vectorised in (True, False):
        gc.collect()
        cpu, wall = time.process_time(), time.perf_counter()
        index = BM25Ranker(vectorised=vectorised).index(big)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        del index
        gc.collect()
        tracemalloc.start()
        index = BM25Ranker(vectorised=vectorised).index(big)
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        service = services[vectorised] = ToolDiscovery(big, index=index)
        p50, p99 = cpu_percentiles(functools.partial(page, service, cursors={}), sample)
        cursors = {query: cursor_of_page(service, query, 20) for query in sample[:50]}
        deep = [query for query, cursor in cursors.items() if cursor is not None]
        deep50, _ = cpu_percentiles(functools.partial(page, service, cursors=cursors), deep)
        first50, _ = cpu_percentiles(functools.partial(page, service, cursors={}), deep)
        name = "numpy" if vectorised else "pure Python"
        print(
            f"{'BM25F, ' + name:<30}{cpu:>9.2f}{wall:>8.2f}{peak / 2**20:>10.0f}"
            f"{kept / 2**20:>10.0f}{p50:>8.2f}{p99:>8.2f}{deep50 / first50:>8.2f}"
        )
    okapi = bm25s_build(big_records)
    if okapi is not None:
        print(f"{'bm25s index (calibration)':<30}{okapi[0]:>9.2f}{okapi[1]:>8.2f}")
    print("page20: p50 CPU time of page 20 of a search (limit 2, its cursor) over page 1's")
    big_service = services[True]
    scan50, _ = percentiles(linear_scan(big), sample[:50])
    print(f"linear scan over term sets, p50 {scan50:.1f} ms")
    big_rank = ranking_of(big_service)
    strict = evaluate(big_rank, queries)["all"]
    folded = evaluate(lambda q: [tool_id.split("~")[0] for tool_id in big_rank(q)], queries)
    print(
        f"R@5 at {len(big)}: {strict.recall5:.3f} counting only the labelled originals "
        f"(their near-copies crowd them out), {folded['all'].recall5:.3f} counting a copy "
        "as its original"
    )
    with tempfile.TemporaryDirectory() as folder:
        saved = Path(folder) / "index.bin"
        started = time.perf_counter()
        save_index(cast("BM25Index", big_service.index), saved, catalog=big)
        written = time.perf_counter() - started
        starts, loads = [], []
        for _ in range(3):
            gc.collect()
            started = time.perf_counter()
            loaded = load_catalog_index(saved)
            ToolDiscovery(loaded.catalog, index=loaded.index).search_tool_by_category(sample[0])
            starts.append(time.perf_counter() - started)
            del loaded
            gc.collect()
            started = time.perf_counter()
            load_index(saved, big)
            loads.append(time.perf_counter() - started)
        print(
            f"index file at {len(big)} with its catalogue: {saved.stat().st_size / 2**20:.0f} MiB, "
            f"save {written:.2f} s; start-up (load_catalog_index, service, first search) "
            f"median {sorted(starts)[1]:.2f} s; load_index alone median {sorted(loads)[1]:.2f} s "
            "(wall, 3 runs)"
        )


def page(service: ToolDiscovery, query: str, *, cursors: Mapping[str, str | None]) -> object:
    """One page of a search with limit 2: the first, or the one ``cursors[query]`` points at."""
    return service.search_tool_by_category(query, limit=2, cursor=cursors.get(query))


def cursor_of_page(service: ToolDiscovery, query: str, number: int) -> str | None:
    """The cursor of page ``number`` (limit 2), found by walking; None if there is none."""
    cursor = service.search_tool_by_category(query, limit=2).next_cursor
    for _ in range(number - 2):
        if cursor is None:
            return None
        cursor = service.search_tool_by_category(query, limit=2, cursor=cursor).next_cursor
    return cursor


def cpu_percentiles(action: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    """p50 and p99 in ms of CPU time per query (best of 3), less sensitive to other jobs."""
    gc.collect()
    times = []
    for query in queries:
        best = float("inf")
        for _ in range(3):
            start = time.process_time()
            action(query)
            best = min(best, time.process_time() - start)
        times.append(best * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]


def bm25s_build(records: Sequence[Mapping[str, object]]) -> tuple[float, float] | None:
    """CPU and wall seconds for bm25s to index ``records`` (tokenised beforehand), if installed."""
    try:
        import bm25s  # noqa: PLC0415 - optional baseline
    except ImportError:
        return None
    corpus = [
        baseline_tokens(
            f"{record['name']} {record['summary']} "
            + " ".join(str(p) for p in cast("list[object]", record["path"]))
        )
        for record in records
    ]
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    bm25s.BM25().index(corpus, show_progress=False)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--semantic-step",
        type=int,
        default=0,
        help="score the e5 rows on every n-th query (default: 1 for ToolBench, 10 for MetaTool)",
    )
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument(
        "--skip-semantic", action="store_true", help="leave out the e5 rows (slow on a busy CPU)"
    )
    parser.add_argument("--quality-only", action="store_true")
    parser.add_argument(
        "--sets",
        default=",".join(DATASETS),
        help=f"comma-separated data sets for the quality tables (default: {','.join(DATASETS)})",
    )
    args = parser.parse_args()
    chosen = [name for name in DATASETS if name in args.sets.split(",")]
    for name in () if args.skip_quality else chosen:
        step = args.semantic_step or (10 if name == "metatool" else 1)
        quality(name, None if args.skip_semantic else step)
    if args.quality_only:
        return
    records = load_records()
    queries = load_queries()
    texts = [query.query for query in queries]

    catalog = ToolCatalog.from_records(records)
    service = ToolDiscovery(catalog)

    print()
    print("== speed")
    print(f"{'name':<48}{'n':>8}{'p50_ms':>9}{'p99_ms':>9}{'ratio':>7}")

    def search(discovery: ToolDiscovery) -> Callable[[str], object]:
        return lambda query: discovery.search_tool_by_category(query, limit=5)

    p50, p99 = percentiles(search(service), texts)
    scan50, scan99 = percentiles(linear_scan(catalog), texts)
    okapi50, okapi99 = percentiles(bm25_baseline(records, True), texts)
    n = len(catalog)
    print(f"{'search_tool_by_category (index)':<48}{n:>8}{p50:>9.3f}{p99:>9.3f}{1.0:>7.2f}")
    print(
        f"{'linear scan over term sets':<48}{n:>8}{scan50:>9.3f}{scan99:>9.3f}{scan50 / p50:>7.2f}"
    )
    okapi = f"{okapi50:>9.3f}{okapi99:>9.3f}{okapi50 / p50:>7.2f}"
    print(f"{'rank-bm25 get_scores + sort':<48}{n:>8}{okapi}")
    build_catalog = best_seconds(lambda: ToolCatalog.from_records(records), 3)
    build_index = best_seconds(lambda: BM25Ranker().index(catalog), 3)
    print(f"build: catalogue {build_catalog * 1000:.0f} ms, index {build_index * 1000:.0f} ms")

    big_records = scaled_records(records, SCALE)
    print()
    scale(big_records, texts, queries)

    print()
    print("== tokens (o200k_base)")
    try:
        report = compare_prompt_tokens(service, texts[:100], count_tokens)
    except TokenizerMissingError as exc:
        print(f"skipped: {exc}")
        return
    print(f"every schema up front: {report.upfront} tokens per request")
    print(
        f"discovery round (search + expand top 2): mean {report.round_mean:.0f}, "
        f"max {report.round_max} tokens, plus {report.operations} for the five operations"
    )


if __name__ == "__main__":
    main()
