"""The final answer: telling the model its shape, and what to say when it does not fit."""

from __future__ import annotations

import json
from collections.abc import Callable

from weakincentives.adapters._structured import OutputSchema

__all__ = [
    "OutputInstructions",
    "empty_answer_feedback",
    "feedback_for",
    "render_output_instructions",
]

type OutputInstructions = Callable[[OutputSchema], str]
"""Renders the text appended to the prompt that states the expected answer shape."""


def render_output_instructions(schema: OutputSchema) -> str:
    """The default statement of the answer shape: when to answer, and the JSON Schema.

    It says *when* before *what*: a model told only "reply with one JSON value" tends
    to answer at once, inventing what the tools would have told it. The schema also
    travels in the request's format field when the loop sends it there
    (``LoopSettings.answer_schema``); this copy is for the requests that leave it out,
    for servers that ignore that field, and for models that read the prompt more
    closely than the request options.
    """
    shape = json.dumps(schema.schema, ensure_ascii=False, separators=(",", ":"))
    return (
        "## Response format\n\n"
        "If tools are available, call the ones you need first and wait for their "
        "results; do not guess what a tool would return. Once you have what you need, "
        "reply with your final answer: one JSON value only (no prose, no code fence) "
        f"that matches this JSON Schema:\n\n{shape}"
    )


def feedback_for(problem: str, *, remaining: int) -> str:
    """What the model reads after an answer that did not fit the output type."""
    tries = "this is your last try" if remaining == 0 else f"{remaining + 1} tries left"
    return (
        f"Your answer could not be used: {problem}. Reply again with only the JSON value "
        f"the response format asks for ({tries})."
    )


def empty_answer_feedback(*, structured: bool, remaining: int) -> str:
    """What the model reads after a final answer with no text and no tool call."""
    tries = "this is your last try" if remaining == 0 else f"{remaining + 1} tries left"
    wanted = "the JSON value the response format asks for" if structured else "your answer"
    return f"Your reply was empty: it had no text and no tool call. Reply with {wanted} ({tries})."
