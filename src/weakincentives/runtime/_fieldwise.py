"""Records that add up field by field: token counts, costs."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Self

__all__ = ["FieldwiseSum"]


class FieldwiseSum:
    """A dataclass mixin: ``a + b`` is the record whose every field is ``a``'s plus ``b``'s.

    Summing over ``fields`` means a field added to the record later is summed too,
    where a hand-written ``__add__`` would silently leave it at its default.
    """

    __slots__ = ()

    def __add__(self, other: Self) -> Self:
        record: Any = self  # a dataclass instance: the subclasses are dataclasses
        return type(self)(
            **{
                name: getattr(self, name) + getattr(other, name)
                for name in (each.name for each in fields(record))
            }
        )
