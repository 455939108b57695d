"""The inline checks of generated parse functions, field by field.

For each field the generated code runs a check written into the source for the
common cases (a plain ``str``, an ``int`` within its bounds, a member of a
``Literal``, a list of nested dataclasses) and only calls the prebuilt converter
when the check fails, which then converts or raises the precise error.
"""

from __future__ import annotations

import sys

from weakincentives.serde._nodes import (
    AnyNode,
    ArrayNode,
    BoolNode,
    ChoiceNode,
    DataclassNode,
    Limits,
    Node,
    NoneNode,
    NumberNode,
    StrNode,
    UnionNode,
)

__all__ = ["FieldWriter", "optional_inner"]

# Finite floats lie within +-the largest double; infinity and NaN fail the comparison,
# which, unlike "v - v == 0.0", allocates no float.
_LARGEST = sys.float_info.max


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


class FieldWriter:
    """Writes the code for one field; constants go into the shared namespace."""

    def __init__(self, namespace: dict[str, object], index: int, located: bool) -> None:
        self.namespace = namespace
        self.index = index
        self.located = located

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
                    else [f"{var}.__class__ is float", f"{-_LARGEST!r} <= {var} <= {_LARGEST!r}"]
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

    def field_condition(self, node: Node, var: str) -> str | None:
        """A condition true when a field's value ``var`` needs no conversion, if there is one."""
        if isinstance(node, AnyNode) and not node.json_only:
            return "True"
        inner = optional_inner(node)
        condition = self.condition(inner, var)
        if condition is None or inner is node:
            return None if condition is None else f"({condition})"
        return f"({var} is None or {condition})"

    def lines(self, node: Node, convert: str) -> list[str]:
        """Code that turns ``v`` into the parsed value in place."""
        if isinstance(node, AnyNode) and not node.json_only:
            return []
        inner = optional_inner(node)
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
                if not self.located:
                    each_item = self.item_expression(item) or f"_i{self.index}(x)"
                    return [
                        "if v.__class__ is list:",
                        f"    v = {wrap}([{each_item} for x in v])",
                        "else:",
                        f"    v = {convert}(v)",
                    ]
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


def optional_inner(node: Node) -> Node:
    """``X`` for an ``X | None`` node, else the node itself."""
    if (
        isinstance(node, UnionNode)
        and len(node.members) == 2
        and isinstance(node.members[1], NoneNode)
    ):
        return node.members[0]
    return node
