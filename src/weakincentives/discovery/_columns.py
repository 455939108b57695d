"""Flat, read-only columns: many strings in one text, many groups of ints in two arrays.

A saved index of 100,000 tools holds hundreds of thousands of short strings
and lists. Stored and loaded as a few flat buffers, they cost one decode and
a handful of array copies instead of an object per entry; entries are cut
out when they are used.
"""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import overload

from weakincentives.discovery._vectorised import numpy_module

__all__ = ["ExactNames", "Groups", "Strings", "check_finite", "check_offsets", "check_range"]


@dataclass(frozen=True, slots=True)
class Groups:
    """Variable-length groups of ints in two flat arrays (compressed sparse rows).

    Group ``k`` is ``values[offsets[k]:offsets[k + 1]]``.
    """

    offsets: array[int]
    values: array[int]

    @classmethod
    def of(cls, groups: Iterable[Iterable[int]]) -> Groups:
        """Pack ``groups`` (for writing)."""
        offsets: array[int] = array("q", [0])
        values: array[int] = array("q")
        for group in groups:
            values.extend(group)
            offsets.append(len(values))
        return cls(offsets, values)

    def check(self, rows: int, bound: int, what: str, *, filled: bool = False) -> None:
        """Raise ``ValueError`` unless there are ``rows`` groups of values in ``[0, bound)``.

        With ``filled``, no group may be empty (every tool has a category).
        """
        values = self.values
        check_offsets(self.offsets, rows, len(values), what, strict=filled)
        check_range(values, bound, what)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, row: int) -> tuple[int, ...]:
        return tuple(self.values[self.offsets[row] : self.offsets[row + 1]])


def check_offsets(
    offsets: array[int], rows: int, end: int, what: str, *, strict: bool = False
) -> None:
    """Raise ``ValueError`` unless ``offsets`` split ``[0, end)`` into ``rows`` slices.

    With ``strict``, every slice holds at least one item.
    """
    if len(offsets) != rows + 1 or offsets[0] != 0 or offsets[-1] != end:
        raise ValueError(
            f"{what}: {len(offsets) - 1} slices ending at {offsets[-1:].tolist()}, "
            f"expected {rows} ending at {end}"
        )
    if offsets != array(offsets.typecode, sorted(offsets)):  # sorted() is linear on sorted input
        raise ValueError(f"{what}: offsets go backwards")
    if strict and len(set(offsets)) != len(offsets):
        raise ValueError(f"{what}: a slice is empty")


def check_range(values: array[int], bound: int, what: str) -> None:
    """Raise ``ValueError`` unless every value lies in ``[0, bound)``: positions a file gives.

    Checked before anything is indexed or allocated by them (numpy's ``bincount``
    allocates as many counters as the largest position).
    """
    if not values:
        return
    numpy = numpy_module()
    if numpy is not None:  # min and max of millions of postings in C, not one Python int each
        found = numpy.frombuffer(values, dtype=numpy.dtype(values.typecode))
        low, high = int(found.min()), int(found.max())
    else:  # pragma: no cover - numpy is a dev dependency
        low, high = min(values), max(values)
    if low < 0 or high >= bound:
        raise ValueError(f"{what}: a value lies outside [0, {bound})")


def check_finite(values: array[float], what: str) -> None:
    """Raise ``ValueError`` unless every value is a finite number (no NaN, no infinity)."""
    numpy = numpy_module()
    if numpy is not None:
        finite = bool(
            numpy.isfinite(numpy.frombuffer(values, dtype=numpy.dtype(values.typecode))).all()
        )
    else:  # pragma: no cover - numpy is a dev dependency
        finite = all(map(math.isfinite, values))
    if not finite:
        raise ValueError(f"{what}: a value is not a finite number")


@dataclass(frozen=True, slots=True)
class Strings(Sequence[str]):
    """Strings kept as one text and code-point offsets.

    Entry ``k`` is ``text[offsets[k]:offsets[k + 1]]``, cut out when it is read.
    """

    text: str
    offsets: array[int]

    @classmethod
    def of(cls, strings: Iterable[str]) -> Strings:
        """Pack ``strings`` (for writing)."""
        values = list(strings)
        offsets: array[int] = array("q", [0])
        total = 0
        for value in values:
            total += len(value)
            offsets.append(total)
        return cls("".join(values), offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[k] for k in range(len(self))[index]]
        row = range(len(self))[index]
        return self.text[self.offsets[row] : self.offsets[row + 1]]

    def __iter__(self) -> Iterator[str]:
        text, offsets = self.text, self.offsets
        return (text[offsets[k] : offsets[k + 1]] for k in range(len(self)))


class ExactNames(Mapping[tuple[str, ...], tuple[str, ...]]):
    """Tool ids by the terms of their name, as a loaded index holds them.

    Keys are kept sorted and joined by spaces (terms never contain one), and
    each key's tools as positions: a lookup is a binary search, and loading
    makes no object per key.
    """

    __slots__ = ("_keys", "_tool_ids", "_tools")

    def __init__(self, keys: Strings, tools: Groups, tool_ids: Sequence[str]) -> None:
        self._keys, self._tools, self._tool_ids = keys, tools, tool_ids

    @staticmethod
    def packed(
        exact: Mapping[tuple[str, ...], Sequence[str]], positions: Mapping[str, int]
    ) -> tuple[Strings, Groups]:
        """The sorted keys and their tools' positions, for writing ``exact``."""
        rows = sorted((" ".join(key), ids) for key, ids in exact.items())
        return (
            Strings.of(key for key, _ in rows),
            Groups.of([positions[tool_id] for tool_id in ids] for _, ids in rows),
        )

    def __getitem__(self, key: tuple[str, ...]) -> tuple[str, ...]:
        joined, keys = " ".join(key), self._keys
        row = bisect_left(keys, joined)
        if row == len(keys) or keys[row] != joined:
            raise KeyError(key)
        return tuple(self._tool_ids[position] for position in self._tools[row])

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        return (tuple(key.split(" ")) for key in self._keys)

    def __len__(self) -> int:
        return len(self._keys)
