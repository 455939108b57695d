"""The type model: what serde learned about a type, reflected once.

Reflection (:mod:`weakincentives.serde._reflect`) turns a type hint into a tree
of nodes. The parse compiler, the schema writer and the strictness check all
read the same tree, so the three can never disagree about what a type means.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time
from enum import Enum
from pathlib import PurePath
from typing import Literal

__all__ = [
    "MISSING",
    "NO_LIMITS",
    "AnyNode",
    "ArrayNode",
    "BoolNode",
    "ChoiceNode",
    "DataclassNode",
    "DecimalNode",
    "FieldModel",
    "Limits",
    "MapNode",
    "Model",
    "Node",
    "NoneNode",
    "Notes",
    "NumberNode",
    "PathNode",
    "StrNode",
    "TemporalNode",
    "TupleNode",
    "UUIDNode",
    "UnionNode",
]

type Scalar = str | int | float | bool | None
type ArrayContainer = Literal["list", "tuple", "set", "frozenset"]
type MapContainer = Literal["dict", "mapping"]
type KeyKind = Literal["str", "int", "enum", "literal"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Notes:
    """Schema annotations that do not change what parse accepts."""

    title: str | None = None
    description: str | None = None
    examples: tuple[object, ...] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Constraints from metadata; each is emitted in the schema and enforced by parse."""

    ge: int | float | None = None
    gt: int | float | None = None
    le: int | float | None = None
    lt: int | float | None = None
    multiple_of: int | float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: re.Pattern[str] | None = None

    def merged(self, other: Limits) -> Limits:
        """Combine two sets of limits; values set in ``other`` win."""
        return Limits(
            ge=other.ge if other.ge is not None else self.ge,
            gt=other.gt if other.gt is not None else self.gt,
            le=other.le if other.le is not None else self.le,
            lt=other.lt if other.lt is not None else self.lt,
            multiple_of=other.multiple_of if other.multiple_of is not None else self.multiple_of,
            min_length=other.min_length if other.min_length is not None else self.min_length,
            max_length=other.max_length if other.max_length is not None else self.max_length,
            pattern=other.pattern if other.pattern is not None else self.pattern,
        )


NO_LIMITS = Limits()


@dataclass(frozen=True, slots=True, kw_only=True)
class AnyNode:
    """``Any`` or ``object``: passed through unchanged; ``JSONValue``: checked to be JSON."""

    json_only: bool = False
    """True for ``JSONValue``: parse refuses what is not JSON (NaN, deep nesting, objects)."""
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NoneNode:
    """``None``: JSON null."""

    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BoolNode:
    """``bool``: JSON true/false only."""

    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class NumberNode:
    """``int`` or ``float``; booleans are never numbers."""

    kind: Literal["int", "float"]
    limits: Limits = NO_LIMITS
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DecimalNode:
    """``Decimal``: a numeric string or a number in, a string out."""

    limits: Limits = NO_LIMITS
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StrNode:
    """``str``."""

    limits: Limits = NO_LIMITS
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceNode:
    """``Literal[...]`` or an ``Enum``: a fixed set of JSON scalars.

    ``choices`` pairs each wire value with the Python value parse returns.
    """

    choices: tuple[tuple[Scalar, object], ...]
    enum_type: type[Enum] | None = None
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemporalNode:
    """``datetime``, ``date`` or ``time`` as an ISO 8601 string."""

    cls: type[datetime] | type[date] | type[time]
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UUIDNode:
    """``UUID`` as its canonical string."""

    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PathNode:
    """``pathlib`` paths as strings."""

    cls: type[PurePath]
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrayNode:
    """Homogeneous collections: list, variadic tuple, set, frozenset."""

    item: Node
    container: ArrayContainer
    limits: Limits = NO_LIMITS
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TupleNode:
    """A fixed-length tuple such as ``tuple[int, str]``."""

    items: tuple[Node, ...]
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MapNode:
    """``dict[K, V]`` or ``Mapping[K, V]``; JSON object keys are strings on the wire."""

    key_kind: KeyKind
    key_choices: tuple[tuple[str, object], ...]
    value: Node
    container: MapContainer
    limits: Limits = NO_LIMITS
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnionNode:
    """``A | B | ...`` with nested unions flattened; ``None`` appears as a NoneNode."""

    members: tuple[Node, ...]
    notes: Notes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DataclassNode:
    """A reference to a dataclass; its model is reflected lazily to allow recursion.

    ``key`` is the class itself, or the parametrised alias for a generic dataclass.
    """

    key: object
    notes: Notes | None = None


type Node = (
    AnyNode
    | NoneNode
    | BoolNode
    | NumberNode
    | DecimalNode
    | StrNode
    | ChoiceNode
    | TemporalNode
    | UUIDNode
    | PathNode
    | ArrayNode
    | TupleNode
    | MapNode
    | UnionNode
    | DataclassNode
)


class _Missing:
    """Sentinel type for 'no default'."""

    __slots__ = ()


MISSING = _Missing()


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldModel:
    """One dataclass field as serde sees it."""

    name: str
    """Python attribute name (the constructor keyword)."""
    wire: str
    """JSON member name: the ``alias`` metadata, else the attribute name."""
    node: Node
    default: object = MISSING
    """The field's default value, if it has one."""
    factory: Callable[[], object] | None = None
    """The field's default factory, if it has one."""

    @property
    def required(self) -> bool:
        """Whether the JSON must carry this field (it has no default)."""
        return self.default is MISSING and self.factory is None


@dataclass(frozen=True, slots=True, kw_only=True)
class Model:
    """A dataclass as serde sees it: its init fields, in declaration order."""

    cls: type[object]
    fields: tuple[FieldModel, ...]
    description: str | None
    """The class docstring, unless it is the one dataclasses generates."""
