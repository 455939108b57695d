"""Term ids for index construction: the tokenizer, memoised for a whole catalogue.

Building an index tokenises every name, summary and category of the
catalogue. A large catalogue repeats most of its words (and many whole
fields: names, category names, argument names), so a build-local table maps
each whitespace-separated chunk of text once to term ids, and each short
field once to its ids. The lookups run as ``map`` over dictionaries whose
``__missing__`` tokenises, so a word seen before costs no Python frame. The
result is exactly what :func:`tokenize` and :func:`stop_terms` give, with
every term replaced by its id in :attr:`TermTable.terms`.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain

from weakincentives.discovery._text import split_words, word_terms

__all__ = ["Memo", "TermTable"]


class Memo[K, V](dict[K, V]):
    """A dictionary that computes and keeps a missing value on first lookup."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[K], V]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: K) -> V:
        value = self[key] = self._make(key)
        return value


class TermTable:
    """A growing vocabulary (term -> id) with memoised tokenisation into ids.

    Not thread-safe: one table serves one index build.
    """

    __slots__ = ("_content", "_fields", "_ids", "_plain", "_stops", "terms")

    def __init__(self) -> None:
        self.terms: list[str] = []
        """Every term seen so far; a term's id is its position here."""
        self._ids: Memo[str, int] = Memo(self._new_term)
        self._content: Memo[str, tuple[int, ...]] = Memo(self._content_of)
        self._stops: Memo[str, tuple[int, ...]] = Memo(self._stops_of)
        self._fields: Memo[str, tuple[int, ...]] = Memo(self.content)
        self._plain: Memo[str, tuple[str, ...]] = Memo(lambda word: word_terms(word)[0])

    def content(self, text: str) -> tuple[int, ...]:
        """Ids of ``tokenize(text)``: content terms with joined forms, in order."""
        return tuple(chain.from_iterable(map(self._content.__getitem__, text.split())))

    def field(self, text: str) -> tuple[int, ...]:
        """Like :meth:`content`, remembered per whole text (for fields that repeat)."""
        return self._fields[text]

    def stops(self, text: str) -> tuple[int, ...]:
        """Ids of ``stop_terms(text)``: the stop words it contains, in order."""
        return tuple(chain.from_iterable(map(self._stops.__getitem__, text.split())))

    def plain(self, text: str) -> tuple[str, ...]:
        """``tokenize(text, joined=False)``: the terms themselves, without joined forms."""
        return tuple(chain.from_iterable(map(self._plain.__getitem__, split_words(text))))

    def _content_of(self, chunk: str) -> tuple[int, ...]:
        ids = self._ids
        found: list[int] = []
        for word in split_words(chunk):
            parts, joined, _ = word_terms(word)
            found.extend(ids[term] for term in parts)
            found.extend(ids[term] for term in joined)
        return tuple(found)

    def _stops_of(self, chunk: str) -> tuple[int, ...]:
        ids = self._ids
        return tuple(ids[stop] for word in split_words(chunk) for stop in word_terms(word)[2])

    def _new_term(self, term: str) -> int:
        self.terms.append(term)
        return len(self.terms) - 1
