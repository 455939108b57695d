"""JSON-shaped type aliases shared by the serde package and its callers (defined below errors)."""

from __future__ import annotations

from weakincentives._json_value import JSONObject, JSONValue

__all__ = ["JSONObject", "JSONValue"]
