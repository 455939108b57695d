"""Find what keeps a JSON-shaped value from being sent on: the check behind ``schema_problems``.

A schema that holds ``NaN``, a lone surrogate, a key that is not a string or
nesting deeper than :data:`MAX_JSON_DEPTH` was not read from JSON text by
:func:`~weakincentives.serde.loads` (which refuses all of these); it was built in
Python. It would fail later and far from its cause: a ``NaN`` maximum refuses every
number, ``json.dumps(..., allow_nan=False)`` and UTF-8 refuse to write it, and a
recursive walk of a deep value raises ``RecursionError``. The walk here is
iterative, and cheap on the common case (plain dicts, lists and strings); the path
to the offending value is only worked out once something is found.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from weakincentives.serde._failure import describe, index_segment, key_segment
from weakincentives.serde._json_check import _printable
from weakincentives.serde._loads import MAX_JSON_DEPTH

__all__ = ["portable_problem"]

type _Unchecked = Any
"""A JSON-shaped value not checked yet (the fast pass tells its kind by its class)."""


def _surrogate(text: str) -> str | None:
    """Describe the first lone surrogate in ``text``, or None when UTF-8 can encode it."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        return f"a lone surrogate U+{code:04X} at character {error.start} (UTF-8 cannot encode it)"
    return None


def _scalar(value: object) -> str | None:
    """What is wrong with a value that is not an array or an object, or None."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        return _surrogate(value)
    if isinstance(value, int):
        return None if _printable(value) else f"{describe(value)} cannot be written"
    if isinstance(value, float):
        return None if value - value == 0.0 else f"{value} is not a JSON number"
    return f"{describe(value)} is not a JSON value"


def _children(value: object) -> list[tuple[str, object]] | None:
    """(path segment, item) of an array or object, or None for anything else."""
    if isinstance(value, Mapping):
        return [(key_segment(key), item) for key, item in value.items()]
    if isinstance(value, list | tuple):
        return [(index_segment(index), item) for index, item in enumerate(value)]
    return None


def _key_problem(key: object) -> str | None:
    if not isinstance(key, str):
        return f"key {describe(key)} is not a string"
    return None if key.isascii() else _surrogate(key)


def _is_plain(value: object) -> bool:
    """Whether ``value`` is JSON nested at most MAX_JSON_DEPTH deep (the fast, pathless pass)."""
    stack: list[tuple[_Unchecked, int]] = [(value, 0)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        cls = item.__class__
        if cls is str:
            if not item.isascii() and _surrogate(item):
                return False
        elif cls is dict or cls is list:
            if depth >= MAX_JSON_DEPTH:
                return False
            if cls is dict:
                for key, child in item.items():
                    if key.__class__ is not str or not key.isascii():
                        return False
                    push((child, depth + 1))
            else:
                for child in item:
                    push((child, depth + 1))
        elif cls is float:
            if item - item != 0.0:
                return False
        elif cls is int:
            if not _printable(item):
                return False
        elif not (cls is bool or item is None):
            return False
    return True


def portable_problem(value: object) -> tuple[str, str] | None:
    """``(path, problem)`` of the first part of ``value`` that is not portable JSON, or None.

    The path is relative (``.properties.n.maximum``, ``[2]``, empty for the value
    itself). Mappings and tuples count as objects and arrays.
    """
    if _is_plain(value):
        return None
    # Something may be wrong (or only unusual: a tuple, a read-only mapping, a non-ASCII
    # key): walk again, keeping the path this time.
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        item, path, depth = stack.pop()
        children = _children(item)
        if children is None:
            problem = _scalar(item)
            if problem is not None:
                return path, problem
            continue
        if depth >= MAX_JSON_DEPTH:
            return path, f"nested more than {MAX_JSON_DEPTH} levels deep"
        if isinstance(item, Mapping):
            for key in item:
                problem = _key_problem(key)
                if problem is not None:
                    return path, problem
        stack.extend((child, path + segment, depth + 1) for segment, child in reversed(children))
    return None
