"""The JSON-shaped alias the discovery package uses for schemas and arguments.

It mirrors ``weakincentives.serde.JSONValue`` exactly; it lives here only
until the serde package exports its alias, so discovery imports nothing from
a module that is still being written.
"""

from __future__ import annotations

__all__ = ["JSONValue"]

type JSONValue = bool | int | float | str | list[JSONValue] | dict[str, JSONValue] | None
"""Any value the standard ``json`` module reads or writes."""
