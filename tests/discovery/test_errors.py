"""DiscoveryError and its model-facing DiscoveryFailure."""

from __future__ import annotations

from weakincentives.discovery import DiscoveryError, DiscoveryFailure, Hint
from weakincentives.errors import WinkError
from weakincentives.serde import SchemaViolation


def test_the_error_carries_the_protocol_fields_and_converts_to_a_failure() -> None:
    """to_failure copies code, message, hints, next_action and violations."""
    hint = Hint(kind="tool", path=("A",), tool_id="a.b", summary="does b")
    violation = SchemaViolation(path="$.x", message="expected string, got integer")
    error = DiscoveryError(
        "arguments for 'a.b' are invalid",
        code="INVALID_ARGUMENTS",
        hints=(hint,),
        next_action="fix and retry",
        tool_id="a.b",
        violations=(violation,),
    )
    assert isinstance(error, WinkError)
    assert str(error) == "INVALID_ARGUMENTS: arguments for 'a.b' are invalid"
    assert error.message == "arguments for 'a.b' are invalid"
    assert error.to_failure() == DiscoveryFailure(
        code="INVALID_ARGUMENTS",
        message="arguments for 'a.b' are invalid",
        hints=(hint,),
        next_action="fix and retry",
        violations=(violation,),
    )
    assert (error.tool_id, error.path) == ("a.b", None)
