"""Bounded text for the model: what the library writes from model-controlled input.

A model can send a tool name of any length or ten thousand unknown keys; the messages
the library writes back about them stay short, so one bad call cannot flood the next
request (or the session that records it).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["MAX_MESSAGE_CHARS", "bounded", "describe_exception", "name_list"]

MAX_MESSAGE_CHARS = 2_000
"""The longest piece of text the library quotes back to the model in one message."""

_NAMES_SHOWN = 20


def bounded(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def name_list(names: Iterable[str], shown: int = _NAMES_SHOWN) -> str:
    """A comma-separated list of at most ``shown`` names, then how many were left out."""
    collected = list(names)
    if not collected:
        return "none"
    head = ", ".join(bounded(name, 120) for name in collected[:shown])
    rest = len(collected) - shown
    return head if rest <= 0 else f"{head} and {rest} more"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` for an exception, even one whose ``__str__`` raises."""
    try:
        text = str(exc)
    except Exception:  # a broken __str__ must not turn a tool failure into a crash
        text = "<the exception's message could not be read>"
    return bounded(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)
