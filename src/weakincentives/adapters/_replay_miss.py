"""What changed: the recorded request closest to a new one, and a bounded diff of the two.

When a replayed evaluation builds a request the cassette does not hold, the error shows
it against the recorded request it most likely replaces: the exchange at the same
position of the run when it is of the same round (an unchanged run asks in the same
order), else the most similar request of the same round, else the most similar one.
The diff is over a display of the JSON with one member per line and multi-line strings
(prompts, tool results) split into their lines, so a changed sentence shows as that
line, not as one long changed string. It is bounded in lines and in line width.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Sequence
from itertools import islice

from weakincentives._bounded import clip
from weakincentives.adapters._cassette import Exchange
from weakincentives.serde import JSONValue

__all__ = ["DIFF_LINES", "DIFF_WIDTH", "closest_exchange", "first_difference", "request_diff"]

DIFF_LINES = 60
"""Lines of a unified diff shown in a miss; the rest are counted."""
DIFF_WIDTH = 160
"""Characters of one diff line shown."""
_CANDIDATES = 32
"""Recorded requests compared for similarity (those nearest the position, first)."""
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def closest_exchange(
    exchanges: Sequence[Exchange], request: JSONValue, *, round: int, position: int
) -> int | None:
    """The index of the recorded exchange ``request`` most likely replaces (None: none)."""
    if not exchanges:
        return None
    if position < len(exchanges) and exchanges[position].round == round:
        return position
    same_round = [index for index, exchange in enumerate(exchanges) if exchange.round == round]
    pool = same_round or list(range(len(exchanges)))
    nearest = sorted(pool, key=lambda index: abs(index - position))[:_CANDIDATES]
    built = display_lines(request)
    scores = {
        index: difflib.SequenceMatcher(
            None, display_lines(exchanges[index].request), built, autojunk=False
        ).ratio()
        for index in nearest
    }
    # The most similar; of equals, the one nearest the position (sorted() is stable).
    return max(nearest, key=lambda index: scores[index])


def request_diff(recorded: JSONValue, built: JSONValue, *, recorded_label: str) -> str:
    """A unified diff of ``recorded`` (``-``) against ``built`` (``+``), bounded."""
    lines = difflib.unified_diff(
        display_lines(recorded),
        display_lines(built),
        fromfile=recorded_label,
        tofile="the request built now",
        lineterm="",
    )
    shown = [clip(line, DIFF_WIDTH) for line in islice(lines, DIFF_LINES)]
    rest = sum(1 for _ in lines)
    if rest:
        shown.append(f"... {rest} more diff lines")
    return "\n".join(shown)


def first_difference(recorded: JSONValue, built: JSONValue, path: str = "$") -> str | None:
    """The JSON path of the first place (keys in sorted order) where the two differ."""
    if isinstance(recorded, dict) and isinstance(built, dict):
        for key in sorted(set(recorded) | set(built)):
            inner = _member(path, key)
            if key not in recorded or key not in built:
                return inner
            found = first_difference(recorded[key], built[key], inner)
            if found is not None:
                return found
        return None
    if isinstance(recorded, list) and isinstance(built, list):
        for index, (left, right) in enumerate(zip(recorded, built, strict=False)):
            found = first_difference(left, right, f"{path}[{index}]")
            if found is not None:
                return found
        if len(recorded) != len(built):
            return f"{path}[{min(len(recorded), len(built))}]"
        return None
    same = type(recorded) is type(built) and recorded == built
    return None if same else path


def display_lines(value: JSONValue) -> list[str]:
    """``value`` one member per line, multi-line strings split into their lines."""
    lines: list[str] = []
    _render(value, "", "", lines)
    return lines


def _render(value: JSONValue, pad: str, label: str, lines: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            lines.append(f"{pad}{label}{{}}")
            return
        lines.append(f"{pad}{label}{{")
        for key in sorted(value):
            _render(value[key], pad + "  ", f"{json.dumps(key, ensure_ascii=False)}: ", lines)
        lines.append(f"{pad}}}")
    elif isinstance(value, list):
        if not value:
            lines.append(f"{pad}{label}[]")
            return
        lines.append(f"{pad}{label}[")
        for item in value:
            _render(item, pad + "  ", "", lines)
        lines.append(f"{pad}]")
    elif isinstance(value, str) and "\n" in value:
        lines.append(f"{pad}{label}|")
        lines.extend(f"{pad}  {line}" for line in value.split("\n"))
    else:
        lines.append(f"{pad}{label}{json.dumps(value, ensure_ascii=False)}")


def _member(path: str, key: str) -> str:
    if _IDENTIFIER.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"
