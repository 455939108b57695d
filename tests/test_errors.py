"""The error hierarchy keeps context in attributes and in messages."""

from __future__ import annotations

import pytest

from weakincentives import errors


@pytest.mark.parametrize(
    "error",
    [
        errors.PromptValidationError("bad"),
        errors.PromptRenderError("bad"),
        errors.ToolValidationError("bad"),
        errors.ToolResultError("bad"),
        errors.ParseError(path="$", expected="int", got="str"),
        errors.SchemaError("bad"),
        errors.ConfigValidationError("bad"),
        errors.PromptEvaluationError("bad", prompt_name="p", phase="request"),
        errors.SessionError("bad"),
        errors.CatalogError("bad"),
        errors.CursorError("bad", cursor="x"),
        errors.StoreUsageError("bad"),
        errors.StoreDatabaseError(operation="append", location="x.db", reason="locked"),
        errors.SchemaVersionError(location="x.db", found=2, supported=1),
        errors.FormatVersionError(record="event 1 of session 's'", found=2, supported=1),
        errors.DocumentError(record="event 0", reason="NaN"),
        errors.StoredRowError(record="event 1 of session 's'", reason="its seq is -1"),
        errors.CheckpointConflictError(evaluation_id="e", round=1, stored_round=2),
        errors.EvaluationUnreachableError(evaluation_id="e", operation="cancel", reason="gone"),
        errors.ApprovalConflictError(
            evaluation_id="e", call_id="c", decision="denied", stored_decision="approved"
        ),
        errors.UnknownApprovalError(evaluation_id="e", call_id="c"),
    ],
)
def test_every_error_derives_from_the_root(error: errors.WinkError) -> None:
    """`except WinkError` catches anything the library raises."""
    assert isinstance(error, errors.WinkError)
    assert str(error) == error.message


def test_combine_flattens_problems_and_keeps_the_first_context() -> None:
    """Several construction problems are reported at once, each kept apart."""
    first = errors.PromptValidationError("a", section_path=("x",), placeholder="p")
    second = errors.PromptValidationError("b", tool_name="t")
    combined = errors.PromptValidationError.combine([first, second], subject="prompt 'demo'")
    assert combined.message == "2 problems in prompt 'demo':\n- a\n- b"
    assert combined.problems == (first, second)
    assert combined.section_path == ("x",)
    assert combined.placeholder == "p"


def test_combine_of_one_problem_is_that_problem() -> None:
    """A single problem is not wrapped."""
    only = errors.PromptValidationError("a")
    assert errors.PromptValidationError.combine([only], subject="s") is only


def test_combine_needs_a_problem() -> None:
    """Combining nothing is a programming error, not an empty report."""
    with pytest.raises(ValueError, match="at least one"):
        errors.PromptValidationError.combine([], subject="s")


def test_parse_error_names_path_expectation_and_type() -> None:
    """A parse error says what was expected, what came, where, and for which type."""

    class Target:
        pass

    error = errors.ParseError(
        path="$.items[2].name", expected="str", got="int", dataclass_type=Target
    )
    assert error.message == "expected str, got int at $.items[2].name while parsing Target"
    assert (error.path, error.expected, error.got) == ("$.items[2].name", "str", "int")


def test_evaluation_error_message_leads_with_phase_and_prompt() -> None:
    """The phase and prompt name appear in the message and as attributes."""
    error = errors.PromptEvaluationError(
        "HTTP 500", prompt_name="demo", phase="request", provider_payload={"status": 500}
    )
    assert error.message == "[request] prompt 'demo': HTTP 500"
    assert error.phase == "request"
    assert error.provider_payload == {"status": 500}
