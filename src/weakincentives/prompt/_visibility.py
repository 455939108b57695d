"""Section visibility and the path type that addresses sections."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

__all__ = ["SectionPath", "SectionVisibility", "VisibilityOverrides", "dotted", "parse_dotted"]

type SectionPath = tuple[str, ...]
"""The keys from the root section down to a section, e.g. ``("context", "examples")``."""


class SectionVisibility(StrEnum):
    """How much of a section the model sees."""

    FULL = "full"
    """The section's full template and its children."""
    SUMMARY = "summary"
    """Only the section's summary, with a note on how to open it; children are hidden."""


type VisibilityOverrides = Mapping[SectionPath, SectionVisibility]
"""Visibility per full section path, overriding what sections declare."""


def dotted(path: SectionPath) -> str:
    """Join a section path with dots, the form the model sees (``context.examples``)."""
    return ".".join(path)


def parse_dotted(key: str) -> SectionPath:
    """Split a dot-notation section key into a path; blank segments give an empty path."""
    parts = tuple(part.strip() for part in key.split("."))
    return () if any(not part for part in parts) else parts
