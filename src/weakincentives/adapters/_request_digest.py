"""Request digests: what a recorded step was asked, to check a resumed run asks the same.

(Cassettes key whole requests by ``_fingerprint``; a digest is the durable journal's
structural check.) A digest is small and structural: a hash per top-level member of the request's
JSON, and for an array member a hash per item (the conversation, the tools). Two
fingerprints then say not only *that* a request changed but *where*: ``$.tools[1]``,
``$.input[3]``, ``$.temperature``, which is what a ``ReplayMismatchError`` shows.

SDK providers' requests are JSON bodies already; the offline provider's request (a
``TurnRequest``) is described by the parts a model sees: the rendered text, the tool
definitions, the conversation, the hosted tools and the answer schema.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from weakincentives._bounded import clip
from weakincentives.adapters._turns import TurnRequest
from weakincentives.prompt import Tool
from weakincentives.serde import JSONValue, dump_typed

__all__ = ["RequestDigests", "digest_changes", "digest_view", "request_digest"]

_HASH_CHARACTERS = 16
"""Hex digits kept of each sha256 (64 bits: collisions are not a concern here)."""
_SHOWN = 160
"""Characters of a changed part quoted in a change."""

type Digest = dict[str, JSONValue]

_PLAIN = (dict, list, tuple, str, int, float, bool, type(None))


def digest_view(request: object) -> dict[str, JSONValue]:
    """The request as a JSON object: the body itself, or a ``TurnRequest``'s model-facing parts."""
    return _as_json(_members(request))


def _as_json(members: Mapping[str, object]) -> dict[str, JSONValue]:
    return {
        name: [_item_json(item) for item in value] if isinstance(value, list) else _json(value)
        for name, value in members.items()
    }


def _members(request: object) -> dict[str, object]:
    """The request's members, by name.

    Array members may hold the library's own objects (history items, tools), which are
    turned into JSON only when needed, and hashed once.
    """
    if isinstance(request, TurnRequest):
        schema = request.output_schema
        return {
            "prompt_name": request.prompt_name,
            "text": request.rendered.text,
            "tools": list(request.rendered.tools),
            "history": list(request.history),
            "hosted_tools": [dict(item) for item in request.hosted_tools],
            "output_schema": None if schema is None else schema.schema,
            "round": request.round,
            "deadline": None if request.deadline is None else request.deadline.isoformat(),
            "max_output_tokens": request.max_output_tokens,
        }
    if isinstance(request, Mapping):
        return {
            str(key): list(value) if isinstance(value, list | tuple) else value
            for key, value in request.items()
        }
    return {"request": dump_typed(request)}


def _item_json(item: object) -> JSONValue:
    if isinstance(item, Tool):
        return {
            "name": item.name,
            "description": item.description,
            "parameters": item.spec.parameters_schema,
        }
    return _json(item)


class RequestDigests:
    """RequestDigests the requests of one evaluation.

    A conversation only grows, and each request repeats it: the hash of each history
    item (and tool) object is kept, so fingerprinting every request of an evaluation
    costs about what its conversation does, not its square.
    """

    __slots__ = ("_known",)

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, str]] = {}

    def of(self, request: object) -> Digest:
        """A hash per member of the request, and per item of an array member."""
        return self._parts(_members(request))

    def changes(self, recorded: JSONValue, request: object) -> tuple[str, ...]:
        """What differs from a recorded fingerprint, as JSON paths (none: the same request)."""
        members = _members(request)
        current = self._parts(members)
        before: Mapping[str, Any] = recorded if isinstance(recorded, dict) else {}
        if current == before:
            return ()
        now = _as_json(members)
        changes: list[str] = []
        for name in sorted(set(before) | set(current), key=_order(current, before)):
            old, new = before.get(name), current.get(name)
            if old == new:
                continue
            path = f"$.{name}"
            if name not in current:
                changes.append(f"{path} removed")
            elif name not in before:
                changes.append(f"{path} added: {_quote(now[name])}")
            elif isinstance(old, list) and isinstance(new, list):
                changes.extend(_item_changes(path, old, new, now[name]))
            else:
                changes.append(f"{path} changed: {_quote(now[name])}")
        return tuple(changes)

    def _parts(self, members: Mapping[str, object]) -> Digest:
        parts: Digest = {}
        for name, value in members.items():
            if isinstance(value, list):
                parts[name] = [self._item_hash(item) for item in value]
            else:
                parts[name] = _hash(_json(value))
        return parts

    def _item_hash(self, item: object) -> str:
        if isinstance(item, _PLAIN):
            return _hash(_json(item))
        known = self._known.get(id(item))
        if known is not None:  # the item is kept alive below, so its id is still its own
            return known[1]
        digest = _hash(_item_json(item))
        self._known[id(item)] = (item, digest)
        return digest


def request_digest(request: object) -> Digest:
    """A hash per member of the request, and per item of an array member."""
    return RequestDigests().of(request)


def digest_changes(recorded: JSONValue, request: object) -> tuple[str, ...]:
    """What differs between a recorded fingerprint and ``request``, as JSON paths (none: same)."""
    return RequestDigests().changes(recorded, request)


def _item_changes(path: str, old: list[Any], new: list[Any], values: Any) -> list[str]:
    changes = [
        f"{path}[{index}] changed: {_quote(values[index])}"
        for index, (a, b) in enumerate(zip(old, new, strict=False))
        if a != b
    ]
    if len(new) > len(old):
        changes.extend(
            f"{path}[{index}] added: {_quote(values[index])}" for index in range(len(old), len(new))
        )
    elif len(old) > len(new):
        changes.append(f"{path} has {len(new)} items, {len(old)} were recorded")
    return changes


def _order(current: Mapping[str, object], before: Mapping[str, object]) -> Any:
    """Members in the request's own order, then the removed ones."""
    positions: dict[str, int] = {}
    for name in [*current, *before]:
        positions.setdefault(name, len(positions))
    return lambda name: positions[name]


def _hash(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return digest[:_HASH_CHARACTERS]


def _quote(value: object) -> str:
    return clip(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str), _SHOWN)


def _json(value: object) -> JSONValue:
    """A body member as JSON (bodies are JSON; anything else is described by its dump)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    return dump_typed(value)
