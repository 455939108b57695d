"""Field metadata: schema notes, the wire alias and constraints, checked once.

Metadata comes from ``dataclasses.field(metadata=...)`` or from a mapping
inside ``typing.Annotated[T, {...}]``. Keys serde does not know are ignored,
because other libraries keep their own data in field metadata too.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

from weakincentives.serde import _nodes
from weakincentives.serde._nodes import Limits, Node, Notes

if TYPE_CHECKING:
    from weakincentives.serde._reflect import Where

__all__ = ["apply_metadata", "kind_name", "read_alias"]

_NUMERIC = ("ge", "gt", "le", "lt", "multiple_of")
_LENGTH = ("min_length", "max_length")
_ITEMS = ("min_items", "max_items")
_CONSTRAINTS = (*_NUMERIC, *_LENGTH, *_ITEMS, "pattern")
_FITS = (
    "'ge', 'gt', 'le', 'lt' and 'multiple_of' apply to int, float and Decimal; "
    "'min_length' and 'max_length' to str and collections; 'pattern' to str; "
    "'min_items' and 'max_items' to collections"
)


def kind_name(node: Node) -> str:
    """A short name for the kind of type a node stands for, used in messages."""
    match node:
        case _nodes.NumberNode(kind=kind):
            return kind
        case _nodes.StrNode():
            return "str"
        case _nodes.DecimalNode():
            return "Decimal"
        case _nodes.BoolNode():
            return "bool"
        case _nodes.NoneNode():
            return "None"
        case _nodes.AnyNode():
            return "Any"
        case _nodes.ChoiceNode():
            return "Literal/Enum"
        case _nodes.TemporalNode(cls=cls):
            return cls.__name__
        case _nodes.UUIDNode():
            return "UUID"
        case _nodes.PathNode():
            return "Path"
        case _nodes.ArrayNode(container=container):
            return container
        case _nodes.TupleNode():
            return "fixed-length tuple"
        case _nodes.MapNode():
            return "dict"
        case _nodes.UnionNode():
            return "union"
        case _nodes.DataclassNode():
            return "dataclass"
        case _:
            assert_never(node)


def _allowed(node: Node) -> tuple[str, ...]:
    if isinstance(node, _nodes.NumberNode | _nodes.DecimalNode):
        return _NUMERIC
    if isinstance(node, _nodes.StrNode):
        return (*_LENGTH, "pattern")
    if isinstance(node, _nodes.ArrayNode | _nodes.MapNode):
        return (*_LENGTH, *_ITEMS)
    return ()


def read_alias(metadata: Mapping[object, object], where: Where) -> str | None:
    """The ``alias`` wire name, if the metadata sets one."""
    if "alias" not in metadata:
        return None
    alias = metadata["alias"]
    if not isinstance(alias, str) or not alias:
        raise where.error(f"metadata 'alias' must be a non-empty str, got {alias!r}")
    return alias


def apply_metadata(node: Node, metadata: Mapping[object, object], where: Where) -> Node:
    """Attach the constraints and notes found in ``metadata`` to ``node``."""
    keys = tuple(key for key in _CONSTRAINTS if key in metadata)
    if keys:
        node = _constrain(node, _read_limits(metadata, keys, where), keys, where)
    notes = _read_notes(metadata, where)
    if notes is not None:
        old = node.notes or Notes()
        merged = Notes(
            title=notes.title if notes.title is not None else old.title,
            description=notes.description if notes.description is not None else old.description,
            examples=notes.examples if notes.examples is not None else old.examples,
        )
        node = replace(node, notes=merged)
    return node


def _constrain(node: Node, limits: Limits, keys: tuple[str, ...], where: Where) -> Node:
    if isinstance(node, _nodes.UnionNode):
        members = tuple(
            member
            if isinstance(member, _nodes.NoneNode)
            else _constrain(member, limits, keys, where)
            for member in node.members
        )
        return replace(node, members=members)
    allowed = _allowed(node)
    for key in keys:
        if key not in allowed:
            raise where.error(
                f"constraint {key!r} does not apply to a {kind_name(node)} value; {_FITS}"
            )
    if isinstance(
        node,
        _nodes.NumberNode | _nodes.DecimalNode | _nodes.StrNode | _nodes.ArrayNode | _nodes.MapNode,
    ):
        return replace(node, limits=node.limits.merged(limits))
    raise AssertionError(node)  # _allowed() is empty for every other node


def _number(metadata: Mapping[object, object], key: str, where: Where) -> int | float | None:
    if key not in metadata:
        return None
    value = metadata[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise where.error(f"constraint {key!r} must be a finite int or float, got {value!r}")
    if key == "multiple_of" and value <= 0:
        raise where.error(f"constraint 'multiple_of' must be positive, got {value!r}")
    return value


def _length(metadata: Mapping[object, object], keys: tuple[str, str], where: Where) -> int | None:
    present = [key for key in keys if key in metadata]
    if len(present) == 2:
        raise where.error(f"give only one of {keys[0]!r} and {keys[1]!r}; they mean the same")
    if not present:
        return None
    value = metadata[present[0]]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise where.error(f"constraint {present[0]!r} must be an int >= 0, got {value!r}")
    return value


def _read_limits(metadata: Mapping[object, object], keys: tuple[str, ...], where: Where) -> Limits:
    min_length = _length(metadata, ("min_length", "min_items"), where)
    max_length = _length(metadata, ("max_length", "max_items"), where)
    if min_length is not None and max_length is not None and min_length > max_length:
        raise where.error(f"minimum length {min_length} exceeds maximum length {max_length}")
    pattern = None
    if "pattern" in keys:
        source = metadata["pattern"]
        if not isinstance(source, str):
            raise where.error(f"constraint 'pattern' must be a str, got {source!r}")
        try:
            pattern = re.compile(source)
        except re.error as exc:
            raise where.error(
                f"constraint 'pattern' {source!r} is not a valid regex: {exc}"
            ) from None
    return Limits(
        ge=_number(metadata, "ge", where),
        gt=_number(metadata, "gt", where),
        le=_number(metadata, "le", where),
        lt=_number(metadata, "lt", where),
        multiple_of=_number(metadata, "multiple_of", where),
        min_length=min_length,
        max_length=max_length,
        pattern=pattern,
    )


def _read_notes(metadata: Mapping[object, object], where: Where) -> Notes | None:
    if not ("title" in metadata or "description" in metadata or "examples" in metadata):
        return None
    texts: dict[str, str | None] = {}
    for key in ("title", "description"):
        value = metadata.get(key)
        if value is not None and not isinstance(value, str):
            raise where.error(f"metadata {key!r} must be a str, got {type(value).__name__}")
        texts[key] = value
    examples = metadata.get("examples")
    if examples is not None and not isinstance(examples, list | tuple):
        raise where.error(f"metadata 'examples' must be a list or tuple, got {examples!r}")
    return Notes(
        title=texts["title"],
        description=texts["description"],
        examples=None if examples is None else tuple(examples),
    )
