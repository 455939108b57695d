"""Small readers every provider's reply parser shares: counts, nested fields, the error."""

from __future__ import annotations

from collections.abc import Mapping

from weakincentives.errors import PromptEvaluationError
from weakincentives.serde import JSONValue

__all__ = ["count", "malformed", "nested"]


def count(value: JSONValue) -> int:
    """A token count; anything but a non-negative integer (booleans included) counts as 0."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return 0


def nested(data: Mapping[str, JSONValue], outer: str, inner: str) -> JSONValue:
    """``data[outer][inner]``, or None when either level is missing or not an object."""
    value = data.get(outer)
    return value.get(inner) if isinstance(value, dict) else None


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
