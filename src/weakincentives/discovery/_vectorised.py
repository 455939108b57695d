"""numpy kernels for building and scoring postings, used when numpy is importable.

The core needs no third-party package, so everything here has a pure-Python
twin (:mod:`~weakincentives.discovery._freeze` for building, the loops in
:mod:`~weakincentives.discovery._postings` for scoring). Each kernel performs
the same floating-point operations in the same order as its twin: the
postings are bit-identical, and so are the scores (float32 impacts summed in
float64, strongest term first, starting from the bonus). Tests run both.

At 100,000 tools a query touches tens of thousands of postings; adding them
with one vectorised operation per term instead of one Python operation per
posting is what keeps a search within a few milliseconds.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Callable, Mapping, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from weakincentives.discovery._freeze import Collection, FieldOccurrences, Frozen, idf

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "Layout",
    "available",
    "expand",
    "freeze",
    "hits",
    "layout",
    "numpy_module",
    "top_scores",
]

type _Array = Any
"""A numpy array (numpy is optional, so its types are not named here)."""


@functools.cache
def numpy_module() -> ModuleType | None:
    """The numpy module, or None where it cannot be imported (imported once, on first use)."""
    try:
        import numpy  # noqa: PLC0415 - optional, and slow to import
    except ImportError:  # pragma: no cover - numpy is a dev dependency
        return None
    return numpy


def available() -> bool:
    """Say whether numpy can be imported here."""
    return numpy_module() is not None


def _np() -> ModuleType:
    numpy = numpy_module()
    if numpy is None:  # pragma: no cover - callers check available() first
        raise RuntimeError("numpy is not installed")
    return numpy


type Layout = tuple[_Array, _Array, _Array]
"""Ids of many chunks laid out flat: each chunk's length, where it starts, and all ids."""


def layout(per_chunk: Sequence[tuple[int, ...]]) -> Layout:
    """Lay the term ids of every chunk out flat, for :func:`expand`."""
    np = _np()
    lengths = np.fromiter(map(len, per_chunk), dtype=np.int64, count=len(per_chunk))
    flat = np.fromiter(chain.from_iterable(per_chunk), dtype=np.uint32, count=int(lengths.sum()))
    return lengths, np.cumsum(lengths) - lengths, flat


def expand(
    counts: array[int], chunks: array[int], chunk_terms: Layout
) -> tuple[array[int], array[int]]:
    """The term ids of each document's chunks in order, and the document of each id.

    Document ``k`` is the next ``counts[k]`` entries of ``chunks``; the same
    flattening as the pure-Python one in :mod:`~weakincentives.discovery._terms`.
    """
    np = _np()
    lengths, starts, flat = chunk_terms
    which = np.frombuffer(chunks, dtype=np.uint32)
    sizes = lengths[which]
    owners = np.repeat(
        np.arange(len(counts), dtype=np.uint32), np.frombuffer(counts, dtype=np.uint32)
    )
    ends = np.cumsum(sizes)
    # Position of each output id in ``flat``: its chunk's start plus its rank inside the chunk.
    offsets = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(
        starts[which] - (ends - sizes), sizes
    )
    return _as_array(flat[offsets]), _as_array(np.repeat(owners, sizes).astype(np.uint32))


def _as_array(values: _Array) -> array[int]:
    """A uint32 numpy array as an ``array("I")`` (one copy)."""
    out: array[int] = array("I")
    out.frombytes(memoryview(values).cast("B"))
    return out


def freeze(collection: Collection) -> Frozen:
    """The same as :func:`weakincentives.discovery._freeze.freeze`, with numpy."""
    np = _np()
    terms, k1, factors = collection.terms, collection.k1, collection.factors
    count = collection.size or 1
    found = _pseudo(collection.fields, count, presence=collection.presence)
    if found is None:
        return Frozen(ids=array("I"), impacts=array("f"), spans={}, ceiling={}, peak={})
    keys, pseudo = found
    term_of, doc_of = np.divmod(keys, count)
    del keys
    held_terms, starts, held = _runs(term_of)
    del term_of
    weights = np.array([idf(count, int(n)) for n in held.tolist()], dtype=np.float64)
    saturated = k1 + 1
    # weight * (factor * pseudo * saturated / (k1 + pseudo)), in place, in that order.
    value = pseudo.copy() if factors is None else np.asarray(factors, dtype=np.float64)[doc_of]
    if factors is not None:
        value *= pseudo
    value *= saturated
    pseudo += k1
    value /= pseudo
    del pseudo
    value *= np.repeat(weights, held)
    impacts = value.astype(np.float32)
    del value
    peaks = np.maximum.reduceat(impacts, starts)
    spans: dict[str, tuple[int, int]] = {}
    ceiling: dict[str, float] = {}
    peak: dict[str, float] = {}
    for term, start, n, weight, best in zip(
        held_terms.tolist(),
        starts.tolist(),
        held.tolist(),
        weights.tolist(),
        peaks.tolist(),
        strict=True,
    ):
        name = terms[term]
        spans[name] = (start, start + n)
        ceiling[name] = weight * saturated
        peak[name] = best
    ids: array[int] = array("I")
    ids.frombytes(memoryview(doc_of.astype(np.uint32)).cast("B"))
    frozen_impacts: array[float] = array("f")
    frozen_impacts.frombytes(memoryview(impacts).cast("B"))
    return Frozen(ids=ids, impacts=frozen_impacts, spans=spans, ceiling=ceiling, peak=peak)


def _pseudo(
    fields: Sequence[FieldOccurrences], count: int, *, presence: bool
) -> tuple[_Array, _Array] | None:
    """Sorted (term * count + doc) keys and their BM25F pseudo frequencies, or None."""
    np = _np()
    parts: list[tuple[_Array, _Array]] = []
    for field in fields:
        if field.weight == 0 or not field.terms:
            continue
        docs = np.frombuffer(field.docs, dtype=np.uint32)
        mean = len(field.terms) / count
        lengths = np.bincount(docs, minlength=count)
        norms = field.weight / ((1 - field.damping) + field.damping * lengths / mean)
        keys = np.frombuffer(field.terms, dtype=np.uint32).astype(np.int64)
        keys *= count
        keys += docs
        keys.sort()
        unique, _, times = _runs(keys)
        del keys
        if presence:
            times = np.ones_like(times)
        parts.append((unique, times * norms[unique % count]))
    if not parts:
        return None
    keys = np.concatenate([unique for unique, _ in parts])
    keys.sort()
    keys = _runs(keys)[0]
    pseudo = np.zeros(len(keys), dtype=np.float64)
    # Field by field, in field order: the same sums, in the same order, as the Python twin.
    while parts:
        unique, values = parts.pop(0)
        pseudo[np.searchsorted(keys, unique)] += values
    return keys, pseudo


def _runs(ordered: _Array) -> tuple[_Array, _Array, _Array]:
    """Distinct values of a sorted array, where each run starts, and how long it is."""
    np = _np()
    if not len(ordered):
        empty = np.zeros(0, dtype=np.int64)
        return ordered, empty, empty
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    lengths = np.diff(np.append(starts, len(ordered)))
    return ordered[starts], starts, lengths


def top_scores(
    ids: array[int],
    impacts: array[float],
    spans: Sequence[tuple[int, int]],
    *,
    size: int,
    top: int | None,
    accept: Callable[[int], bool] | None,
    bonus: Mapping[int, float] | None,
) -> dict[int, float]:
    """Sum the given term slices (strongest first) into scores by document position.

    Without ``top`` every matching document is returned. With it, the best
    ``top`` accepted documents are, together with every accepted document
    tied with the last of them (so the caller's tie-break by id sees them all).
    """
    np = _np()
    all_ids = np.frombuffer(ids, dtype=np.uint32)
    all_impacts = np.frombuffer(impacts, dtype=np.float32)
    places = [all_ids[start:end] for start, end in spans]
    values = [all_impacts[start:end] for start, end in spans]
    if bonus:
        places.insert(0, np.fromiter(bonus.keys(), dtype=np.uint32, count=len(bonus)))
        values.insert(0, np.fromiter(bonus.values(), dtype=np.float64, count=len(bonus)))
    if not places:
        return {}
    # One pass: bincount adds the weights in array order, so each document's sum is
    # formed as bonus + strongest term + ..., the same additions as the Python twin.
    positions = np.concatenate(places)
    scores = np.bincount(
        positions, weights=np.concatenate(values, dtype=np.float64), minlength=size
    )
    matched = np.flatnonzero(np.bincount(positions, minlength=size) > 0)  # bool: faster
    if top is None or (accept is None and len(matched) <= top):
        return dict(zip(matched.tolist(), scores[matched].tolist(), strict=True))
    return _best(scores, matched, top, accept)


def hits(
    ids: array[int],
    impacts: array[float],
    spans: Sequence[tuple[int, int]],
    positions: Sequence[int],
) -> list[dict[int, float]]:
    """For each term's span, the impact on each of ``positions`` it holds (binary search)."""
    np = _np()
    all_ids = np.frombuffer(ids, dtype=np.uint32)
    all_impacts = np.frombuffer(impacts, dtype=np.float32)
    wanted = np.asarray(positions, dtype=np.int64)
    found: list[dict[int, float]] = []
    for start, end in spans:
        listed = all_ids[start:end]
        at = np.minimum(np.searchsorted(listed, wanted), len(listed) - 1)
        hit = listed[at] == wanted
        values = all_impacts[start + at[hit]]
        found.append(dict(zip(wanted[hit].tolist(), values.tolist(), strict=True)))
    return found


def _best(
    scores: _Array, matched: _Array, top: int, accept: Callable[[int], bool] | None
) -> dict[int, float]:
    """The best ``top`` accepted of ``matched`` plus ties, widening the look until found."""
    np = _np()
    values = scores[matched]
    wanted = top
    while True:
        if wanted >= len(matched):
            order = np.argsort(-values, kind="stable")
        else:
            part = np.argpartition(-values, wanted)[: wanted + 1]
            order = part[np.argsort(-values[part], kind="stable")]
        chosen = matched[order].tolist()
        kept = chosen if accept is None else [p for p in chosen if accept(p)]
        if len(kept) >= top or wanted >= len(matched):
            break
        wanted *= 4
    if len(kept) < top:
        return {position: float(scores[position]) for position in kept}
    floor = float(scores[kept[top - 1]])
    if wanted < len(matched) and float(values[order[-1]]) >= floor:
        # The look ended inside a run of ties: take every matched document at the floor.
        tied = matched[values >= floor].tolist()
        kept = tied if accept is None else [p for p in tied if accept(p)]
    return {position: float(scores[position]) for position in kept if scores[position] >= floor}
