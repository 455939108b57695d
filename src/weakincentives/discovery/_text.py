"""Turn names, summaries and queries into index terms.

The tokenizer is shared by the index and the query side so both agree on
what a term is: it splits identifiers written in camelCase, snake_case,
kebab-case or as URL paths, separates letters from digits, lowercases, drops
English stop words and applies a light suffix stemmer. Everything is plain
Python and deterministic: no model, no data files, no network.
"""

from __future__ import annotations

import re

__all__ = ["STOP_WORDS", "stem", "tokenize"]

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

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)*")
# Boundaries inside one word: lower->Upper (getUser), the last capital of an
# acronym before a capitalised word (HTTPServer), and letter<->digit (v2, mp3).
_SPLIT = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])"
)
_VOWELS = frozenset("aeiouy")
_MIN_STEM = 3


def stem(word: str) -> str:
    """Reduce a lowercase word to a crude stem so inflections share one term.

    Plurals (``companies`` -> ``company``, ``matches`` -> ``match``), ``-ing``
    and ``-ed`` (with a doubled final consonant undone: ``shipping`` ->
    ``ship``), ``-ation`` (``creation`` and ``create`` meet at ``creat``) and a
    final silent ``e``. Short words and numbers are left alone; the rules are
    deliberately few, since over-stemming merges unrelated tool names.
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


def tokenize(text: str) -> list[str]:
    """Split ``text`` into stemmed, lowercased index terms without stop words.

    Order and repeats are kept: callers count term frequencies themselves.
    """
    terms: list[str] = []
    for match in _WORD.finditer(text.replace("\u2019", "'")):
        word = match.group()
        if "'" in word:
            if word.lower() in STOP_WORDS:
                continue
            word = word.split("'", 1)[0]
        for part in _SPLIT.split(word):
            lowered = part.lower()
            if lowered and lowered not in STOP_WORDS:
                terms.append(stem(lowered))
    return terms
