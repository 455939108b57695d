"""The status of a hosted tool's work in one response, from the status of each run."""

from __future__ import annotations

from collections.abc import Collection
from typing import Literal

__all__ = ["overall_status"]


def overall_status(statuses: Collection[str]) -> Literal["completed", "partial", "failed"]:
    """``completed`` if every run completed, ``failed`` if none did, else ``partial``."""
    completed = sum(status == "completed" for status in statuses)
    if completed == len(statuses):
        return "completed"
    return "failed" if completed == 0 else "partial"
