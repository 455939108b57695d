"""JSON-shaped type aliases, below every layer so that errors can carry JSON too."""

from __future__ import annotations

__all__ = ["JSONObject", "JSONValue"]

type JSONValue = bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None
"""Any value the standard ``json`` module reads or writes."""

type JSONObject = dict[str, JSONValue]
"""A JSON object, such as a JSON Schema document or a dumped dataclass."""
