"""Section text compiled once: ``string.Template`` placeholders turned into a format plan."""

from __future__ import annotations

import functools
import operator
import string
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

__all__ = ["CompiledText", "compile_text"]

_PATTERN = string.Template.pattern


@dataclass(frozen=True, slots=True)
class CompiledText:
    """A dedented, stripped text whose ``$name``/``${name}`` placeholders are pre-parsed.

    Rendering never re-parses: it formats a precomputed ``str.format`` template with the
    attribute values of a params object, which is what makes ``render`` cheap.
    """

    source: str
    """The text after dedent and strip, placeholders intact."""
    placeholders: tuple[str, ...]
    """Placeholder names in order of first appearance."""
    invalid: tuple[str, ...]
    """Fragments that start with ``$`` but are not valid placeholders."""
    _format: str
    _getter: Callable[[object], object] | None
    _parts: tuple[str | int, ...]
    """Literal text and, as ints, indexes into ``placeholders``, in order (compiled renders)."""

    def render(self, params: object) -> str:
        """Substitute each placeholder with ``str`` of the matching attribute of ``params``."""
        getter = self._getter
        if getter is None:
            return self._format
        if len(self.placeholders) == 1:
            return self._format.format(getter(params))
        # attrgetter with two or more names returns a tuple of their values.
        return self._format.format(*cast(tuple[object, ...], getter(params)))

    def substitute(self, values: dict[str, str]) -> str:
        """Substitute from a mapping instead of a params object (used for summary suffixes)."""
        return self._format.format(*(values[name] for name in self.placeholders))

    def parts(self) -> tuple[str | int, ...]:
        """The text as literal pieces and placeholder indexes (into ``placeholders``), in order.

        Empty literals are left out; joining the pieces with ``str`` of each placeholder's
        value gives what :meth:`render` returns.
        """
        return self._parts


@functools.lru_cache(maxsize=4096)
def compile_text(text: str) -> CompiledText:
    """Dedent and strip ``text``, then parse its placeholders once.

    Cached by the raw text: sections built from the same template string (a common
    shape for generated trees) share one immutable compiled form.
    """
    source = textwrap.dedent(text).strip()
    names: list[str] = []
    invalid: list[str] = []
    pieces: list[str] = []
    plain: list[str] = []
    parts: list[str | int] = []
    position = 0
    for match in _PATTERN.finditer(source):
        literal = source[position : match.start()]
        pieces.append(_escape(literal))
        plain.append(literal)
        parts.append(literal)
        position = match.end()
        name = match.group("named") or match.group("braced")
        if name is not None:
            if name not in names:
                names.append(name)
            pieces.append("{" + str(names.index(name)) + "!s}")
            parts.append(names.index(name))
            continue
        if match.group("escaped") is None:
            invalid.append(source[match.start() : match.start() + 12].split("\n", 1)[0])
        pieces.append("$")
        plain.append("$")
        parts.append("$")
    pieces.append(_escape(source[position:]))
    plain.append(source[position:])
    parts.append(source[position:])
    return CompiledText(
        source=source,
        placeholders=tuple(names),
        invalid=tuple(invalid),
        _format="".join(pieces) if names else "".join(plain),
        _getter=operator.attrgetter(*names) if names else None,
        _parts=_merged(parts),
    )


def _merged(parts: list[str | int]) -> tuple[str | int, ...]:
    """Adjacent literals joined, empty ones dropped."""
    merged: list[str | int] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        elif part != "":
            merged.append(part)
    return tuple(merged)


def _escape(literal: str) -> str:
    return literal.replace("{", "{{").replace("}", "}}")
