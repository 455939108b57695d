"""The structured output a prompt declares: a dataclass, a list of them, or plain text."""

from __future__ import annotations

import typing
from dataclasses import dataclass, is_dataclass
from typing import Any, Literal

__all__ = ["StructuredOutput", "structured_output_of"]


@dataclass(frozen=True, slots=True, kw_only=True)
class StructuredOutput:
    """How to ask for, and parse, a prompt's structured answer."""

    dataclass_type: type[Any]
    """The dataclass the answer (or each answer item) parses into."""
    container: Literal["object", "array"]
    """``object`` for ``Prompt[Answer]``, ``array`` for ``Prompt[list[Answer]]``."""


def structured_output_of(output_type: object) -> StructuredOutput | None:
    """Interpret a declared output type; None means a text-only prompt.

    Raises:
        TypeError: the type is neither None, ``str``, a dataclass, nor a list of dataclasses.
    """
    if output_type is None or output_type is str or output_type is type(None):
        return None
    if isinstance(output_type, type) and is_dataclass(output_type):
        return StructuredOutput(dataclass_type=output_type, container="object")
    if typing.get_origin(output_type) is list:
        (item,) = typing.get_args(output_type)
        if isinstance(item, type) and is_dataclass(item):
            return StructuredOutput(dataclass_type=item, container="array")
    raise TypeError(
        f"output type {output_type!r} must be a dataclass, a list of dataclasses, str or None"
    )
