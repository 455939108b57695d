"""The one way the Temporal client and worker refuse arguments of the wrong kind."""

from __future__ import annotations

from collections.abc import Iterable

from weakincentives._bounded import clip
from weakincentives.errors import ConfigValidationError

__all__ = ["Check", "refuse_wrong"]

type Check = tuple[str, object, str, bool]
"""``(name, value, what it must be, whether it is wrong)``."""


def refuse_wrong(checks: Iterable[Check]) -> None:
    """Raise for the first wrong argument, naming it, what it must be and what it is."""
    for name, value, wanted, wrong in checks:
        if wrong:
            raise ConfigValidationError(
                f"{name} must be {wanted}, got {clip(repr(value), 80)}",
                field_name=name,
                value=value,
            )
