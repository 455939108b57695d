"""The check behind ``JSONValue`` fields: the value must be JSON that can be encoded again.

``Any`` and ``object`` pass values through untouched, but a ``JSONValue`` field
promises JSON. Data that did not come through :func:`~weakincentives.serde.loads`
(a mapping built in Python, another decoder's output) is checked here with the
same rules: finite numbers, integers Python can print, string keys, arrays and
objects nested at most ``MAX_JSON_DEPTH`` deep, nothing but JSON types. The walk
is iterative, so deep data is an error and never a ``RecursionError``. The value
is returned as it is, not copied.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping

from weakincentives.serde._failure import _ConversionError, describe, index_segment, key_segment
from weakincentives.serde._loads import MAX_JSON_DEPTH

__all__ = ["check_json_value"]

_SHORT_INT_BITS = 2048  # at most 617 digits: below the smallest digit limit Python allows (640)

type _Frame = tuple[Iterator[tuple[object, object]], bool]


def _printable(value: int) -> bool:
    """Whether ``str(value)`` works under Python's integer digit limit."""
    bits = value.bit_length()
    if bits <= _SHORT_INT_BITS:
        return True
    limit = sys.get_int_max_str_digits()
    if limit == 0 or math.floor(bits * math.log10(2)) + 1 <= limit:
        return True
    try:
        str(value)
    except ValueError:
        return False
    return True


def _scalar_problem(value: object) -> tuple[str, str] | None:
    """(expected, got) when a non-container value is not JSON; None when it is."""
    if value is None or isinstance(value, str | bool):
        return None
    if isinstance(value, int):
        if _printable(value):
            return None
        limit = sys.get_int_max_str_digits()
        return f"an integer of at most {limit:,} digits", describe(value)
    if isinstance(value, float):
        if value - value == 0.0:
            return None
        return "a finite number", describe(value)
    return "any JSON value", describe(value)


def _items(container: object) -> _Frame:
    if isinstance(container, Mapping):
        return iter(container.items()), True
    if isinstance(container, list | tuple):
        return enumerate(container), False
    raise AssertionError(container)  # only called for what _is_container accepts


def _is_container(value: object) -> bool:
    return isinstance(value, list | tuple | Mapping)


def check_json_value(value: object) -> object:
    """Return ``value`` if it is JSON that encodes again; raise _ConversionError otherwise."""
    cls = value.__class__
    if cls is str or cls is bool or value is None:
        return value
    if not _is_container(value):
        problem = _scalar_problem(value)
        if problem is not None:
            raise _ConversionError(*problem)
        return value
    path: list[object] = []
    stack: list[_Frame] = [_items(value)]
    while stack:
        items, is_object = stack[-1]
        for key, item in items:
            if is_object and not isinstance(key, str):
                raise _ConversionError(
                    "an object with string keys", f"key {describe(key)}", _segments(path, key)
                )
            if _is_container(item):
                if len(stack) >= MAX_JSON_DEPTH:
                    raise _ConversionError(
                        f"JSON nested at most {MAX_JSON_DEPTH} levels deep",
                        f"{describe(item)} nested deeper",
                        _segments(path, key),
                    )
                path.append(key)
                stack.append(_items(item))
                break
            problem = _scalar_problem(item)
            if problem is not None:
                raise _ConversionError(*problem, _segments(path, key))
        else:
            stack.pop()
            if path:
                path.pop()
    return value


def _segments(path: list[object], last: object) -> list[str]:
    """_ConversionError segments (innermost first) for the value at ``path + [last]``.

    Object keys on the path are strings (checked before descending), so the ints
    on it are array indexes.
    """
    keys = [*path, last]
    return [index_segment(key) if type(key) is int else key_segment(key) for key in reversed(keys)]
