"""Bounded text for messages built from untrusted input (the model's or the provider's).

Every message the library writes to the model, or into an error, may quote what
the model sent. Those quotes go through these helpers so that no input, however
large, produces an unbounded message: one value is cut to :data:`ECHO_LIMIT`
characters, a list names :data:`LIST_LIMIT` items and counts the rest, and free
text (an exception's message) is cut to :data:`TEXT_LIMIT` characters. The text
they return is also safe to encode as UTF-8: lone surrogates are escaped.

The module sits below every layer (beside ``errors``), so that ``serde``, ``prompt``,
``runtime``, ``discovery``, the adapters and ``mcp`` can all use it.
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import islice

__all__ = [
    "ECHO_LIMIT",
    "LIST_LIMIT",
    "TEXT_LIMIT",
    "clip",
    "exception_text",
    "listing",
    "quote",
    "safe_str",
]

ECHO_LIMIT = 40
"""Characters of one untrusted value (a key, a name, a string) quoted in a message."""

LIST_LIMIT = 5
"""Items of an untrusted list named in a message before the rest are counted."""

TEXT_LIMIT = 300
"""Characters of untrusted free text (an exception's message) kept in a message."""

_CUT = "..."


def _encodable(text: str) -> str:
    """``text`` with lone surrogates written as backslash escapes, so UTF-8 can encode it."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def clip(text: str, limit: int = ECHO_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``...`` when it was cut."""
    if len(text) > limit:
        text = text[: max(limit - len(_CUT), 0)] + _CUT
    return _encodable(text)


def quote(text: str, limit: int = ECHO_LIMIT) -> str:
    """``repr`` of ``text`` cut to ``limit`` characters: ``'abc'`` or ``'abcd...'``."""
    if len(text) > limit:
        return repr(text[: max(limit - len(_CUT), 0)] + _CUT)
    return repr(text)


def listing(
    items: Collection[str],
    *,
    limit: int = LIST_LIMIT,
    width: int = ECHO_LIMIT,
    quoted: bool = False,
) -> str:
    """The first ``limit`` items joined by commas, then ``and N more``.

    Each item is cut to ``width`` characters (and ``repr``-quoted when ``quoted``);
    an empty collection gives ``""``. ``a, b, c and 9,997 more``.
    """
    shown = [quote(item, width) if quoted else clip(item, width) for item in islice(items, limit)]
    rest = len(items) - len(shown)
    text = ", ".join(shown)
    return f"{text} and {rest:,} more" if rest > 0 else text


def safe_str(value: object, limit: int = TEXT_LIMIT) -> str:
    """``str(value)`` cut to ``limit`` characters; never raises.

    A value whose ``__str__`` raises (or returns something that is not a str) is
    described by its type instead, so a broken object cannot break the message
    that reports it.
    """
    try:
        text = str(value)
    except Exception:  # any failure of a foreign __str__ is reported, not raised
        return f"<{type(value).__name__} object; str() failed>"
    return clip(text, limit)


def exception_text(error: BaseException, limit: int = TEXT_LIMIT) -> str:
    """``TypeName: message`` for an exception, bounded and never raising."""
    text = safe_str(error, limit)
    name = type(error).__name__
    return f"{name}: {text}" if text else name
