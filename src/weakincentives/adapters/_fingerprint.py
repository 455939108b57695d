"""Request fingerprints: what a recorded send was asked, to check a replay asks the same.

A fingerprint is small and structural: a hash per top-level member of the request's
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
from weakincentives.serde import JSONValue, dump_typed

__all__ = ["fingerprint", "fingerprint_changes", "request_json"]

_HASH_CHARACTERS = 16
"""Hex digits kept of each sha256 (64 bits: collisions are not a concern here)."""
_SHOWN = 160
"""Characters of a changed part quoted in a change."""

type Fingerprint = dict[str, JSONValue]


def request_json(request: object) -> dict[str, JSONValue]:
    """The request as a JSON object: the body itself, or a ``TurnRequest``'s model-facing parts."""
    if isinstance(request, TurnRequest):
        rendered = request.rendered
        schema = request.output_schema
        return {
            "prompt_name": request.prompt_name,
            "text": rendered.text,
            "tools": [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.spec.parameters_schema,
                }
                for tool in rendered.tools
            ],
            "history": [dump_typed(item) for item in request.history],
            "hosted_tools": [dict(item) for item in request.hosted_tools],
            "output_schema": None if schema is None else schema.schema,
            "round": request.round,
            "deadline": None if request.deadline is None else request.deadline.isoformat(),
            "max_output_tokens": request.max_output_tokens,
        }
    if isinstance(request, Mapping):
        return {str(key): _json(value) for key, value in request.items()}
    return {"request": dump_typed(request)}


def fingerprint(request: object) -> Fingerprint:
    """A hash per member of the request, and per item of an array member."""
    parts: Fingerprint = {}
    for name, value in request_json(request).items():
        if isinstance(value, list):
            parts[name] = [_hash(item) for item in value]
        else:
            parts[name] = _hash(value)
    return parts


def fingerprint_changes(recorded: JSONValue, request: object) -> tuple[str, ...]:
    """What differs between a recorded fingerprint and ``request``, as JSON paths (none: same)."""
    now = request_json(request)
    current = fingerprint(request)
    before: Mapping[str, Any] = recorded if isinstance(recorded, dict) else {}
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
