"""Small helpers for reading nested JSON in the serde tests."""

from __future__ import annotations

from weakincentives.serde import JSONValue


def at(document: JSONValue, *keys: str | int) -> JSONValue:
    """The value at ``keys`` inside ``document``; KeyError if the shape differs."""
    for key in keys:
        if isinstance(document, dict) and isinstance(key, str):
            document = document[key]
            continue
        if isinstance(document, list) and isinstance(key, int):
            document = document[key]
            continue
        raise KeyError(key)
    return document
