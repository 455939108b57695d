"""The structured output a prompt declares: a dataclass, a list of them, or plain text."""

from __future__ import annotations

import typing
from dataclasses import dataclass, is_dataclass
from typing import Any, Literal

__all__ = ["DeclaredOutput", "StructuredOutput", "structured_output_of"]


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


class DeclaredOutput:
    """``output_type`` and ``structured_output`` of a template or prompt, analysed once.

    ``_output`` holds the declared type and how it is requested and parsed (see
    ``output_contract`` in ``_template``).
    """

    __slots__ = ()
    _output: tuple[object, StructuredOutput | None]

    @property
    def output_type(self) -> object:
        """The declared output type (``PromptTemplate[Answer]``); None for text-only prompts."""
        return self._output[0]

    @property
    def structured_output(self) -> StructuredOutput | None:
        """How to request and parse the structured answer; None for text-only prompts."""
        return self._output[1]
