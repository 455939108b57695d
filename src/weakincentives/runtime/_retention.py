"""How much of its history a session keeps: a cap per slice, the oldest values dropped first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from weakincentives.errors import ConfigValidationError
from weakincentives.runtime._events import TextDelta

__all__ = ["DEFAULT_SLICE_LIMIT", "Retention"]

DEFAULT_SLICE_LIMIT = 10_000
"""Values a slice keeps by default: about 30 MB at the ~3 KB an evaluation event takes."""


def _default_per_type() -> Mapping[type[object], int | None]:
    # Streamed text arrives as many small deltas; UIs read them from the bus as they come,
    # and the final text is on PromptExecuted, so sessions do not keep them by default.
    return MappingProxyType({TextDelta: 0})


@dataclass(frozen=True, slots=True, kw_only=True)
class Retention:
    """How many values each slice of a session keeps; when a slice is full the oldest go.

    The default keeps the newest ``DEFAULT_SLICE_LIMIT`` (10,000) values of every slice
    and no ``TextDelta``s. ``None`` means unbounded; ``0`` means not recorded at all.
    """

    default: int | None = DEFAULT_SLICE_LIMIT
    """The cap for slices not named in ``per_type``."""
    per_type: Mapping[type[object], int | None] = field(default_factory=_default_per_type)
    """Caps by slice type, overriding ``default``."""

    def __post_init__(self) -> None:
        limits = {"default": self.default} | {
            getattr(kind, "__qualname__", repr(kind)): limit
            for kind, limit in self.per_type.items()
        }
        bad = {
            name: limit
            for name, limit in limits.items()
            if limit is not None
            and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0)
        }
        if bad:
            raise ConfigValidationError(
                "Retention limits must be None or integers >= 0, got "
                + ", ".join(f"{name}={limit!r}" for name, limit in bad.items()),
                config_type=Retention,
                value=bad,
            )

    @classmethod
    def unbounded(cls) -> Retention:
        """Keep everything, deltas included (the behaviour before retention existed)."""
        return cls(default=None, per_type=MappingProxyType({}))

    def limit_for(self, slice_type: type[object]) -> int | None:
        """The cap that applies to ``slice_type``."""
        return self.per_type.get(slice_type, self.default)
