"""The final answer: telling the model its shape, and what to say when it does not fit."""

from __future__ import annotations

import json
from collections.abc import Callable

from weakincentives.adapters._structured import OutputSchema

__all__ = ["OutputInstructions", "feedback_for", "render_output_instructions"]

type OutputInstructions = Callable[[OutputSchema], str]
"""Renders the text appended to the prompt that states the expected answer shape."""


def render_output_instructions(schema: OutputSchema) -> str:
    """The default statement of the answer shape: a short heading and the JSON Schema.

    The schema also travels in the request's format field; this copy is for servers
    that ignore that field, and for models that read the prompt more closely than the
    request options.
    """
    shape = json.dumps(schema.schema, ensure_ascii=False, separators=(",", ":"))
    return (
        "## Response format\n\n"
        "Reply with one JSON value only (no prose, no code fence) that matches this JSON "
        f"Schema:\n\n{shape}"
    )


def feedback_for(problem: str, *, remaining: int) -> str:
    """What the model reads after an answer that did not fit the output type."""
    tries = "this is your last try" if remaining == 0 else f"{remaining + 1} tries left"
    return (
        f"Your answer could not be used: {problem}. Reply again with only the JSON value "
        f"the response format asks for ({tries})."
    )
