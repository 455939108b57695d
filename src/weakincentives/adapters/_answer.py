"""The final answer: telling the model its shape, and what to say when it does not fit."""

from __future__ import annotations

import json
from collections.abc import Callable

from weakincentives.adapters._structured import OutputSchema

__all__ = [
    "TOOLS_FIRST",
    "OutputInstructions",
    "empty_answer_feedback",
    "feedback_for",
    "final_answer_request",
    "render_output_instructions",
]

type OutputInstructions = Callable[[OutputSchema], str]
"""Renders the text that states the expected answer shape."""

TOOLS_FIRST = (
    "## Response format\n\n"
    "First call the tools you need, one reply per call, and wait for their results. When "
    "you have what you need, say so in a sentence or two with what you found; you will "
    "then be asked for the final answer in a JSON format."
)
"""Appended instead of the answer shape while tools are offered (``answer_schema``
``without_tools``): a small model shown the schema with its tools tends to fill it in at
once, inventing what the tools would have said (measured on Qwen2.5-Coder-1.5B, see
``docs/local-models.md``); the shape comes with the final turn's request."""


def render_output_instructions(schema: OutputSchema) -> str:
    """The default statement of the answer shape: a short heading and the JSON Schema.

    It goes at the end of the prompt, or in the message that asks for the final answer
    after the tools (``LoopSettings.answer_schema``). The schema also travels in the
    request's format field when the loop sends it there; this copy is for servers that
    ignore that field, and for models that read the prompt more closely than the
    request options.
    """
    shape = json.dumps(schema.schema, ensure_ascii=False, separators=(",", ":"))
    return (
        "## Response format\n\n"
        "Reply with one JSON value only (no prose, no code fence) that matches this JSON "
        f"Schema:\n\n{shape}"
    )


def final_answer_request(schema: OutputSchema, instructions: OutputInstructions | None) -> str:
    """The message that opens the tools-free final turn: answer now, in this shape."""
    ask = "You are done with the tools. Now give your final answer, based on their results."
    return ask if instructions is None else f"{ask}\n\n{instructions(schema)}"


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
