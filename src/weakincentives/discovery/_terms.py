"""Term ids for index construction: the tokenizer, memoised for a whole catalogue.

Building an index tokenises every name, summary and category of the
catalogue. A large catalogue repeats most of its words, so the build splits
every text at whitespace and tokenises each distinct chunk once, remembering
its content terms, stop words and plain terms (without joined forms) as ids.
A column of texts (one per document) first becomes the chunk numbers of each
text, by ``map`` over a dictionary whose ``__missing__`` tokenises, so a chunk
seen before costs no Python frame. Once every column is chunked, the chunks'
terms are laid out flat and each column is expanded into flat arrays of term
ids and document positions, with numpy where the index uses it. The result is
exactly what :func:`tokenize` and :func:`stop_terms` give, with every term
replaced by its id in :attr:`TermTable.terms`.
"""

from __future__ import annotations

import string
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, count, islice, repeat
from typing import Literal

from weakincentives.discovery import _vectorised
from weakincentives.discovery._text import split_words, word_terms

__all__ = ["Chunked", "Column", "Kind", "Memo", "TermTable", "column_of", "grouped"]

type Column = tuple[array[int], array[int]]
"""Term ids of every occurrence, and the document position of each (ascending)."""
type Kind = Literal["content", "stops"]
_PUNCTUATION = bytes.maketrans(
    string.punctuation.replace("'", "").encode(), b" " * (len(string.punctuation) - 1)
)


class Memo[K, V](dict[K, V]):
    """A dictionary that computes and keeps a missing value on first lookup."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[K], V]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: K) -> V:
        value = self[key] = self._make(key)
        return value


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunked:
    """A column of texts as chunk numbers: ``counts[k]`` chunks belong to document ``k``."""

    counts: array[int]
    chunks: array[int]


def column_of(per_doc: Iterable[Sequence[int]]) -> Column:
    """Flatten each document's ids (in document order) into one column."""
    held = list(per_doc)
    docs = chain.from_iterable(map(repeat, count(), map(len, held)))
    return array("I", chain.from_iterable(held)), array("I", docs)


def grouped[T](pieces: Iterable[Sequence[T]], sizes: Iterable[int]) -> Iterable[tuple[T, ...]]:
    """Concatenate consecutive runs of ``pieces``, ``sizes`` pieces per run."""
    flow = iter(pieces)
    # Each islice consumes its run of the one shared iterator before the next begins.
    return map(tuple, map(chain.from_iterable, map(islice, repeat(flow), sizes)))


class TermTable:
    """A growing vocabulary (term -> id) with memoised tokenisation of chunks into ids.

    Not thread-safe: one table serves one index build.
    """

    __slots__ = (
        "_chunks",
        "_content",
        "_ids",
        "_laid",
        "_parts",
        "_plain",
        "_stops",
        "_words",
        "terms",
    )

    def __init__(self) -> None:
        self.terms: list[str] = []
        """Every term seen so far; a term's id is its position here."""
        self._ids: Memo[str, int] = Memo(self._new_term)
        self._chunks: Memo[str, int] = Memo(self._new_chunk)
        self._content: list[tuple[int, ...]] = []
        self._stops: list[tuple[int, ...]] = []
        self._plain: list[tuple[str, ...]] = []
        self._parts: Memo[str, tuple[str, ...]] = Memo(self._plain_of)
        self._words: Memo[str, tuple[str, ...]] = Memo(lambda word: word_terms(word)[0])
        self._laid: dict[Kind, tuple[int, _vectorised.Layout]] = {}

    def chunk(self, texts: Iterable[str]) -> Chunked:
        """Split each text at whitespace and number its chunks (new ones are tokenised)."""
        split = list(map(str.split, texts))
        return Chunked(
            counts=array("I", map(len, split)),
            chunks=array("I", map(self._chunks.__getitem__, chain.from_iterable(split))),
        )

    def column(self, chunked: Chunked, kind: Kind = "content", *, vectorised: bool) -> Column:
        """The content terms (with joined forms) or the stop words of each text, as a column."""
        per_chunk = self._content if kind == "content" else self._stops
        if vectorised:
            laid = self._laid.get(kind)
            if laid is None or laid[0] != len(per_chunk):
                # Laid out again only when chunks were added since (chunk everything first).
                laid = self._laid[kind] = (len(per_chunk), _vectorised.layout(per_chunk))
            return _vectorised.expand(chunked.counts, chunked.chunks, laid[1])
        return column_of(grouped(map(per_chunk.__getitem__, chunked.chunks), chunked.counts))

    def plains(self, chunked: Chunked) -> list[tuple[str, ...]]:
        """``tokenize(text, joined=False)`` of each text: its terms without joined forms."""
        return list(grouped(map(self._plain.__getitem__, chunked.chunks), chunked.counts))

    def plain_ids(self, texts: Iterable[str]) -> list[tuple[str, ...]]:
        """:meth:`plains` of texts such as tool ids, remembered per punctuation-separated part.

        Ids are unique but made of a few recurring parts (``api/endpoint``). Punctuation
        other than the apostrophe never occurs inside a word, so turning it into spaces
        first changes nothing but how often a part is met again.
        """
        # Through UTF-8 bytes: a 256-entry table is far faster than str.translate's
        # mapping, and bytes of multi-byte characters (all >= 0x80) pass unchanged.
        spaced = map(bytes.translate, map(str.encode, texts), repeat(_PUNCTUATION))
        parts = list(map(str.split, map(bytes.decode, spaced)))
        return list(
            grouped(map(self._parts.__getitem__, chain.from_iterable(parts)), map(len, parts))
        )

    def _plain_of(self, text: str) -> tuple[str, ...]:
        return tuple(chain.from_iterable(map(self._words.__getitem__, split_words(text))))

    def _new_chunk(self, chunk: str) -> int:
        ids = self._ids
        content: list[int] = []
        stops: list[int] = []
        plain: list[str] = []
        for word in split_words(chunk):
            parts, joined, stop = word_terms(word)
            content.extend(ids[term] for term in parts)
            content.extend(ids[term] for term in joined)
            stops.extend(ids[term] for term in stop)
            plain.extend(parts)
        self._content.append(tuple(content))
        self._stops.append(tuple(stops))
        self._plain.append(tuple(plain))
        return len(self._content) - 1

    def _new_term(self, term: str) -> int:
        self.terms.append(term)
        return len(self.terms) - 1
