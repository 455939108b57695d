"""Whether a parsed value can share containers with the JSON it came from.

``parse`` builds every typed container (lists, tuples, sets, dicts, dataclasses) anew;
only values of fields typed ``Any``, ``object`` or ``JSONValue`` are kept as given, so
a ``dict`` or ``list`` inside them is the caller's own object. Code that must keep the
input unchanged while someone mutates the parsed value (the tool runtime recording
what the model sent) copies only when this says it is needed.
"""

from __future__ import annotations

from weakincentives.serde._nodes import (
    AnyNode,
    ArrayNode,
    DataclassNode,
    MapNode,
    Node,
    TupleNode,
    UnionNode,
)
from weakincentives.serde._reflect import model_of

__all__ = ["shares_input"]


_ANSWERS: dict[object, bool] = {}


def shares_input(cls: type[object]) -> bool:
    """True when ``parse(cls, data)`` may return objects holding ``data``'s own containers."""
    answer = _ANSWERS.get(cls)
    if answer is None:
        answer = _ANSWERS.setdefault(cls, _walk(cls))
    return answer


def _walk(cls: type[object]) -> bool:
    seen: set[object] = set()
    stack: list[Node] = [DataclassNode(key=cls)]
    while stack:
        node = stack.pop()
        if isinstance(node, AnyNode):
            return True
        if isinstance(node, DataclassNode):
            if node.key in seen:
                continue
            seen.add(node.key)
            stack.extend(field.node for field in model_of(node.key).fields)
        elif isinstance(node, ArrayNode):
            stack.append(node.item)
        elif isinstance(node, TupleNode | UnionNode):
            stack.extend(node.items if isinstance(node, TupleNode) else node.members)
        elif isinstance(node, MapNode):
            stack.append(node.value)
    return False
