"""Whether a parsed value can share containers with the JSON it came from.

``parse`` builds every typed container (lists, tuples, sets, dicts, dataclasses) anew;
only values of fields typed ``Any``, ``object`` or ``JSONValue`` are kept as given, so
a ``dict`` or ``list`` inside them is the caller's own object. Code that must keep the
input unchanged while someone mutates the parsed value (the tool runtime recording
what the model sent) copies only when this says it is needed.
"""

from __future__ import annotations

from weakincentives.serde._nodes import AnyNode
from weakincentives.serde._reflect import nodes_within

__all__ = ["shares_input"]


_ANSWERS: dict[object, bool] = {}


def shares_input(cls: type[object]) -> bool:
    """True when ``parse(cls, data)`` may return objects holding ``data``'s own containers."""
    answer = _ANSWERS.get(cls)
    if answer is None:
        found = any(isinstance(node, AnyNode) for node in nodes_within(cls))
        answer = _ANSWERS.setdefault(cls, found)
    return answer
