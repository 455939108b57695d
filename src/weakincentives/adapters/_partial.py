"""The fields of a structured answer that are complete so far, while its JSON arrives.

:class:`PartialFields` scans the text of one answer as it streams in, once per
character (so a long answer costs linear time), and notices each top-level member of
the JSON object the moment its value is closed: a ``,`` or the final ``}`` at depth
one. The member is decoded with ``serde.loads`` (the model's text is untrusted) and
parsed into its field's declared type; a member that does not parse, or names no
field, is left out (the final answer is validated as a whole anyway). A number at the
end of the text so far is never taken: more digits may follow. Text that does not
open an object (after whitespace and a Markdown code fence) yields nothing.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from weakincentives.errors import ParseError, SerdeError
from weakincentives.serde import loads, parse

__all__ = ["PartialFields"]


class PartialFields:
    """Complete top-level fields of one streamed JSON answer for ``dataclass_type``."""

    __slots__ = (
        "_depth",
        "_done",
        "_escape",
        "_fields",
        "_in_string",
        "_member",
        "_opened",
        "_prefix",
        "_types",
    )

    def __init__(self, dataclass_type: type[Any]) -> None:
        hints = typing.get_type_hints(dataclass_type)
        self._types: dict[str, Any] = {
            field.name: hints[field.name] for field in dataclasses.fields(dataclass_type)
        }
        self._fields: dict[str, object] = {}
        self._member: list[str] = []
        self._prefix: list[str] = []
        self._opened = False
        self._done = False
        self._depth = 0
        self._in_string = False
        self._escape = False

    @property
    def fields(self) -> Mapping[str, object]:
        """The fields complete so far, parsed, in the order they arrived."""
        return MappingProxyType(dict(self._fields))

    def feed(self, text: str) -> bool:
        """Scan ``text``; True when at least one more field became complete."""
        if self._done:
            return False
        start = 0 if self._opened else self._open(text)
        if start < 0:
            return False
        grew = False
        segment_start = start
        for index in range(start, len(text)):
            char = text[index]
            if self._in_string:
                if self._escape:
                    self._escape = False
                elif char == "\\":
                    self._escape = True
                elif char == '"':
                    self._in_string = False
                continue
            if char == '"':
                self._in_string = True
            elif char in "{[":
                self._depth += 1
            elif char in "]}":
                self._depth -= 1
                if self._depth == 0:
                    grew |= self._close_member(text[segment_start:index])
                    self._done = True
                    return grew
            elif char == "," and self._depth == 1:
                grew |= self._close_member(text[segment_start:index])
                segment_start = index + 1
        self._member.append(text[segment_start:])
        return grew

    def _open(self, text: str) -> int:
        """Where the object's members start in ``text``; -1 while (or if never) opened."""
        self._prefix.append(text)
        seen = "".join(self._prefix)
        stripped = seen.lstrip()
        if stripped.startswith("`"):
            if "\n" not in stripped:
                return -1  # the fence's first line is still arriving
            stripped = stripped.split("\n", 1)[1].lstrip()
        if not stripped:
            return -1
        if not stripped.startswith("{"):
            self._done = True  # not a JSON object: nothing to report
            return -1
        self._opened = True
        self._depth = 1
        self._prefix = []
        # Continue from just after the brace, inside this chunk.
        before = len(seen) - len(stripped) + 1
        return before - (len(seen) - len(text))

    def _close_member(self, tail: str) -> bool:
        member = "".join(self._member) + tail
        self._member = []
        if not member.strip():
            return False
        try:
            decoded = loads("{" + member + "}")
        except ParseError:
            return False
        if not isinstance(decoded, dict) or len(decoded) != 1:
            return False
        ((name, value),) = decoded.items()
        declared = self._types.get(name)
        if declared is None:
            return False
        try:
            self._fields[name] = parse(declared, value)
        except (ParseError, SerdeError):
            return False
        return True
