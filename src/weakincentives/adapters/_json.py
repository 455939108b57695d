"""Decoding what a provider sends: JSON that must not be able to crash the loop."""

from __future__ import annotations

import json

from weakincentives.serde import JSONValue

__all__ = ["MAX_REPLY_DEPTH", "decode_reply"]

MAX_REPLY_DEPTH = 128
"""Deepest nesting accepted in a provider's reply body or stream event."""


class _NotJSONError(ValueError):
    pass


def _reject_constant(token: str) -> object:
    raise _NotJSONError(f"{token} is not a JSON number")


def decode_reply(text: str) -> tuple[JSONValue, str | None]:
    """Decode ``text``; returns ``(value, None)`` or ``(None, problem)`` and never raises."""
    try:
        value: JSONValue = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return None, f"it is nested more than {MAX_REPLY_DEPTH} levels deep"
    except ValueError as exc:  # JSONDecodeError, NaN/Infinity, integers too long to convert
        return None, str(exc)[:500]
    if _too_deep(value):
        return None, f"it is nested more than {MAX_REPLY_DEPTH} levels deep"
    return value, None


def _too_deep(value: JSONValue) -> bool:
    stack: list[tuple[JSONValue, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = list(item.values())
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth >= MAX_REPLY_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
