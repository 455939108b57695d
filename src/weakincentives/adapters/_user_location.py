"""The approximate user location both providers' web search tools take, in one shape.

OpenAI's ``WebSearchToolParam.user_location`` and Anthropic's
``web_search_tool_20250305_param.UserLocation`` agree: ``type: approximate`` with
optional ``city``, ``region``, ``country`` (ISO 3166-1 alpha-2) and ``timezone`` (IANA).
"""

from __future__ import annotations

from weakincentives.serde import JSONValue
from weakincentives.tools import GeoHint

__all__ = ["approximate_location"]


def approximate_location(hint: GeoHint) -> dict[str, JSONValue]:
    """The ``user_location`` object for ``hint``, naming only the fields it sets."""
    location: dict[str, JSONValue] = {"type": "approximate"}
    for wire_name, value in (
        ("city", hint.city),
        ("region", hint.region),
        ("country", hint.country_code),
        ("timezone", hint.timezone),
    ):
        if value is not None:
            location[wire_name] = value
    return location
