"""The parts of weakincentives.temporal that need no server: checks, documents, errors."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    RetryState,
    TerminatedError,
    TimeoutError,
    TimeoutType,
)

from tests.temporal import agents
from weakincentives.adapters import Decision
from weakincentives.errors import (
    ConfigValidationError,
    EvaluationFailedError,
    PayloadTooLargeError,
    PromptEvaluationError,
    ProviderError,
)
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.temporal import (
    EvaluationClient,
    EvaluationWorker,
    _documents,
    _failures,
    _workflow,
)


def _activity_error(cause: BaseException) -> ActivityError:
    error = ActivityError(
        "activity failed",
        scheduled_event_id=1,
        started_event_id=2,
        identity="worker",
        activity_type="t/p#send",
        activity_id="1",
        retry_state=RetryState.MAXIMUM_ATTEMPTS_REACHED,
    )
    error.__cause__ = cause
    return error


def _round_trip(error: PromptEvaluationError) -> PromptEvaluationError:
    failure = _failures.activity_failure(error)
    return _failures.step_failure(
        _activity_error(failure), prompt_name="p", step="the request of round 1", phase="request"
    )


class TestActivityFailures:
    def test_a_retryable_provider_error_keeps_its_delay_and_comes_back_typed(self) -> None:
        """Retryable, with the delay the provider asked for; the workflow reads it back."""
        error = ProviderError(
            "slow down",
            prompt_name="p",
            status_code=429,
            retry_after=3.0,
            retryable=True,
            endpoint="POST https://api.example.com/v1/responses",
            attempts=2,
            hint="the provider is throttling",
        )
        failure = _failures.activity_failure(error)
        assert (failure.non_retryable, failure.next_retry_delay, failure.type) == (
            False,
            timedelta(seconds=3),
            "ProviderError",
        )
        back = _round_trip(error)
        assert isinstance(back, ProviderError)
        assert (back.status_code, back.retry_after, back.retryable, back.detail) == (
            429,
            3.0,
            True,
            "slow down",
        )
        assert (back.endpoint, back.attempts, back.hint) == (
            "POST https://api.example.com/v1/responses",
            2,
            "the provider is throttling",
        )
        assert back.reason == error.reason  # said once, not once per crossing

    def test_an_error_of_the_reply_is_not_retried(self) -> None:
        """Phase response, not retryable: it comes back with its phase."""
        error = PromptEvaluationError("garbled", prompt_name="p", phase="response")
        assert _failures.activity_failure(error).non_retryable
        back = _round_trip(error)
        assert (type(back), back.phase, back.reason) == (
            PromptEvaluationError,
            "response",
            "garbled",
        )

    def test_a_reply_over_the_limit_comes_back_as_payload_too_large(self) -> None:
        """Its size and limit survive the trip."""
        error = PayloadTooLargeError(
            prompt_name="p", payload="the reply of round 2", size=10, limit=5, phase="response"
        )
        back = _round_trip(error)
        assert isinstance(back, PayloadTooLargeError)
        assert (back.payload, back.size, back.limit, back.phase) == (
            "the reply of round 2",
            10,
            5,
            "response",
        )

    def test_a_timed_out_activity_names_the_step_and_the_timeout(self) -> None:
        """Retries used up on timeouts: a request error saying which timeout."""
        cause = TimeoutError(
            "timed out", type=TimeoutType.START_TO_CLOSE, last_heartbeat_details=()
        )
        error = _failures.step_failure(
            _activity_error(cause), prompt_name="p", step="the call 'c' of tool 't'", phase="tool"
        )
        assert (error.phase, error.reason) == (
            "tool",
            "the call 'c' of tool 't' timed out (start-to-close)",
        )

    def test_any_other_failure_is_reported_with_its_message(self) -> None:
        """An error of the worker's own code (not a library error) keeps its text."""
        error = _failures.step_failure(
            _activity_error(ApplicationError("boom", type="RuntimeError")),
            prompt_name="p",
            step="the request of round 1",
            phase="request",
        )
        assert (error.phase, error.reason) == (
            "request",
            "the request of round 1 failed: RuntimeError: boom",
        )


class TestClientFailures:
    @pytest.mark.parametrize(
        ("cause", "phase", "reason"),
        [
            (
                TimeoutError("t", type=None, last_heartbeat_details=()),
                "request",
                "its deadline passed: the workflow timed out",
            ),
            (TerminatedError("by hand"), "internal", "the workflow was terminated: by hand"),
            (ApplicationError("odd", type="Other"), "internal", "Other: odd"),
        ],
    )
    def test_a_workflow_that_did_not_complete_is_an_evaluation_failure(
        self, cause: BaseException, phase: str, reason: str
    ) -> None:
        """Timed out, terminated, or failed some other way: the phase says which."""
        error = _failures.client_failure("e-1", WorkflowFailureError(cause=cause))
        assert (error.evaluation_id, error.phase, error.reason, error.error_type) == (
            "e-1",
            phase,
            reason,
            type(cause).__name__,
        )
        assert str(error) == f"evaluation 'e-1' failed [{phase}] ({type(cause).__name__}): {reason}"

    def test_a_failure_before_the_loop_ran_has_the_error_s_phase(self) -> None:
        """No PromptFailed was published: the error itself says what went wrong."""
        failure = _failures.workflow_failure(
            None, PromptEvaluationError("bad params", prompt_name="p", phase="render")
        )
        back = _failures.client_failure("e-2", WorkflowFailureError(cause=failure))
        assert isinstance(back, EvaluationFailedError)
        assert (back.phase, back.error_type) == ("render", "PromptEvaluationError")
        assert back.reason == "[render] prompt 'p': bad params"


class TestDocuments:
    def test_an_input_of_another_format_is_refused(self) -> None:
        """A workflow input this library did not write names its format."""
        with pytest.raises(ConfigValidationError, match="format 2; this library reads format 1"):
            _documents.read_start({"format": 2})

    def test_extras_that_are_not_data_are_refused_at_start(self) -> None:
        """A client object cannot cross; the message says where it belongs."""
        with pytest.raises(ConfigValidationError, match="give values that are not data") as raised:
            _documents.start_document(
                agents.FLAKY,
                session_id=__import__("uuid").uuid4(),
                deadline=None,
                overrides=None,
                disclosure=None,
                extras={"client": object()},
            )
        assert raised.value.field_name == "extras"

    @pytest.mark.parametrize(
        ("change", "field", "message"),
        [
            ({"prompt": None}, "prompt", "'prompt' cannot be read: expected an object with"),
            ({"params": "x"}, "params", "'params' cannot be read: expected"),
            ({"session_id": "zz"}, "session_id", "'session_id' cannot be read"),
            ({"deadline": "soon"}, "deadline", "'deadline' cannot be read: Invalid isoformat"),
            ({"deadline": "2030-01-01T00:00:00"}, "deadline", "has no timezone"),
            ({"overrides": {}}, "overrides", "'overrides' cannot be read: expected an array"),
            ({"disclosure": 5}, "disclosure", "'disclosure' cannot be read"),
            ({"extras": []}, "extras", "'extras' cannot be read"),
        ],
    )
    def test_a_malformed_input_names_its_field(
        self, change: dict[str, object], field: str, message: str
    ) -> None:
        """Another client's input fails its evaluation with a message naming the field."""
        document = _documents.start_document(
            agents.FLAKY,
            session_id=uuid.uuid4(),
            deadline=None,
            overrides=None,
            disclosure=None,
            extras=None,
        )
        assert _documents.read_start(document).ns == agents.FLAKY.ns
        with pytest.raises(ConfigValidationError, match=re.escape(message)) as raised:
            _documents.read_start(document | change)
        assert raised.value.field_name == field

    @pytest.mark.parametrize(
        ("document", "message"),
        [
            ("hello", "the workflow input must be a JSON object, got a JSON str"),
            ({"format": 1}, "the workflow input has no 'prompt'"),
        ],
    )
    def test_an_input_that_is_not_a_start_document_is_refused(
        self, document: object, message: str
    ) -> None:
        with pytest.raises(ConfigValidationError, match=re.escape(message)):
            _documents.read_start(document)

    @pytest.mark.parametrize(
        ("payload", "field", "message"),
        [
            ("approve", "decision", "needs an object with call_id, approved and message"),
            ({"approved": True}, "call_id", "needs call_id, a non-empty string, got None"),
            ({"call_id": "c", "approved": "false"}, "approved", "true or false (call 'c')"),
            ({"call_id": "c", "approved": False, "message": 5}, "message", "got 5"),
        ],
    )
    def test_a_malformed_decision_names_its_field(
        self, payload: object, field: str, message: str
    ) -> None:
        """A decide payload from another client is read strictly: "false" approves nothing."""
        with pytest.raises(ConfigValidationError, match=re.escape(message)) as raised:
            _documents.read_decision(payload)
        assert raised.value.field_name == field

    def test_a_decision_is_read_with_its_message(self) -> None:
        payload = {"call_id": "c", "approved": False, "message": "no"}
        assert _documents.read_decision(payload) == ("c", Decision(approved=False, message="no"))


class TestConfiguration:
    def test_a_prompt_registered_twice_is_refused(self) -> None:
        """One ns/key, one prompt."""
        with pytest.raises(ConfigValidationError, match="registered twice"):
            EvaluationWorker(agents.offline(), prompts=[agents.WORK, agents.WORK])

    def test_two_prompts_needing_one_activity_name_are_refused(self) -> None:
        """ns 'a/b' key 'c' and ns 'a' key 'b/c' would share ``a/b/c#send``."""
        first = Prompt(ns="a/b", key="c", sections=[MarkdownSection(title="T", template="T")])
        second = Prompt(ns="a", key="b/c", sections=[MarkdownSection(title="T", template="T")])
        with pytest.raises(ConfigValidationError, match="both need the activity 'a/b/c#send'"):
            EvaluationWorker(agents.offline(), prompts=[first, second])

    def test_prompts_must_be_prompts(self) -> None:
        """Anything else is named."""
        with pytest.raises(ConfigValidationError, match="got str"):
            EvaluationWorker(agents.offline(), prompts=["tests/temporal/work"])  # type: ignore[list-item]

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"send_timeout": timedelta(0)}, "send_timeout must be a positive timedelta"),
            ({"tool_timeout": 5}, "tool_timeout must be a positive timedelta"),
            (
                {"heartbeat_timeout": timedelta(seconds=-1)},
                "heartbeat_timeout must be a positive timedelta or None",
            ),
            ({"payload_limit": 0}, "payload_limit must be a positive number of bytes"),
            ({"prompts": agents.WORK}, "prompts must be a list of prompts, got Prompt("),
            ({"settings": {}}, "settings must be LoopSettings or None, got {}"),
            ({"extras": [1]}, "extras must be a mapping or None, got [1]"),
            ({"retry_policy": 3}, "retry_policy must be a RetryPolicy or None, got 3"),
            ({"passthrough_modules": "my.types"}, "must be a list of module names, got 'my.types'"),
            ({"passthrough_modules": [5]}, "must be a list of module names, got [5]"),
        ],
    )
    def test_options_are_checked(self, options: dict[str, Any], message: str) -> None:
        """Bad timeouts, limits and arguments of the wrong kind fail when the worker is built."""
        with pytest.raises(ConfigValidationError, match=re.escape(message)):
            EvaluationWorker(agents.offline(), **({"prompts": [agents.WORK]} | options))

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"task_queue": ""}, "task_queue must be a non-empty string, got ''"),
            ({"task_queue": "q", "payload_limit": 0}, "payload_limit must be a positive number"),
            ({"task_queue": "q", "payload_limit": "2MB"}, "got '2MB'"),
        ],
    )
    def test_client_options_are_checked(self, options: dict[str, Any], message: str) -> None:
        """As the worker's are: refused when the client is made, not at the first start."""

        async def make() -> None:
            client = await Client.connect("127.0.0.1:1", lazy=True)
            EvaluationClient(client, **options)

        with pytest.raises(ConfigValidationError, match=message):
            asyncio.run(make())

    def test_a_template_registers_as_its_prompt(self) -> None:
        """A PromptTemplate is served as Prompt(template)."""
        worker = EvaluationWorker(agents.offline(), prompts=[agents.WORK.template])
        names = sorted(getattr(a, "__temporal_activity_definition").name for a in worker.activities)
        assert names == ["tests/temporal/work#send", "tests/temporal/work/record"]

    def test_a_naive_deadline_is_refused_before_anything_is_sent(self) -> None:
        """The client checks it; the server is never asked (none is running here)."""

        async def start() -> None:
            client = await Client.connect("127.0.0.1:1", lazy=True)
            evaluations = EvaluationClient(client, task_queue="q")
            await evaluations.start(agents.FLAKY, deadline=datetime(2030, 1, 1))

        with pytest.raises(ConfigValidationError, match="has no timezone"):
            asyncio.run(start())

    @pytest.mark.parametrize(
        ("call_id", "approved", "message", "field"),
        [("", True, None, "call_id"), ("c", "no", None, "approved"), ("c", False, 5, "message")],
    )
    def test_a_malformed_decision_is_refused_before_anything_is_sent(
        self, call_id: Any, approved: Any, message: Any, field: str
    ) -> None:
        """The workflow would ignore it (approved "no" is no denial): the caller is told."""

        async def decide() -> None:
            client = await Client.connect("127.0.0.1:1", lazy=True)
            handle = EvaluationClient(client, task_queue="q").handle("e")
            await handle.decide(call_id, approved=approved, message=message)

        with pytest.raises(ConfigValidationError, match="a decide signal needs") as raised:
            asyncio.run(decide())
        assert raised.value.field_name == field

    @pytest.mark.parametrize("after", [-1, "2", True])
    def test_events_after_a_bad_count_are_refused_before_anything_is_sent(self, after: Any) -> None:
        """-1 would have been a slice from the end: the last event, not those after it."""

        async def events() -> None:
            client = await Client.connect("127.0.0.1:1", lazy=True)
            await EvaluationClient(client, task_queue="q").handle("e").events(after=after)

        with pytest.raises(ConfigValidationError, match="after must be a number of events"):
            asyncio.run(events())

    @pytest.mark.parametrize(
        ("options", "message"),
        [
            ({"evaluation_id": ""}, "evaluation_id must be a non-empty string or None, got ''"),
            ({"evaluation_id": 5}, "evaluation_id must be a non-empty string or None, got 5"),
            ({"session_id": "abc"}, "session_id must be a UUID or None, got 'abc'"),
            ({"deadline": "2030-01-01"}, "deadline must be a datetime or None, got '2030-01-01'"),
            ({"visibility_overrides": {"docs": 1}}, "visibility_overrides must be a mapping"),
            ({"visibility_overrides": ["docs"]}, "visibility_overrides must be a mapping"),
            ({"disclosure": "all"}, "disclosure must be a Disclosure or None, got 'all'"),
            ({"extras": [1]}, "extras must be a mapping with string keys, or None, got [1]"),
            ({"extras": {1: 2}}, "extras must be a mapping with string keys, or None, got {1: 2}"),
        ],
    )
    def test_start_arguments_of_the_wrong_kind_are_refused_before_anything_is_sent(
        self, options: dict[str, Any], message: str
    ) -> None:
        """Each is named; none reaches the workflow, which could only fail on it."""

        async def start() -> None:
            client = await Client.connect("127.0.0.1:1", lazy=True)
            await EvaluationClient(client, task_queue="q").start(agents.FLAKY, **options)

        with pytest.raises(ConfigValidationError, match=re.escape(message)) as raised:
            asyncio.run(start())
        assert raised.value.field_name == next(iter(options))

    def test_the_workflow_module_names_only_live_workflow_classes(self) -> None:
        """The sandbox imports classes by name; an unknown name is an AttributeError."""
        worker = agents.evaluation_worker()
        (cls,) = worker.workflows
        assert getattr(_workflow, cls.__name__) is cls
        with pytest.raises(AttributeError, match="has no attribute 'EvaluationWorkflow0'"):
            getattr(_workflow, "EvaluationWorkflow0")  # noqa: B009


def test_an_sdk_request_body_crosses_typed() -> None:
    """A JSON body (tuples included) reaches the send activity as it was built."""
    body = {"model": "m", "input": ({"role": "user", "content": "hi"},), "temperature": 0.5}
    document = _documents.request_document(body)
    assert document["kind"] == "typed"
    assert _documents.read_request(document, agents.WORK) == body
