"""Errors across the process boundary: typed errors out of activities, and back in.

An activity that fails with a library error raises it as an ``ApplicationError`` whose
``type`` is the error's class name and whose first detail holds its context, marked
non-retryable unless it is a retryable ``ProviderError`` (a delay the provider asked for
becomes ``next_retry_delay``). Temporal's retry policy does the retrying; when it gives
up, the workflow turns the failure back into the typed error, and the loop publishes
``PromptFailed`` as it does in process. The workflow itself ends with a non-retryable
``EvaluationFailed`` error that the client reads back as ``EvaluationFailedError``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

from temporalio.client import WorkflowFailureError
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    CancelledError,
    TerminatedError,
    TimeoutError,
)

from weakincentives.errors import (
    EvaluationFailedError,
    PayloadTooLargeError,
    PromptEvaluationError,
    ProviderError,
)
from weakincentives.runtime import PromptFailed

__all__ = [
    "EVALUATION_FAILED",
    "activity_failure",
    "client_failure",
    "step_failure",
    "workflow_failure",
]

EVALUATION_FAILED = "EvaluationFailed"
"""The ``ApplicationError`` type a failed evaluation's workflow ends with."""


def activity_failure(error: PromptEvaluationError) -> ApplicationError:
    """``error`` as an activity's failure: retryable only for a retryable provider error."""
    details: dict[str, Any] = {"phase": error.phase, "message": error.reason}
    retryable = False
    delay: timedelta | None = None
    if isinstance(error, ProviderError):
        retryable = error.retryable
        details |= {
            "message": error.detail,  # the failure alone: the rest is rebuilt from fields
            "status_code": error.status_code,
            "retry_after": error.retry_after,
            "retryable": error.retryable,
            "endpoint": error.endpoint,
            "attempts": error.attempts,
            "hint": error.hint,
        }
        if error.retryable and error.retry_after is not None and error.retry_after >= 0:
            delay = timedelta(seconds=error.retry_after)
    if isinstance(error, PayloadTooLargeError):
        details |= {"payload": error.payload, "size": error.size, "limit": error.limit}
    return ApplicationError(
        error.reason,
        details,
        type=type(error).__name__,
        non_retryable=not retryable,
        next_retry_delay=delay,
    )


def step_failure(
    error: ActivityError, *, prompt_name: str, step: str, phase: Literal["request", "tool"]
) -> PromptEvaluationError:
    """The typed error behind a failed activity (``step`` says which, for the message)."""
    cause = error.cause
    details = cause.details if isinstance(cause, ApplicationError) else ()
    context = details[0] if details and isinstance(details[0], dict) else None
    if isinstance(cause, ApplicationError) and context is not None:
        message = str(context.get("message", cause.message))
        if cause.type == "ProviderError":
            return ProviderError(
                message,
                prompt_name=prompt_name,
                status_code=context.get("status_code"),
                retry_after=context.get("retry_after"),
                retryable=bool(context.get("retryable")),
                phase="response" if context.get("phase") == "response" else "request",
                endpoint=context.get("endpoint"),
                attempts=int(context.get("attempts", 1)),
                hint=context.get("hint"),
            )
        if cause.type == "PayloadTooLargeError":
            return PayloadTooLargeError(
                prompt_name=prompt_name,
                payload=str(context["payload"]),
                size=int(context["size"]),
                limit=int(context["limit"]),
                phase="response",
            )
        return PromptEvaluationError(
            message, prompt_name=prompt_name, phase=context.get("phase", phase)
        )
    if isinstance(cause, TimeoutError):
        kind = "" if cause.type is None else f" ({cause.type.name.lower().replace('_', '-')})"
        reason = f"{step} timed out{kind}"
    else:
        reason = f"{step} failed: {cause if cause is not None else error}"
    return PromptEvaluationError(reason, prompt_name=prompt_name, phase=phase)


def workflow_failure(failure: PromptFailed | None, error: Exception) -> ApplicationError:
    """How the workflow of an evaluation that raised ``error`` ends (never retried)."""
    if failure is not None:
        details = {
            "phase": failure.phase,
            "message": failure.message,
            "error_type": failure.error_type,
        }
    else:  # it failed before the loop started (the input or the prompt's params)
        phase = error.phase if isinstance(error, PromptEvaluationError) else "internal"
        details = {"phase": phase, "message": str(error), "error_type": type(error).__name__}
    return ApplicationError(details["message"], details, type=EVALUATION_FAILED, non_retryable=True)


def client_failure(evaluation_id: str, error: WorkflowFailureError) -> EvaluationFailedError:
    """The ``EvaluationFailedError`` for a workflow that did not complete."""
    cause = error.cause
    if isinstance(cause, ApplicationError) and cause.type == EVALUATION_FAILED and cause.details:
        details = cause.details[0]
        return EvaluationFailedError(
            evaluation_id=evaluation_id,
            phase=str(details["phase"]),
            reason=str(details["message"]),
            error_type=str(details["error_type"]),
        )
    if isinstance(cause, CancelledError):
        phase, reason = "cancelled", "the workflow was cancelled"
    elif isinstance(cause, TimeoutError):
        phase, reason = "request", "its deadline passed: the workflow timed out"
    elif isinstance(cause, TerminatedError):
        phase, reason = "internal", f"the workflow was terminated: {cause.message}"
    else:
        phase, reason = "internal", str(cause if cause is not None else error)
    name = type(cause).__name__ if cause is not None else type(error).__name__
    return EvaluationFailedError(
        evaluation_id=evaluation_id, phase=phase, reason=reason, error_type=name
    )
