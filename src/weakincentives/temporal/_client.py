"""The client side: start evaluations, decide approvals, cancel, read events and results."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast
from uuid import UUID

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.service import RPCError

from weakincentives.adapters import Disclosure, PromptResponse
from weakincentives.errors import ConfigValidationError, EvaluationUnreachableError
from weakincentives.prompt import Prompt, PromptTemplate, SectionVisibility, VisibilityOverrides
from weakincentives.runtime import ToolCall
from weakincentives.serde import parse_typed
from weakincentives.temporal._documents import check_after, read_decision, start_document
from weakincentives.temporal._failures import client_failure
from weakincentives.temporal._options import Check, refuse_wrong
from weakincentives.temporal._payloads import DEFAULT_PAYLOAD_LIMIT, check_limit, check_size
from weakincentives.temporal._workflow import WORKFLOW_NAME

__all__ = ["EvaluationClient", "EvaluationHandle"]


class EvaluationHandle[OutputT]:
    """One evaluation running as a workflow (its id is the workflow id)."""

    __slots__ = ("_handle",)

    def __init__(self, handle: WorkflowHandle[Any, Any]) -> None:
        self._handle = handle

    @property
    def evaluation_id(self) -> str:
        """The evaluation's id: its workflow id, and the ``evaluation_id`` of its events."""
        return self._handle.id

    async def result(self) -> PromptResponse[OutputT]:
        """Wait for the response.

        Raises ``EvaluationFailedError`` when the evaluation failed, was cancelled or
        timed out (its ``phase``, ``reason`` and ``error_type`` say how).
        """
        try:
            text = await self._handle.result()
        except WorkflowFailureError as error:
            raise client_failure(self.evaluation_id, error) from error
        except RPCError as error:
            raise self._unreachable("wait for", error) from error
        return cast("PromptResponse[OutputT]", PromptResponse.from_json(str(text)))

    async def decide(self, call_id: str, *, approved: bool, message: str | None = None) -> None:
        """Decide on a call waiting for approval (the ``decide`` signal).

        The first decision on a call stands. A denied call reaches the model as a failed
        result with ``message``. A decision sent before the evaluation asks is kept. A
        ``call_id`` that is not a non-empty string, an ``approved`` that is not a bool or
        a ``message`` that is not a string is a ``ConfigValidationError`` (the workflow
        would ignore the signal).
        """
        decision = {"call_id": call_id, "approved": approved, "message": message}
        read_decision(decision)
        try:
            await self._handle.signal("decide", decision)
        except RPCError as error:
            raise self._unreachable("decide on a call of", error) from error

    async def pending_approvals(self) -> tuple[ToolCall, ...]:
        """The calls waiting for a decision now (a query: a worker must be running)."""
        try:
            waiting = await self._handle.query("pending_approvals")
        except RPCError as error:
            raise self._unreachable("query", error) from error
        return tuple(parse_typed(ToolCall, call) for call in waiting)

    async def events(self, *, after: int = 0) -> tuple[object, ...]:
        """The events the evaluation published, after the first ``after`` (a query).

        They are those an in-process evaluation publishes, in the same order, typed
        again in this process; apply them to a ``Session`` to reduce them there.
        Answered during the evaluation and after it ended, while a worker runs. An
        ``after`` that is not an int of 0 or more is a ``ConfigValidationError``.
        """
        after = check_after(after)
        try:
            published = await self._handle.query("events", after)
        except RPCError as error:
            raise self._unreachable("query", error) from error
        return tuple(parse_typed(object, event) for event in published)

    async def cancel(self) -> None:
        """Ask the workflow to cancel.

        The evaluation ends with ``PromptFailed`` phase ``cancelled``, and :meth:`result`
        raises ``EvaluationFailedError``.
        """
        try:
            await self._handle.cancel()
        except RPCError as error:
            raise self._unreachable("cancel", error) from error

    def _unreachable(self, operation: str, error: RPCError) -> EvaluationUnreachableError:
        """The server refused ``operation``: no such evaluation, or it has ended."""
        return EvaluationUnreachableError(
            evaluation_id=self.evaluation_id, operation=operation, reason=error.message
        )


class EvaluationClient:
    """Starts evaluations on the workers of ``task_queue``, through a Temporal ``client``."""

    __slots__ = ("_client", "_payload_limit", "_task_queue")

    def __init__(
        self, client: Client, *, task_queue: str, payload_limit: int = DEFAULT_PAYLOAD_LIMIT
    ) -> None:
        if not isinstance(task_queue, str) or not task_queue:
            raise ConfigValidationError(
                f"task_queue must be a non-empty string, got {task_queue!r}",
                field_name="task_queue",
                value=task_queue,
            )
        check_limit(payload_limit)
        self._client = client
        self._task_queue = task_queue
        self._payload_limit = payload_limit

    async def start[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        evaluation_id: str | None = None,
        session_id: UUID | None = None,
        deadline: datetime | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        disclosure: Disclosure | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> EvaluationHandle[OutputT]:
        """Start evaluating ``prompt`` (registered with the workers by its ``ns``/``key``).

        ``params`` are bound to the prompt and sent with it (serde typed values: their
        classes must be importable by the workers). ``evaluation_id`` is the workflow
        id (default: a new UUID); ``session_id`` the id of the session its events
        name. ``deadline`` (aware) bounds the evaluation, as in process, and, 5 s later,
        the workflow (its execution timeout). ``extras`` must be data; give clients to the worker.
        """
        _check_start(
            evaluation_id=evaluation_id,
            session_id=session_id,
            deadline=deadline,
            overrides=visibility_overrides,
            disclosure=disclosure,
            extras=extras,
        )
        bound = _as_prompt(prompt).bind(*params)
        document = start_document(
            bound,
            session_id=session_id if session_id is not None else uuid.uuid4(),
            deadline=deadline,
            overrides=visibility_overrides,
            disclosure=disclosure,
            extras=extras,
        )
        check_size(
            document,
            limit=self._payload_limit,
            prompt_name=bound.name,
            payload="the workflow input",
        )
        timeout = None
        if deadline is not None:
            if deadline.tzinfo is None:
                raise ConfigValidationError(
                    f"deadline {deadline.isoformat()} has no timezone; pass an aware datetime",
                    field_name="deadline",
                    value=deadline,
                )
            timeout = max(deadline - datetime.now(UTC), timedelta(0)) + DEADLINE_GRACE
        handle = await self._client.start_workflow(
            WORKFLOW_NAME,
            document,
            id=evaluation_id if evaluation_id is not None else uuid.uuid4().hex,
            task_queue=self._task_queue,
            execution_timeout=timeout,
        )
        return EvaluationHandle(handle)

    async def evaluate[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        **options: Any,
    ) -> PromptResponse[OutputT]:
        """Start evaluating ``prompt`` and wait for its response (see :meth:`start`)."""
        handle: EvaluationHandle[OutputT] = await self.start(prompt, *params, **options)
        return await handle.result()

    def handle(self, evaluation_id: str) -> EvaluationHandle[Any]:
        """The evaluation started with ``evaluation_id``, from any process."""
        return EvaluationHandle(self._client.get_workflow_handle(evaluation_id))


DEADLINE_GRACE = timedelta(seconds=5)
"""Added to a deadline to make the workflow's execution timeout: the loop reports its own
deadline (``PromptFailed``, with the phase it was in) and the timeout stops a workflow
that cannot, such as one waiting on an activity that never returns."""


def _check_start(
    *,
    evaluation_id: object,
    session_id: object,
    deadline: object,
    overrides: object,
    disclosure: object,
    extras: object,
) -> None:
    """Refuse ``start`` arguments of the wrong kind, naming them, before anything is sent."""
    checks: tuple[Check, ...] = (
        (
            "evaluation_id",
            evaluation_id,
            "a non-empty string or None",
            evaluation_id is not None and not (isinstance(evaluation_id, str) and evaluation_id),
        ),
        ("session_id", session_id, "a UUID or None", not isinstance(session_id, UUID | None)),
        ("deadline", deadline, "a datetime or None", not isinstance(deadline, datetime | None)),
        (
            "visibility_overrides",
            overrides,
            "a mapping of section paths (tuples of keys) to SectionVisibility, or None",
            overrides is not None
            and not (
                isinstance(overrides, Mapping)
                and all(
                    isinstance(path, tuple)
                    and all(isinstance(part, str) for part in path)
                    and isinstance(visibility, SectionVisibility)
                    for path, visibility in overrides.items()
                )
            ),
        ),
        (
            "disclosure",
            disclosure,
            "a Disclosure or None",
            not isinstance(disclosure, Disclosure | None),
        ),
        (
            "extras",
            extras,
            "a mapping with string keys, or None",
            extras is not None
            and not (isinstance(extras, Mapping) and all(isinstance(name, str) for name in extras)),
        ),
    )
    refuse_wrong(checks)


def _as_prompt[OutputT](prompt: Prompt[OutputT] | PromptTemplate[OutputT]) -> Prompt[OutputT]:
    return Prompt(prompt) if isinstance(prompt, PromptTemplate) else prompt
