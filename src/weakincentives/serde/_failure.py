"""The internal failure signal of the parse path and how it becomes a ParseError.

Converters raise :class:`ConversionError` without any path: building a path string
for every value would cost time on the success path. Each enclosing converter
appends its own segment while the failure unwinds, so the path is assembled
only when something actually went wrong.
"""

from __future__ import annotations

import json

from weakincentives.errors import ParseError

__all__ = ["ConversionError", "describe", "index_segment", "key_segment"]

_MAX_SHOWN = 40


class ConversionError(Exception):
    """A value did not fit: the message parts and the path, innermost segment first.

    Internal to serde; :func:`parse` turns it into a ParseError at the top.
    """

    __slots__ = ("expected", "got", "segments")

    def __init__(self, expected: str, got: str, segments: list[str] | None = None) -> None:
        super().__init__(expected)
        self.expected = expected
        self.got = got
        self.segments: list[str] = [] if segments is None else segments

    def depth(self) -> int:
        """How deep inside the value the failure happened (used to rank union members)."""
        return len(self.segments)

    def path(self) -> str:
        """The JSON path rooted at ``$`` of the offending value."""
        return "$" + "".join(reversed(self.segments))

    def to_error(self, dataclass_type: type[object] | None) -> ParseError:
        """Build the public error for the top-level type being parsed."""
        return ParseError(
            path=self.path(),
            expected=self.expected,
            got=self.got,
            dataclass_type=dataclass_type,
        )


def key_segment(key: object) -> str:
    """Path segment for an object member: ``.name`` or ``['odd key']``."""
    if isinstance(key, str):
        if key.isidentifier():
            return f".{key}"
        escaped = key.replace("\\", "\\\\").replace("'", "\\'")
        return f"['{escaped}']"
    return f"[{key!r}]"


def index_segment(index: int) -> str:
    """Path segment for an array item."""
    return f"[{index}]"


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def describe(value: object) -> str:
    """Describe a value the way the error messages show it, in JSON terms."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "boolean " + ("true" if value else "false")
    if isinstance(value, int):
        return f"integer {_clip(str(value))}"
    if isinstance(value, float):
        return f"number {_clip(repr(value))}"
    if isinstance(value, str):
        return f"string {_clip(json.dumps(value, ensure_ascii=False))}"
    if isinstance(value, list | tuple):
        count = len(value)
        return f"array of {count} item{'' if count == 1 else 's'}"
    if isinstance(value, dict):
        if not value:
            return "empty object"
        keys = ", ".join(str(key) for key in value)
        return f"object with keys {_clip(keys)}"
    return f"{type(value).__qualname__} instance"
