"""Reflection: turn type hints and field metadata into the node tree, once per type.

Everything slow (``fields()``, ``get_type_hints()``, metadata checks) happens
here, and each dataclass model is cached, so the parse path, dump and schema
generation never reflect again.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import threading
import types
import typing
from collections.abc import Iterator, Mapping, MutableMapping, MutableSequence, MutableSet, Sequence
from collections.abc import Set as AbstractSet
from datetime import date, datetime, time
from decimal import Decimal
from enum import Enum
from pathlib import PurePath
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Literal,
    TypeAliasType,
    TypeVar,
    get_args,
    get_origin,
)
from uuid import UUID

from weakincentives._exports import defining_module
from weakincentives.errors import SchemaError
from weakincentives.serde import _nodes
from weakincentives.serde._json import JSONObject, JSONValue
from weakincentives.serde._limits import apply_metadata, read_alias
from weakincentives.serde._nodes import (
    MISSING,
    ArrayContainer,
    FieldModel,
    KeyKind,
    Model,
    Node,
    Scalar,
)

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["Where", "model_of", "node_of", "nodes_within"]

_MODELS: dict[object, Model] = {}
_LOCK = threading.RLock()

_ARRAYS: dict[object, ArrayContainer] = {
    list: "list",
    MutableSequence: "list",
    Sequence: "tuple",
    tuple: "tuple",
    set: "set",
    MutableSet: "set",
    frozenset: "frozenset",
    AbstractSet: "frozenset",
}
_MAPS: dict[object, typing.Literal["dict", "mapping"]] = {
    dict: "dict",
    MutableMapping: "dict",
    Mapping: "mapping",
}
_SCALARS = (str, int, float, bool, type(None))


class Where:
    """Where a type appears, so errors can name the dataclass and field."""

    __slots__ = ("field", "owner", "typevars")

    def __init__(
        self,
        owner: type[object] | None = None,
        field: str | None = None,
        typevars: Mapping[object, object] | None = None,
    ) -> None:
        self.owner = owner
        self.field = field
        self.typevars: Mapping[object, object] = typevars or {}

    def error(self, problem: str) -> SchemaError:
        """A SchemaError about this place."""
        if self.owner is None:
            prefix = ""
        elif self.field is None:
            prefix = f"{self.owner.__qualname__}: "
        else:
            prefix = f"{self.owner.__qualname__}.{self.field}: "
        return SchemaError(prefix + problem, dataclass_type=self.owner, field_name=self.field)


def _name(hint: object) -> str:
    return hint.__qualname__ if isinstance(hint, type) else repr(hint)


def node_of(hint: object, where: Where) -> Node:
    """Reflect one type hint into a node; raises SchemaError for what serde cannot handle."""
    if isinstance(hint, TypeAliasType):
        if hint is JSONValue:
            return _nodes.AnyNode(json_only=True)
        if hint is JSONObject:
            return _map_node(str, JSONValue, "dict", where)
        return node_of(hint.__value__, where)
    if isinstance(hint, TypeVar):
        bound = where.typevars.get(hint, hint.__bound__)
        return _nodes.AnyNode() if bound is None else node_of(bound, where)
    if isinstance(hint, typing.NewType):
        return node_of(hint.__supertype__, where)
    if hint is Any or hint is object:
        return _nodes.AnyNode()
    if hint is None or hint is type(None):
        return _nodes.NoneNode()
    if isinstance(hint, type):
        return _class_node(hint, where)
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is Annotated:
        inner = node_of(args[0], where)
        for extra in getattr(hint, "__metadata__", ()):
            if isinstance(extra, Mapping):
                inner = apply_metadata(inner, extra, where)
        return inner
    if origin is Literal:
        return _literal_node(args, where)
    if origin is typing.Union or origin is types.UnionType:
        return _union_node(args, where)
    if origin in _ARRAYS:
        container = _ARRAYS[origin]
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return _nodes.TupleNode(items=tuple(node_of(arg, where) for arg in args))
        item = node_of(args[0] if args else Any, where)
        if container in ("set", "frozenset"):
            _require_hashable(item, where)
        return _nodes.ArrayNode(item=item, container=container)
    if origin in _MAPS:
        key, value = args if len(args) == 2 else (str, Any)
        return _map_node(key, value, _MAPS[origin], where)
    if isinstance(origin, type) and dataclasses.is_dataclass(origin):
        concrete = tuple(_substitute(arg, where) for arg in args)
        return _nodes.DataclassNode(key=typing.cast(Any, origin)[concrete])
    raise where.error(_unsupported(hint))


def _unsupported(hint: object) -> str:
    return (
        f"unsupported type {_name(hint)}; serde handles dataclasses, scalars, Literal, Enum, "
        "unions, list/tuple/set/frozenset, dict/Mapping, datetime/date/time, UUID, Decimal, "
        "Path and Any (use a dataclass, or annotate Any/object for raw JSON)"
    )


def _class_node(hint: type[object], where: Where) -> Node:
    if hint is bool:
        return _nodes.BoolNode()
    if hint is int or hint is float:
        return _nodes.NumberNode(kind="int" if hint is int else "float")
    if hint is str:
        return _nodes.StrNode()
    if hint is Decimal:
        return _nodes.DecimalNode()
    if hint is UUID:
        return _nodes.UUIDNode()
    if hint is datetime or hint is date or hint is time:
        return _nodes.TemporalNode(cls=hint)
    if issubclass(hint, PurePath):
        return _nodes.PathNode(cls=hint)
    if issubclass(hint, Enum):
        return _enum_node(hint, where)
    if dataclasses.is_dataclass(hint):
        return _nodes.DataclassNode(key=hint)
    if hint in _MAPS:
        return _map_node(str, Any, _MAPS[hint], where)
    if hint in _ARRAYS:
        return _nodes.ArrayNode(item=_nodes.AnyNode(), container=_ARRAYS[hint])
    raise where.error(_unsupported(hint))


def _enum_node(hint: type[Enum], where: Where) -> _nodes.ChoiceNode:
    choices: list[tuple[Scalar, object]] = []
    for member in hint:
        value = member.value
        if not isinstance(value, _SCALARS):
            raise where.error(
                f"enum {hint.__qualname__} member {member.name} has value {value!r}; "
                "serde needs str, int, float, bool or None enum values"
            )
        choices.append((value, member))
    return _nodes.ChoiceNode(choices=tuple(choices), enum_type=hint)


def _literal_node(args: tuple[object, ...], where: Where) -> Node:
    choices: list[tuple[Scalar, object]] = []
    has_none = False
    for value in args:
        if value is None:
            has_none = True
        elif isinstance(value, Enum) and isinstance(value.value, _SCALARS):
            choices.append((value.value, value))
        elif isinstance(value, str | int | float | bool):
            choices.append((value, value))
        else:
            raise where.error(f"unsupported Literal value {value!r}")
    if not has_none:
        return _nodes.ChoiceNode(choices=tuple(choices))
    if not choices:
        return _nodes.NoneNode()
    return _nodes.UnionNode(members=(_nodes.ChoiceNode(choices=tuple(choices)), _nodes.NoneNode()))


def _union_node(args: tuple[object, ...], where: Where) -> Node:
    members: list[Node] = []
    for arg in args:
        node = node_of(arg, where)
        for member in node.members if isinstance(node, _nodes.UnionNode) else (node,):
            if member not in members:
                members.append(member)
    if len(members) == 1:
        return members[0]
    # Keep null last so schemas read "X or null" and parse tries real types first.
    members.sort(key=lambda member: isinstance(member, _nodes.NoneNode))
    return _nodes.UnionNode(members=tuple(members))


def _map_node(
    key: object, value: object, container: typing.Literal["dict", "mapping"], where: Where
) -> _nodes.MapNode:
    kind: KeyKind
    choices: tuple[tuple[str, object], ...] = ()
    if key is str:
        kind = "str"
    elif key is int:
        kind = "int"
    elif (
        isinstance(key, type)
        and issubclass(key, Enum)
        and all(isinstance(member.value, str) for member in key)
    ):
        kind = "enum"
        choices = tuple((member.value, member) for member in key)
    elif get_origin(key) is Literal and all(isinstance(arg, str) for arg in get_args(key)):
        kind = "literal"
        choices = tuple((arg, arg) for arg in get_args(key))
    else:
        raise where.error(
            f"unsupported dict key type {_name(key)}; JSON object keys are strings, so keys "
            "must be str, int, a str-valued Enum or a Literal of strings"
        )
    return _nodes.MapNode(
        key_kind=kind, key_choices=choices, value=node_of(value, where), container=container
    )


def _require_hashable(item: Node, where: Where) -> None:
    if isinstance(item, _nodes.ArrayNode) and item.container in ("list", "set"):
        raise where.error("set items must be hashable; use tuple or frozenset items")
    if isinstance(item, _nodes.MapNode):
        raise where.error("set items must be hashable; dicts are not")
    if isinstance(item, _nodes.DataclassNode):
        cls = get_origin(item.key) or item.key
        if getattr(cls, "__hash__", None) is None:
            raise where.error(f"set items must be hashable; make {_name(cls)} frozen (frozen=True)")


def _substitute(hint: object, where: Where) -> object:
    """Replace type variables bound by an enclosing generic dataclass."""
    if isinstance(hint, TypeVar):
        return where.typevars.get(hint, hint.__bound__ or Any)
    parameters = getattr(hint, "__parameters__", ())
    if parameters:
        return typing.cast(Any, hint)[tuple(_substitute(p, where) for p in parameters)]
    return hint


def model_of(key: object) -> Model:
    """The cached model of a dataclass (or parametrised generic dataclass)."""
    model = _MODELS.get(key)
    if model is None:
        with _LOCK:
            model = _MODELS.get(key)
            if model is None:
                model = _build_model(key)
                _MODELS[key] = model
    return model


def nodes_within(key: object) -> Iterator[Node]:
    """Every node reachable from dataclass ``key``'s fields, each dataclass's fields read once.

    A dataclass node is yielded before its fields are read, so a caller that stops
    at it never reflects that class.
    """
    seen: set[object] = set()
    stack: list[Node] = [_nodes.DataclassNode(key=key)]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _nodes.DataclassNode):
            if node.key not in seen:
                seen.add(node.key)
                stack.extend(field.node for field in model_of(node.key).fields)
        elif isinstance(node, _nodes.ArrayNode):
            stack.append(node.item)
        elif isinstance(node, _nodes.TupleNode):
            stack.extend(node.items)
        elif isinstance(node, _nodes.UnionNode):
            stack.extend(node.members)
        elif isinstance(node, _nodes.MapNode):
            stack.append(node.value)


def _build_model(key: object) -> Model:
    cls = typing.cast("type[DataclassInstance]", get_origin(key) or key)
    typevars: dict[object, object] = {}
    params = getattr(cls, "__parameters__", ())
    if key is not cls:
        typevars = dict(zip(params, get_args(key), strict=False))
    hints = _hints(cls)
    models: list[FieldModel] = []
    wires: dict[str, str] = {}
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        where = Where(cls, field.name, typevars)
        node = apply_metadata(node_of(hints[field.name], where), field.metadata, where)
        wire = read_alias(field.metadata, where) or field.name
        if wire in wires:
            raise where.error(f"wire name {wire!r} is already used by field {wires[wire]!r}")
        wires[wire] = field.name
        factory = None if field.default_factory is dataclasses.MISSING else field.default_factory
        default = MISSING if field.default is dataclasses.MISSING else field.default
        models.append(
            FieldModel(name=field.name, wire=wire, node=node, default=default, factory=factory)
        )
    return Model(cls=cls, fields=tuple(models), description=_docstring(cls))


def _hints(cls: type[DataclassInstance]) -> dict[str, object]:
    # PEP 695 type parameters live on the classes, not in any module; Python 3.12's
    # get_type_hints does not look there by itself (3.13 does), so they are passed in.
    type_params: dict[str, object] = {
        param.__name__: param
        for klass in reversed(cls.__mro__)
        for param in getattr(klass, "__type_params__", ())
    }
    # A class re-exported under its package's name still resolves its annotations in
    # the module it was written in.
    origin = defining_module(cls)
    module = vars(sys.modules[origin]) if origin in sys.modules else {}
    globalns = module if origin != cls.__module__ else None
    try:
        return typing.get_type_hints(
            cls, globalns=globalns, localns=type_params or None, include_extras=True
        )
    except NameError:
        pass
    local = {**type_params, cls.__name__: cls}
    try:
        # A class defined in a function can still name itself (recursive local classes).
        return typing.get_type_hints(cls, globalns=globalns, localns=local, include_extras=True)
    except Exception as exc:  # user annotations can fail in many ways; report it below
        problem = exc
    for field in dataclasses.fields(cls):
        if isinstance(field.type, str):
            try:
                eval(field.type, dict(module), local)
            except Exception as exc:  # report the first annotation that fails, whatever it is
                raise Where(cls, field.name).error(
                    f"cannot resolve annotation {field.type!r} ({exc}); names used in "
                    "annotations must be importable from the class's module"
                ) from None
    raise Where(cls).error(f"cannot resolve type hints ({problem})")


def _docstring(cls: type[DataclassInstance]) -> str | None:
    doc = cls.__doc__
    if not doc:
        return None
    cleaned = inspect.cleandoc(doc)
    # dataclasses writes "Name(field: type, ...)" when a class has no docstring.
    if cleaned.startswith(f"{cls.__name__}(") and cleaned.endswith(")") and "\n" not in cleaned:
        return None
    return cleaned
