"""Naming rules shared by function tools and hosted tools."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["TOOL_NAME_PATTERN", "description_problem", "tool_name_problem"]

TOOL_NAME_PATTERN = re.compile(r"^[a-z0-9_-]{1,64}$")
"""Tool names: 1-64 lowercase ASCII letters, digits, underscores or hyphens."""

_MAX_DESCRIPTION = 200


def tool_name_problem(name: object) -> str | None:
    """Say what is wrong with a tool name, or return None when it is valid."""
    if not isinstance(name, str):
        return f"tool name must be a string, got {type(name).__name__}"
    if TOOL_NAME_PATTERN.fullmatch(name) is None:
        return (
            f"tool name {name!r} must match {TOOL_NAME_PATTERN.pattern} "
            "(1-64 lowercase letters, digits, '_' or '-')"
        )
    return None


def description_problem(description: object) -> str | None:
    """Say what is wrong with a tool description, or return None when it is valid."""
    if not isinstance(description, str):
        return f"description must be a string, got {type(description).__name__}"
    if not 1 <= len(description) <= _MAX_DESCRIPTION:
        return f"description must be 1-{_MAX_DESCRIPTION} characters, got {len(description)}"
    if not description.isascii():
        return _non_ascii_problem(description)
    return None


def _non_ascii_problem(description: str) -> str:
    index, character = next(
        (index, character) for index, character in enumerate(description) if not character.isascii()
    )
    # Accents decompose into a base letter and a combining mark; dropping the marks
    # gives a usable ASCII spelling for most Latin text.
    plain = unicodedata.normalize("NFKD", description).encode("ascii", "ignore").decode()
    suggestion = f", e.g. {plain!r}" if plain.strip() else ""
    return (
        f"description must be ASCII, so that every provider receives it unchanged; "
        f"{character!r} at index {index} is not: write it in plain ASCII{suggestion}"
    )
