"""Decoding what a provider sends: JSON that must not be able to crash the loop.

A thin face over :func:`weakincentives.serde.loads`, the library's one decoder for
untrusted JSON, returning the problem as text for the provider's own error message.
"""

from __future__ import annotations

from weakincentives.errors import ParseError
from weakincentives.serde import JSONValue, loads

__all__ = ["decode_reply"]


def decode_reply(text: str) -> tuple[JSONValue, str | None]:
    """Decode ``text``; returns ``(value, None)`` or ``(None, problem)`` and never raises."""
    try:
        return loads(text), None
    except ParseError as exc:
        return None, exc.got
