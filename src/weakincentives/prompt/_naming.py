"""Naming rules shared by function tools and hosted tools."""

from __future__ import annotations

import re

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
        return "description must be ASCII"
    return None
