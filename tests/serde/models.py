"""Rich dataclasses shared by the serde tests: every supported kind of field."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from enum import IntEnum, StrEnum
from pathlib import PurePosixPath
from typing import Any, Literal
from uuid import UUID

HOME = PurePosixPath("home")


class Status(StrEnum):
    """Account status."""

    ACTIVE = "active"
    CLOSED = "closed"


class Level(IntEnum):
    """Support level."""

    BASIC = 1
    GOLD = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Address:
    """A postal address."""

    street: str = field(metadata={"min_length": 1, "max_length": 40})
    city: str
    zip_code: str | None = field(default=None, metadata={"pattern": r"^[0-9]{5}$", "alias": "zip"})


@dataclass(frozen=True, slots=True)
class Customer:
    """A customer record."""

    id: UUID
    name: str = field(metadata={"description": "Full name", "min_length": 1})
    age: int = field(metadata={"ge": 0, "le": 150})
    score: float = field(default=0.0, metadata={"ge": 0.0, "lt": 1.0})
    balance: Decimal = Decimal("0")
    status: Status = Status.ACTIVE
    level: Level = Level.BASIC
    tags: frozenset[str] = frozenset()
    addresses: tuple[Address, ...] = ()
    joined: date | None = None
    last_seen: datetime | None = None
    preferences: Mapping[str, int | str] = field(default_factory=dict)
    home: PurePosixPath = HOME


@dataclass
class Tree:
    label: str
    weight: int | float = 0
    children: list[Tree] = field(default_factory=list, metadata={"max_length": 2})
    extra: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Circle:
    """A circle."""

    kind: Literal["circle"] = "circle"
    radius: float = field(metadata={"gt": 0})


@dataclass(frozen=True, slots=True, kw_only=True)
class Rect:
    """A rectangle."""

    kind: Literal["rect"] = "rect"
    width: float
    height: float


@dataclass(frozen=True, slots=True)
class Drawing:
    """Shapes placed at an origin."""

    shapes: list[Circle | Rect]
    origin: tuple[int, int] = (0, 0)
    at: time | None = None
    labels: dict[str, list[int]] = field(default_factory=dict)


@dataclass(slots=True, frozen=True)
class OpenSectionsParams:
    """Parameters for the open_sections tool."""

    section_keys: tuple[str, ...] = field(
        metadata={
            "description": (
                "Section keys to open. Each key identifies a summarized section. "
                "Use the keys shown in section summaries. Nested sections use "
                "dot notation (e.g., 'parent.child')."
            ),
        },
    )
    reason: str = field(
        metadata={
            "description": (
                "Brief explanation of why these sections need to be expanded. "
                "Helps the caller understand the model's information needs."
            ),
        },
    )


RICH_TYPES: tuple[type, ...] = (Customer, Tree, Drawing, OpenSectionsParams, Address)
