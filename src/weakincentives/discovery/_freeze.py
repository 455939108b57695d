"""Turn a collection's term occurrences into BM25F postings (pure Python).

A collection (the tools, or the categories) arrives as one
:class:`FieldOccurrences` per document field: two parallel flat arrays of
term ids and document positions, one entry per occurrence. Freezing computes,
for every (term, document) pair, the BM25F pseudo frequency (each field's
count times its length-normalised weight, summed over the fields in field
order), saturates it once with ``k1``, multiplies by the document's factor and
the term's idf, and lays the postings out term by term, documents ascending.

:mod:`~weakincentives.discovery._vectorised` does the same with numpy,
operation for operation in the same order, so both give bit-identical
postings; this module is the fallback when numpy is not installed.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, mul

__all__ = ["Collection", "FieldOccurrences", "Frozen", "freeze", "idf"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldOccurrences:
    """Every occurrence of a term in one field of a collection's documents."""

    weight: float
    damping: float
    """BM25 ``b`` of the field."""
    terms: array[int]
    """Term id of each occurrence."""
    docs: array[int]
    """Document position of each occurrence (parallel to ``terms``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Collection:
    """What to freeze: one collection's fields, its size, the term names and BM25's ``k1``."""

    fields: Sequence[FieldOccurrences]
    size: int
    """How many documents the collection holds."""
    terms: Sequence[str]
    """The name of each term id."""
    k1: float
    factors: Sequence[float] | None = None
    """Each document's multiplier of its impacts; None multiplies by 1."""
    presence: bool = False
    """Count a term once per field instead of once per occurrence."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Frozen:
    """Flat postings: each term's slice of ``ids``/``impacts``, and its bounds."""

    ids: array[int]
    impacts: array[float]
    spans: dict[str, tuple[int, int]]
    ceiling: dict[str, float]
    peak: dict[str, float]


def idf(size: int, frequency: int) -> float:
    """BM25's non-negative idf of a term held by ``frequency`` of ``size`` documents."""
    return math.log(1 + (size - frequency + 0.5) / (frequency + 0.5))


def freeze(collection: Collection) -> Frozen:
    """Postings for the collection's documents, term by term."""
    terms, k1, factors = collection.terms, collection.k1, collection.factors
    presence = collection.presence
    count = collection.size or 1
    pseudo: dict[int, float] = {}
    get = pseudo.get
    for field in collection.fields:
        if field.weight == 0 or not field.terms:
            continue
        lengths = Counter(field.docs)
        mean = len(field.terms) / count
        weight, damping = field.weight, field.damping
        norms = {doc: weight / (1 - damping + damping * n / mean) for doc, n in lengths.items()}
        # term * count + doc for every occurrence, without a list of them all.
        occurrences = Counter(map(add, map(mul, field.terms, repeat(count)), field.docs))
        for key, times in occurrences.items():
            pseudo[key] = get(key, 0.0) + (1 if presence else times) * norms[key % count]
    keys = sorted(pseudo)
    frequency = Counter(key // count for key in keys)
    ids: array[int] = array("I")
    impacts: array[float] = array("f")
    spans: dict[str, tuple[int, int]] = {}
    ceiling: dict[str, float] = {}
    peak: dict[str, float] = {}
    saturated = k1 + 1
    start = 0
    for term, held in sorted(frequency.items()):
        weight = idf(count, held)
        end = start + held
        for key in keys[start:end]:
            doc = key % count
            value = pseudo[key]
            factor = 1.0 if factors is None else factors[doc]
            ids.append(doc)
            impacts.append(weight * (factor * value * saturated / (k1 + value)))
        name = terms[term]
        spans[name] = (start, end)
        ceiling[name] = weight * saturated
        peak[name] = max(impacts[start:end])
        start = end
    return Frozen(ids=ids, impacts=impacts, spans=spans, ceiling=ceiling, peak=peak)
