"""Read the records of a catalogue file: JSON lines, or one JSON array of objects.

A catalogue file is untrusted input: it may not be UTF-8, nest 50,000 deep or
hold ``NaN``. Each record is decoded by serde's :func:`~weakincentives.serde.loads`,
which refuses all of these, so a bad file is a :class:`CatalogError` naming the
file and the line (or the array item) and saying what was wrong there, never a
decoder's exception. Each record comes back with that label, so problems found
later (a path too deep, a duplicate id) name the line too.
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from pathlib import Path
from typing import cast

from weakincentives.errors import CatalogError, ParseError
from weakincentives.serde import loads

__all__ = ["read_records"]

type Labelled = list[tuple[str, Mapping[str, object]]]
"""Records, each with where it came from (``file:line`` or ``file item n``)."""


def read_records(path: str | Path) -> Labelled:
    """The records of a JSON-lines file, or of a file holding one JSON array of records."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CatalogError(f"cannot read the catalogue file {where}: {exc.strerror}") from exc
    data = data.removeprefix(codecs.BOM_UTF8)
    _check_utf8_text(data, where)
    if data.lstrip()[:1] == b"[":
        return _array(data, where)
    labelled: Labelled = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        label = f"{where}:{number}"
        labelled.append((label, _object(_decoded(line, label, one_line=True), label, "line")))
    return labelled


def _check_utf8_text(data: bytes, where: str) -> None:
    """Refuse a file holding a NUL byte, which UTF-8 JSON never does: UTF-16 and UTF-32 do.

    ``loads`` would read some such files whole, while their lines (split at a byte 10
    that is half of a character) read as garbage, so they are refused as a file.
    """
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise CatalogError(
            f"{where}:{line}: a NUL byte at byte {nul}; a catalogue file is UTF-8 JSON "
            "(is this one UTF-16 or UTF-32?)"
        )


def _array(data: bytes, where: str) -> Labelled:
    # JSON text starting with "[" that decodes is an array (trailing data is an error).
    rows = cast("list[object]", _decoded(data, where))
    return [
        (label := f"{where} item {number}", _object(row, label, "item"))
        for number, row in enumerate(rows, start=1)
    ]


def _decoded(text: bytes, label: str, *, one_line: bool = False) -> object:
    try:
        return loads(text)
    except ParseError as exc:
        # A JSON line is decoded alone: its "line 1" is the label's line; the column says more.
        got = exc.got.replace(" line 1 column ", " column ") if one_line else exc.got
        raise CatalogError(f"{label}: {got}") from exc


def _object(value: object, label: str, unit: str) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise CatalogError(f"{label}: expected a JSON object (one tool record) per {unit}")
    return cast("Mapping[str, object]", value)
