"""Turn names, summaries and queries into index terms.

The tokenizer is shared by the index and the query side so both agree on
what a term is. It splits identifiers written in camelCase, snake_case,
kebab-case or as URL paths, separates letters from digits, lowercases, drops
English stop words and applies a light suffix stemmer. A word made of several
parts also yields its parts joined (``YouTube`` gives ``tube`` and
``youtube``), so brand names match however they are capitalised, and an
acronym's plural stays one word (``PDFs`` is ``pdf``). Everything is plain
Python and deterministic: no model, no data files, no network.
"""

from __future__ import annotations

import functools
import re

__all__ = ["STOP_WORDS", "split_words", "stem", "stop_terms", "tokenize", "word_terms"]

_STOP_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each else ever few for from further get gets got had hadn't
    has hasn't have haven't having he he's her here hers herself him himself his how i i'd i'll
    i'm i've if in into is isn't it it's its itself just let let's like me might more most much
    must my myself need needs no nor not now of off on once only or other our ours ourselves out
    over own please same shall she she's should shouldn't so some such than that that's the
    their theirs them themselves then there there's these they they're this those through to
    too under until up upon us very via want wants was wasn't we we're we've were weren't what
    what's when where which while who whom why will with won't would wouldn't you you'd you'll
    you're you've your yours yourself yourselves
"""

STOP_WORDS = frozenset(_STOP_TEXT.split())
"""Common English function words plus the request verbs users wrap queries in.

``get``, ``need``, ``want``, ``please`` and ``like`` carry no capability: tool
names start with "Get" as often as queries start with "I want", so keeping
them would only reward chatty text.
"""

# Letters and digits of any script; an apostrophe joins a contraction ("it's").
_WORD = re.compile(r"[^\W_]+(?:'[^\W\d_]+)*")
# Parts of an ASCII identifier: an acronym's plural (PDFs), an acronym (HTTP in
# HTTPServer), a capitalised or lowercase word, a number.
_ASCII_PARTS = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_OTHER_PARTS = re.compile(r"[0-9]+|[^\W\d_]+")
_VOWELS = frozenset("aeiouy")
_MIN_STEM = 3
_MIN_SUFFIXED = 6
"""Words shorter than this keep an ``-er`` or ``-en`` ending (``user``, ``token``)."""


def stem(word: str) -> str:
    """Reduce a lowercase word to a crude stem so inflections share one term.

    Plurals (``companies`` -> ``company``, ``matches`` -> ``match``), ``-ing``
    and ``-ed`` (with a doubled final consonant undone: ``shipping`` ->
    ``ship``), ``-ation`` (``creation`` and ``create`` meet at ``creat``), a
    final silent ``e``, then the agent and verb endings ``-er`` and ``-en`` on
    longer words (``shortener``, ``shortening`` and ``shorten`` meet ``short``).
    Short words and numbers are left alone; the rules are deliberately few,
    since over-stemming merges unrelated tool names.
    """
    if len(word) <= _MIN_STEM or word.isdigit():
        return word
    word = _strip_plural(word)
    if word.endswith("ation") and len(word) > 7:
        word = word[:-5] + "ate"
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= _MIN_STEM and _VOWELS.intersection(base):
            word = base
            if word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    if len(word) > 4 and word.endswith("e"):
        word = word[:-1]
    for suffix in ("er", "en"):
        if word.endswith(suffix) and len(word) >= _MIN_SUFFIXED and _VOWELS.intersection(word[:-2]):
            word = word[:-2]
    return word


def _strip_plural(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("es") and (word[-3] in "sxz" or word[-4:-2] in ("ch", "sh")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def split_words(text: str) -> list[str]:
    """The words of ``text`` (runs of letters and digits, with contractions kept whole)."""
    return _WORD.findall(text.replace("\u2019", "'"))


@functools.lru_cache(maxsize=1 << 16)
def word_terms(word: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(terms, joined form if any, stop words) of one word; cached: vocabularies are small."""
    if "'" in word:
        if (low := word.lower()) in STOP_WORDS:
            return (), (), (low,)
        word = word.split("'", 1)[0]
    pattern = _ASCII_PARTS if word.isascii() else _OTHER_PARTS
    lowered = [part.lower() for part in pattern.findall(word)]
    terms = tuple(stem(low) for low in lowered if low not in STOP_WORDS)
    stops = tuple(low for low in lowered if low in STOP_WORDS)
    joined = word.lower()
    if len(lowered) > 1 and joined not in STOP_WORDS:
        return terms, (stem(joined),), stops
    return terms, (), stops


def tokenize(text: str, *, joined: bool = True) -> list[str]:
    """Split ``text`` into stemmed, lowercased index terms without stop words.

    Order and repeats are kept: callers count term frequencies themselves.
    With ``joined`` (the default) a word of several parts also yields them
    joined, right after its parts (``GitHub`` -> ``git``, ``hub``, ``github``).
    """
    terms: list[str] = []
    for word in split_words(text):
        parts, whole, _ = word_terms(word)
        terms.extend(parts)
        if joined:
            terms.extend(whole)
    return terms


def stop_terms(text: str) -> list[str]:
    """The stop words ``text`` contains (also inside identifiers), lowercased, in order.

    The index keeps them apart so a query whose every content word is unknown
    still finds the tools sharing a word with it, ranked as a last resort.
    """
    terms: list[str] = []
    for word in split_words(text):
        terms.extend(word_terms(word)[2])
    return terms
