"""Generate the parse function of one dataclass from source, as dataclasses does for __init__.

Per field the generated code looks the wire name up, runs an inlined check
for the common cases (a plain ``str``, an ``int`` within its bounds, a member
of a ``Literal``, a list of nested dataclasses) and only calls the prebuilt
converter when the check fails, which then converts or raises the precise
error. The source is registered with :mod:`linecache` so tracebacks and
debuggers can show it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from itertools import count
from typing import cast

from weakincentives._bounded import exception_text, quote
from weakincentives._codegen import generated_function
from weakincentives._direct import generated_init, slot_setter
from weakincentives.serde._convert import Converter, add_failed_index
from weakincentives.serde._failure import _ConversionError, describe, key_segment
from weakincentives.serde._nodes import (
    AnyNode,
    ArrayNode,
    BoolNode,
    ChoiceNode,
    DataclassNode,
    Limits,
    Model,
    Node,
    NoneNode,
    NumberNode,
    StrNode,
    UnionNode,
)

__all__ = ["generate_parser"]

_MISSING = object()
_UNSAFE = re.compile(r"\W")


def _number_bounds(limits: Limits, var: str) -> list[str] | None:
    checks = [
        f"{var} {op} {bound!r}"
        for op, bound in ((">=", limits.ge), (">", limits.gt), ("<=", limits.le), ("<", limits.lt))
        if bound is not None
    ]
    step = limits.multiple_of
    if step is not None:
        if not isinstance(step, int):
            return None  # float steps need the careful check in the converter
        checks.append(f"{var} % {step!r} == 0")
    return checks


class _Writer:
    """Writes the code for one field; constants go into the shared namespace."""

    def __init__(self, namespace: dict[str, object], index: int) -> None:
        self.namespace = namespace
        self.index = index

    def const(self, prefix: str, value: object) -> str:
        name = f"_{prefix}{self.index}"
        self.namespace[name] = value
        return name

    def condition(self, node: Node, var: str) -> str | None:
        """An expression true when ``var`` already is the parsed value, if there is one."""
        match node:
            case StrNode(limits=limits):
                checks = [f"{var}.__class__ is str"]
                if limits.min_length is not None:
                    checks.append(f"len({var}) >= {limits.min_length}")
                if limits.max_length is not None:
                    checks.append(f"len({var}) <= {limits.max_length}")
                if limits.pattern is not None:
                    search = self.const("p", limits.pattern.search)
                    checks.append(f"{search}({var}) is not None")
                return " and ".join(checks)
            case NumberNode(kind=kind, limits=limits):
                bounds = _number_bounds(limits, var)
                if bounds is None:
                    return None
                head = (
                    [f"{var}.__class__ is int"]
                    if kind == "int"
                    else [f"{var}.__class__ is float", f"{var} - {var} == 0.0"]
                )
                return " and ".join(head + bounds)
            case BoolNode():
                return f"({var} is True or {var} is False)"
            case ChoiceNode(choices=choices):
                classes = {wire.__class__ for wire, _ in choices}
                if len(classes) != 1 or any(value is not wire for wire, value in choices):
                    return None  # enums map wire values to members: see plain_lines
                members = self.const("s", frozenset(wire for wire, _ in choices))
                return f"{var}.__class__ is {classes.pop().__name__} and {var} in {members}"
            case _:
                return None

    def lines(self, node: Node, convert: str) -> list[str]:
        """Code that turns ``v`` into the parsed value in place."""
        if isinstance(node, AnyNode) and not node.json_only:
            return []
        inner = _optional_inner(node)
        body = self.plain_lines(inner, convert)
        if inner is node:
            return body
        if body == [f"v = {convert}(v)"]:
            return body  # the union converter handles null itself
        return ["if v is not None:", *(f"    {line}" for line in body)]

    def plain_lines(self, node: Node, convert: str) -> list[str]:
        condition = self.condition(node, "v")
        if condition is not None:
            return [f"if not ({condition}): v = {convert}(v)"]
        match node:
            case ChoiceNode(choices=choices):
                classes = {wire.__class__ for wire, _ in choices}
                if len(classes) == 1:
                    table = self.const("t", dict(choices))
                    kind = classes.pop().__name__
                    return [
                        f"w = {table}.get(v, _M) if v.__class__ is {kind} else _M",
                        f"v = {convert}(v) if w is _M else w",
                    ]
            case ArrayNode(item=item, container=container, limits=limits) if (
                container in ("list", "tuple") and limits == Limits()
            ):
                wrap = "tuple" if container == "tuple" else ""
                if isinstance(item, DataclassNode):
                    # Nested objects: the failing index comes from a counter, never from
                    # converting again, which would double the work at every level.
                    return [
                        "if v.__class__ is list:",
                        "    n_ = _count()",
                        "    try:",
                        f"        v = {wrap}([_i{self.index}(x) for x, _ in zip(v, n_)])",
                        "    except _CE as e:",
                        "        _indexed(e, n_)",
                        "        raise",
                        "else:",
                        f"    v = {convert}(v)",
                    ]
                each = self.item_expression(item)
                if each is not None:
                    return [
                        "if v.__class__ is list:",
                        "    try:",
                        f"        v = {wrap}([{each} for x in v])",
                        "    except _CE:",
                        f"        v = {convert}(v)  # reports the failing index",
                        "else:",
                        f"    v = {convert}(v)",
                    ]
            case _:
                pass
        return [f"v = {convert}(v)"]

    def item_expression(self, item: Node) -> str | None:
        condition = self.condition(item, "x")
        if condition is None:
            return None
        return f"x if {condition} else _i{self.index}(x)"


def _direct_build(cls: type[object], model: Model) -> bool:
    """Whether setting the fields directly does exactly what ``__init__`` would.

    True for dataclass-generated ``__init__`` methods with nothing custom to
    run: no ``__post_init__``, no ``init=False`` fields, no custom ``__new__``
    or (for mutable classes) ``__setattr__``. Skipping the call saves the
    keyword-argument handling that dominates the cost of small objects.
    """
    params = getattr(cls, "__dataclass_params__", None)
    return (
        params is not None
        and params.init
        and generated_init(cls)
        and not hasattr(cls, "__post_init__")
        and cls.__new__ is object.__new__
        and (params.frozen or cls.__setattr__ is object.__setattr__)
        and len(dataclasses.fields(cast(type, cls))) == len(model.fields)
    )


def _optional_inner(node: Node) -> Node:
    if (
        isinstance(node, UnionNode)
        and len(node.members) == 2
        and isinstance(node.members[1], NoneNode)
    ):
        return node.members[0]
    return node


def generate_parser(
    model: Model, convert: Callable[[Node], Converter], extra_forbidden: bool
) -> Converter:
    """Build the parse function of ``model``'s dataclass."""
    cls = model.cls
    namespace: dict[str, object] = {
        "_M": _MISSING,
        "_CE": _ConversionError,
        "_cls": cls,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_segs": tuple(key_segment(field.wire) for field in model.fields),
        "_other": _not_an_object(cls),
        "_extra": _extra_field(model),
        "_built": _construction_failed(cls),
        "_count": count,
        "_indexed": add_failed_index,
    }
    required = sum(1 for field in model.fields if field.required)
    body = [f"n = {required}", "try:"]
    for index, field in enumerate(model.fields):
        namespace[f"_c{index}"] = convert(field.node)
        inner = _optional_inner(field.node)
        if isinstance(inner, ArrayNode):
            namespace[f"_i{index}"] = convert(inner.item)
        lines = _Writer(namespace, index).lines(field.node, f"_c{index}")
        body.append(f"    k = {index}")
        if field.required:
            body += [
                "    try:",
                f"        v = data[{field.wire!r}]",
                "    except KeyError:",
                "        raise _CE('a value (required field)', 'nothing') from None",
                *(f"    {line}" for line in lines),
                f"    f{index} = v",
            ]
            continue
        if field.factory is not None:
            namespace[f"_f{index}"] = field.factory
            fallback = f"_f{index}()"
        else:
            namespace[f"_d{index}"] = field.default
            fallback = f"_d{index}"
        body += [
            f"    v = data.get({field.wire!r}, _M)",
            "    if v is _M:",
            f"        f{index} = {fallback}",
            "    else:",
            "        n += 1",
            *(f"        {line}" for line in lines),
            f"        f{index} = v",
        ]
    if not model.fields:
        body.append("    pass")
    body += ["except _CE as e:", "    e.segments.append(_segs[k])", "    raise"]
    if extra_forbidden:
        body += ["if n != len(data):", "    _extra(data)"]
    body += _construction(cls, model, namespace)
    name = "parse_" + _UNSAFE.sub("_", cls.__name__)
    lines = [
        f"def {name}(data):",
        "    if data.__class__ is not dict:",
        f"        return _other(data, {name})",
        *(f"    {line}" for line in body),
    ]
    source = "\n".join(lines) + "\n"
    mode = "forbid" if extra_forbidden else "ignore"
    label = f"serde parse/{mode} {cls.__module__}.{cls.__qualname__}"
    # The source holds only field names and repr() literals.
    return cast(Converter, generated_function(source, name, namespace, label=label))


def _field_stores(cls: type[object], model: Model, namespace: dict[str, object]) -> list[str]:
    """Lines storing each field: through its slot's setter (cheapest), else ``__setattr__``."""
    lines: list[str] = []
    for index, field in enumerate(model.fields):
        setter = slot_setter(cls, field.name)
        if setter is None:
            lines.append(f"_set(o, {field.name!r}, f{index})")
        else:
            namespace[f"_w{index}"] = setter
            lines.append(f"_w{index}(o, f{index})")
    return lines


def _construction(cls: type[object], model: Model, namespace: dict[str, object]) -> list[str]:
    if _direct_build(cls, model):
        return ["o = _new(_cls)", *_field_stores(cls, model, namespace), "return o"]
    keyword_only = {field.name for field in dataclasses.fields(cast(type, cls)) if field.kw_only}
    positional = [
        f"f{index}" for index, field in enumerate(model.fields) if field.name not in keyword_only
    ]
    keywords = [
        f"{field.name}=f{index}"
        for index, field in enumerate(model.fields)
        if field.name in keyword_only
    ]
    return [
        "try:",
        f"    return _cls({', '.join(positional + keywords)})",
        "except (TypeError, ValueError) as e:",
        "    raise _built(e) from None",
    ]


def _not_an_object(cls: type[object]) -> Callable[[object, Converter], object]:
    expected = f"an object ({cls.__name__})"

    def other(data: object, again: Converter) -> object:
        if isinstance(data, cls):
            return data
        if isinstance(data, Mapping):
            return again(dict(data))
        raise _ConversionError(expected, describe(data))

    return other


def _extra_field(model: Model) -> Callable[[dict[object, object]], None]:
    known = {field.wire for field in model.fields}
    listing = ", ".join(field.wire for field in model.fields)
    expected = f"only the fields {listing}" if listing else "no fields"

    def extra(data: dict[object, object]) -> None:
        # Only called when the data has more members than known fields were found.
        key = next(key for key in data if key not in known)
        raise _ConversionError(
            f"{expected} (unknown fields are forbidden)",
            f"unknown field {quote(key) if isinstance(key, str) else describe(key)}",
            [key_segment(key)],
        )

    return extra


def _construction_failed(cls: type[object]) -> Callable[[Exception], _ConversionError]:
    def built(error: Exception) -> _ConversionError:
        return _ConversionError(f"a valid {cls.__name__}", exception_text(error))

    return built
