"""The internal failure signal of the parse path and how it becomes a ParseError.

Converters raise :class:`_ConversionError` without any path: building a path string
for every value would cost time on the success path. Each enclosing converter
appends its own segment while the failure unwinds, so the path is assembled
only when something actually went wrong.
"""

from __future__ import annotations

import json
import sys
from itertools import islice

from weakincentives._bounded import ECHO_LIMIT, clip
from weakincentives.errors import ParseError

__all__ = ["PATH_SEGMENTS_SHOWN", "describe", "index_segment", "key_segment"]

PATH_SEGMENTS_SHOWN = 16
"""A path deeper than this shows its first and last segments around ``...(N more)...``."""

_HEAD = 4
_SMALL_INT_BITS = 128  # at most 39 digits: always printable, and short enough to show whole


class _ConversionError(Exception):
    """A value did not fit: the message parts and the path, innermost segment first.

    Internal to serde; :func:`parse` turns it into a ParseError at the top.
    """

    __slots__ = ("expected", "got", "segments")

    def __init__(self, expected: str, got: str, segments: list[str] | None = None) -> None:
        super().__init__(expected)
        self.expected = expected
        self.got = got
        self.segments: list[str] = [] if segments is None else segments

    def copy(self) -> _ConversionError:
        """A separate error with the same content (segments are appended in place)."""
        return _ConversionError(self.expected, self.got, list(self.segments))

    def depth(self) -> int:
        """How deep inside the value the failure happened (used to rank union members)."""
        return len(self.segments)

    def path(self) -> str:
        """The JSON path rooted at ``$`` of the offending value, with a deep middle elided."""
        segments = self.segments[::-1]
        if len(segments) <= PATH_SEGMENTS_SHOWN:
            return "$" + "".join(segments)
        tail = PATH_SEGMENTS_SHOWN - _HEAD
        hidden = len(segments) - PATH_SEGMENTS_SHOWN
        middle = f"...({hidden} more)..."
        return "$" + "".join(segments[:_HEAD]) + middle + "".join(segments[-tail:])

    def to_error(self, dataclass_type: type[object] | None) -> ParseError:
        """Build the public error for the top-level type being parsed."""
        return ParseError(
            path=self.path(),
            expected=self.expected,
            got=self.got,
            dataclass_type=dataclass_type,
        )


def key_segment(key: object) -> str:
    """Path segment for an object member: ``.name`` or ``['odd key']``, cut when long."""
    if isinstance(key, str):
        if len(key) <= ECHO_LIMIT and key.isidentifier():
            return f".{key}"
        escaped = clip(key).replace("\\", "\\\\").replace("'", "\\'")
        return f"['{escaped}']"
    if isinstance(key, int) and not isinstance(key, bool) and key.bit_length() <= _SMALL_INT_BITS:
        return f"[{key}]"
    return f"[{_key_text(key)}]"


def index_segment(index: int) -> str:
    """Path segment for an array item."""
    return f"[{index}]"


def _integer(value: int) -> str:
    """An integer's digits, or only how many there are when it is long.

    ``str()`` of an integer beyond Python's digit limit raises ValueError, and a
    long one would be cut anyway, so long integers are described by size.
    """
    if value.bit_length() <= _SMALL_INT_BITS:
        return str(value)
    try:
        digits = len(str(abs(value)))
    except ValueError:
        return f"with more than {sys.get_int_max_str_digits():,} digits"
    return f"with {digits:,} digits"


def describe(value: object) -> str:
    """Describe a value the way the error messages show it, in JSON terms.

    The description is bounded: strings and key lists are cut to ``ECHO_LIMIT``
    characters and long integers are described by their number of digits.
    """
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean " + ("true" if value else "false")
    if isinstance(value, int):
        return f"integer {_integer(value)}"
    if isinstance(value, float):
        return f"number {value!r}"  # a float's repr is at most 24 characters
    if isinstance(value, str):
        # Only the start is encoded: json.dumps of a huge string would copy all of it.
        return f"string {clip(json.dumps(value[: ECHO_LIMIT + 1], ensure_ascii=False))}"
    if isinstance(value, list | tuple):
        count = len(value)
        return f"array of {count:,} item{'' if count == 1 else 's'}"
    if isinstance(value, dict):
        if not value:
            return "empty object"
        keys = ", ".join(_key_text(key) for key in islice(value, ECHO_LIMIT))
        return f"object with keys {clip(keys)}"
    return f"{type(value).__qualname__} instance"


def _key_text(key: object) -> str:
    """A key as a bounded text; keys that are not strings only come from Python data."""
    if isinstance(key, str):
        return key[: ECHO_LIMIT + 1]
    if isinstance(key, int) and not isinstance(key, bool):
        return f"<integer {_integer(key)}>" if key.bit_length() > _SMALL_INT_BITS else str(key)
    try:
        return clip(repr(key))
    except Exception:  # a foreign __repr__ that fails must not break the report
        return f"<{type(key).__qualname__} instance>"
