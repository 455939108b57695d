r"""Which JSON Schema ``pattern`` values the validator can match in bounded time.

Schemas come from catalogue files and MCP servers and values from the model, so both
are untrusted. Python's ``re`` backtracks: a pattern that repeats a part which can
match the same text in many ways (``(a+)+``, ``(a|aa)*``, ``(\w+\s?)*``) takes time
exponential in the length of a value that almost matches, and forty characters can
hold a worker for hours. :func:`backtracking_risk` reads a pattern's structure once
and names such a repetition; the validator does not run those patterns (the tool's
own server still checks its arguments) and matches every other pattern as written.

The reading is conservative: a repeated group is a risk when its body holds a
repetition of its own (``+``, ``*``, ``?`` or ``{n,m}``, but not a fixed ``{n}``) or
an alternation whose branches are not distinct literal characters; a group repeated at
most :data:`SMALL_REPEAT` times is allowed a body whose repetitions are bounded (the
IPv4 form ``(\d{1,3}\.){3}``). Some safe patterns are refused with it (``(ab|cd)+``);
no pattern it accepts nests one unbounded repetition inside another.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = ["SMALL_REPEAT", "backtracking_risk", "pattern_matcher"]

logger = logging.getLogger("weakincentives.serde")

SMALL_REPEAT = 16
"""The most repetitions of a group whose body repeats only within fixed bounds."""

_UNBOUNDED = -1
_COUNTED = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")


_PLAIN = frozenset("\\.^$*+?{}[]()|")
"""Characters that are not literals unescaped; escaped, they are (``\\.``)."""


@dataclass(slots=True)
class _Group:
    """What one group's body holds, as far as the scan has read."""

    start: int
    unbounded: bool = False
    """A repetition without an upper bound (``*``, ``+``, ``{n,}``) inside."""
    bounded: bool = False
    """A repetition with a varying but bounded count (``?``, ``{n,m}``) inside."""
    branches: list[list[str]] = field(default_factory=lambda: [[]])
    """The atoms of each alternative so far, as written."""

    @property
    def wide(self) -> bool:
        r"""An alternation whose branches are not distinct literal characters.

        ``(a|b)+`` reads each character one way; ``(a|ab)+``, ``(a|a)+`` or
        ``(\w|\d)+`` can read the same text several ways.
        """
        if len(self.branches) == 1:
            return False
        literals = [branch[0] for branch in self.branches if len(branch) == 1]
        return (
            len(literals) != len(self.branches)
            or len(set(literals)) != len(literals)
            or any(not _literal(atom) for atom in literals)
        )


def _literal(atom: str) -> bool:
    if len(atom) == 1:
        return atom not in _PLAIN
    return len(atom) == 2 and atom[0] == "\\" and atom[1] in _PLAIN


@lru_cache(maxsize=256)
def backtracking_risk(pattern: str) -> str | None:
    """Why matching ``pattern`` can take exponential time, or None when it cannot.

    ``pattern`` must compile with :func:`re.compile`; the answer is cached.
    """
    stack = [_Group(start=-1)]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "(":
            stack.append(_Group(start=index))
            index = _body_start(pattern, index + 1)
            continue
        if char == "|":
            stack[-1].branches.append([])
            index += 1
            continue
        if char == ")":
            group = stack.pop()
            low, high, index = _quantifier(pattern, index + 1)
            problem = _repeated_group(pattern, group, high, index)
            if problem is not None:
                return problem
            parent = stack[-1]
            parent.branches[-1].append(pattern[group.start : index])
            parent.unbounded = parent.unbounded or group.unbounded
            parent.bounded = parent.bounded or group.bounded or group.wide
        else:
            end = _class_end(pattern, index) if char == "[" else index + (2 if char == "\\" else 1)
            stack[-1].branches[-1].append(pattern[index:end])
            low, high, index = _quantifier(pattern, end)
        if high == _UNBOUNDED:
            stack[-1].unbounded = True
        elif high != low:
            stack[-1].bounded = True
    return None


def _repeated_group(pattern: str, group: _Group, high: int, end: int) -> str | None:
    """The risk of repeating ``group`` up to ``high`` times, if any."""
    if high != _UNBOUNDED and high <= 1:
        return None
    if not (group.unbounded or group.bounded or group.wide):
        return None
    small = high != _UNBOUNDED and high <= SMALL_REPEAT
    if small and not group.unbounded:
        return None
    inner = "an alternation of overlapping branches" if group.wide else "a repetition"
    shown = pattern[group.start : end]
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"the group {shown!r} repeats {inner}, which can take exponential time to match"


def _quantifier(pattern: str, index: int) -> tuple[int, int, int]:
    """``(low, high, end)`` of the quantifier at ``index``; ``(1, 1, index)`` when none."""
    if index >= len(pattern):
        return 1, 1, index
    char = pattern[index]
    if char in "*+?":
        low, high, end = {"*": (0, _UNBOUNDED), "+": (1, _UNBOUNDED), "?": (0, 1)}[char] + (
            index + 1,
        )
    elif char == "{" and (counted := _COUNTED.match(pattern, index)) is not None:
        first, comma, second = counted.groups()
        if not first and not comma:
            return 1, 1, index  # "{}" is two literal characters
        low = int(first or 0)
        high = low if not comma else (int(second) if second else _UNBOUNDED)
        end = counted.end()
    else:
        return 1, 1, index
    if end < len(pattern) and pattern[end] in "?+":
        end += 1  # lazy or possessive: the same repetition
    return low, high, end


def _body_start(pattern: str, index: int) -> int:
    """Where a group's body begins, past its ``?`` extension (``?:``, ``?P<name>``...).

    Extensions that are whole (``(?i)``, ``(?#...)``, ``(?P=name)``) are skipped up to
    their ``)``, so the group is read as an empty one.
    """
    if index >= len(pattern) or pattern[index] != "?":
        return index
    rest = pattern[index + 1 :]
    if rest.startswith(("P<", "<")) and not rest.startswith(("<=", "<!")):
        return pattern.index(">", index) + 1
    if rest.startswith(("<=", "<!")):
        return index + 3
    if rest[:1] in (":", "=", "!", ">"):
        return index + 2
    # Flags ("?i:" or "?i)"), a comment ("?#...") or a named reference ("?P=name").
    if rest.startswith("#"):
        return pattern.index(")", index)
    end = index + 1
    while end < len(pattern) and pattern[end] not in ":)":
        end += 1
    return end + 1 if end < len(pattern) and pattern[end] == ":" else end


def _class_end(pattern: str, index: int) -> int:
    """The index just after the character class that opens at ``index``."""
    index += 1
    if index < len(pattern) and pattern[index] == "^":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1  # a leading "]" is a member
    while index < len(pattern) and pattern[index] != "]":
        index += 2 if pattern[index] == "\\" else 1
    return index + 1


@lru_cache(maxsize=256)
def pattern_matcher(pattern: str) -> re.Pattern[str] | None:
    """``pattern`` compiled, or None when the validator does not match it (logged once).

    None for a pattern that does not compile (catalogues refuse those when they are
    built, see ``schema_problems``) and for one with a :func:`backtracking_risk`.
    """
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        logger.warning("schema pattern %r is not checked: it does not compile (%s)", pattern, exc)
        return None
    risk = backtracking_risk(pattern)
    if risk is not None:
        logger.warning("schema pattern %r is not checked: %s", pattern, risk)
        return None
    return compiled
