"""Module-level classes for the typed-value tests (so their default names resolve)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import date, datetime, time
from enum import Enum, IntEnum, StrEnum
from pathlib import PurePosixPath
from types import MappingProxyType
from typing import Any, Literal

from weakincentives.serde import JSONValue

__all__ = [
    "Bounded",
    "Box",
    "Checked",
    "Derived",
    "Flavor",
    "Inner",
    "Level",
    "ListBox",
    "Mood",
    "MyPath",
    "Node",
    "Opaque",
    "Record",
    "Shape",
    "Tree",
    "UserId",
    "Wide",
    "WithCache",
    "assert_identical",
]


class Flavor(StrEnum):
    """A str-valued enum."""

    SWEET = "sweet"
    SOUR = "sour"


class Level(IntEnum):
    """An int-valued enum."""

    LOW = 1
    HIGH = 2


class Mood(Enum):
    """A plain enum with a tuple value."""

    CALM = (1, "calm")
    TENSE = (2, "tense")


class UserId(int):
    """An int subclass that is not an enum."""


class Opaque:
    """A plain class serde cannot store."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Inner:
    """A small closed dataclass."""

    a: int
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Box[T]:
    """A generic dataclass."""

    item: T
    note: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """A dataclass with open fields and a read-only mapping keyed by tuples."""

    name: str
    payload: object = None
    extra: Any = None
    visibility: Mapping[tuple[str, ...], Flavor] = field(
        default_factory=lambda: MappingProxyType({})
    )
    labels: Sequence[str] = ()
    error: BaseException | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class Wide:
    """One field of every closed kind typed values write plainly."""

    flag: bool
    count: int
    ratio: float
    text: str
    when: datetime
    day: date
    clock: time
    choice: Literal["a", "b"]
    level: Level
    scores: dict[str, float]
    by_flavor: dict[Flavor, int]
    by_number: dict[int, str]
    pair: tuple[int, str]
    unique: frozenset[int]
    json: JSONValue = None
    either: int | str = 0
    maybe: Inner | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """Union members that are dataclasses."""

    body: Inner | Box[int]


@dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    """A dataclass whose __post_init__ refuses some values."""

    total: int

    def __post_init__(self) -> None:
        if self.total < 0:
            raise ValueError("total must not be negative")


@dataclass(frozen=True, slots=True, kw_only=True)
class Node:
    """A recursive dataclass."""

    label: str
    children: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Tree:
    """A recursive dataclass whose children are open."""

    child: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ListBox[T]:
    """A generic dataclass whose field nests its parameter in another generic."""

    box: Box[list[T]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Bounded[T: Inner]:
    """A generic dataclass whose parameter has a bound."""

    item: T


@dataclass(frozen=True, slots=True, kw_only=True)
class Derived:
    """A dataclass with a field its __post_init__ computes."""

    base: int
    double: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "double", self.base * 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class WithCache:
    """A dataclass with an in-process field that is never stored."""

    key: str
    cache: object = field(default=None, compare=False, metadata={"stored": False})


class MyPath(PurePosixPath):
    """A user's path class."""


def assert_identical(left: object, right: object, path: str = "$") -> None:
    """``left`` and ``right`` are equal and of exactly the same classes, all the way down."""
    assert type(left) is type(right), f"{path}: {type(left)} is not {type(right)}"
    if is_dataclass(left) and not isinstance(left, type):
        for each in fields(left):
            if each.compare:
                assert_identical(getattr(left, each.name), getattr(right, each.name), path)
        return
    if isinstance(left, Mapping):
        assert isinstance(right, Mapping)
        assert list(left) == list(right), f"{path}: keys {list(left)} != {list(right)}"
        for key in left:
            assert_identical(left[key], right[key], f"{path}[{key!r}]")
        return
    if isinstance(left, list | tuple):
        assert isinstance(right, list | tuple)
        assert len(left) == len(right), path
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_identical(a, b, f"{path}[{index}]")
        return
    if isinstance(left, float) and isinstance(right, float) and math.isnan(left):
        assert math.isnan(right), path
        return
    if isinstance(left, datetime) and isinstance(right, datetime):
        assert left.utcoffset() == right.utcoffset(), path
    assert left == right, f"{path}: {left!r} != {right!r}"
