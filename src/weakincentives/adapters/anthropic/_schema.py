"""The output schema in the JSON Schema subset Anthropic's JSON outputs accept.

Anthropic constrains ``output_config.format`` to a subset narrower than OpenAI's strict
mode (see the ``anthropic`` SDK's ``lib/_parse/_transform.py``): objects need
``additionalProperties: false``; numeric bounds, string patterns, ``default``, array
sizes other than ``minItems`` 0 or 1 and most ``format`` values are not accepted.
Those keywords are moved into the description as a note for the model instead of
being sent as constraints; the answer is still validated against the full output
type when it comes back, so a reply that breaks them gets the usual retry.
"""

from __future__ import annotations

import json

from weakincentives.serde import JSONObject, JSONValue

__all__ = ["anthropic_schema"]

_KEPT = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "allOf",
        "enum",
        "const",
        "$defs",
        "$ref",
        "description",
        "title",
    }
)
_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}
)
_SCHEMA_MAPS = frozenset({"properties", "$defs"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf"})


def anthropic_schema(schema: JSONObject) -> JSONObject:
    """``schema`` with every keyword outside Anthropic's subset moved into its description."""
    kept: JSONObject = {}
    moved: dict[str, JSONValue] = {}
    for key, value in schema.items():
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            kept[key] = {
                name: anthropic_schema(sub) if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            kept[key] = [anthropic_schema(sub) if isinstance(sub, dict) else sub for sub in value]
        elif key == "items" and isinstance(value, dict):
            kept[key] = anthropic_schema(value)
        elif _supported(key, value):
            kept[key] = value
        else:
            moved[key] = value
    if moved:
        note = "Constraints: " + ", ".join(
            f"{key}={json.dumps(value)}" for key, value in moved.items()
        )
        description = kept.get("description")
        kept["description"] = f"{description}\n\n{note}" if isinstance(description, str) else note
    return kept


def _supported(key: str, value: JSONValue) -> bool:
    if key == "format":
        return value in _FORMATS
    if key == "minItems":
        return value in (0, 1)
    return key in _KEPT
