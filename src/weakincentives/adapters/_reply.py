"""Small readers every provider's reply parser shares: counts, nested fields, usage, the error."""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.errors import PromptEvaluationError, ResponseTruncatedError
from weakincentives.runtime import TokenUsage
from weakincentives.serde import JSONValue

__all__ = ["count", "malformed", "nested", "openai_usage", "truncated"]


def count(value: JSONValue) -> int:
    """A token count; anything but a non-negative integer (booleans included) counts as 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def nested(data: Mapping[str, JSONValue], outer: str, inner: str) -> JSONValue:
    """``data[outer][inner]``, or None when either level is missing or not an object."""
    value = data.get(outer)
    return value.get(inner) if isinstance(value, dict) else None


def openai_usage(usage: JSONValue, *, input_field: str, output_field: str) -> TokenUsage:
    """Token counts from an OpenAI-style ``usage`` object (zeros when it is missing).

    Both OpenAI APIs name the counts differently (``input_tokens`` in the Responses API,
    ``prompt_tokens`` in Chat Completions) but nest the details alike: cached tokens
    under ``<input_field>_details`` and reasoning tokens under ``<output_field>_details``.
    """
    if not isinstance(usage, dict):
        return TokenUsage()
    return TokenUsage(
        input_tokens=count(usage.get(input_field)),
        output_tokens=count(usage.get(output_field)),
        cached_input_tokens=count(nested(usage, f"{input_field}_details", "cached_tokens")),
        reasoning_tokens=count(nested(usage, f"{output_field}_details", "reasoning_tokens")),
    )


def malformed(
    reason: str, payload: Mapping[str, JSONValue], prompt_name: str
) -> PromptEvaluationError:
    """Phase ``response``: the reply is not in the shape the provider documents."""
    return PromptEvaluationError(
        f"cannot interpret the provider's reply: {reason}",
        prompt_name=prompt_name,
        phase="response",
        provider_payload=payload,
    )


def truncated(
    cap: int | None, said: str, payload: Mapping[str, JSONValue], prompt_name: str
) -> ResponseTruncatedError:
    """Phase ``response``: the reply stopped at the output-token cap ``cap`` (if known).

    ``said`` is empty when the provider reported the cut itself, else how the provider
    labelled a reply that used every token it was allowed (`` (the server said ...)``).
    """
    shown = f" of {cap} tokens" if cap is not None else ""
    return ResponseTruncatedError(
        f"the reply was cut off at the output-token limit{shown}{said}; raise "
        "LoopSettings.max_output_tokens or ask for a shorter answer",
        prompt_name=prompt_name,
        limit=cap,
        provider_payload=payload,
    )
