"""Evaluations as Temporal workflows, against a real dev server (see conftest.py).

Workers run in this process (``in_worker``) or in processes of their own
(``worker_process.py``); each test has a task queue of its own.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHistory,
    WorkflowQueryFailedError,
)
from temporalio.worker import Replayer
from temporalio.workflow import NondeterminismError

from tests.temporal import agents
from tests.temporal.server import connect
from weakincentives.adapters import Adapter, PromptResponse
from weakincentives.errors import (
    EvaluationFailedError,
    EvaluationUnreachableError,
    PayloadTooLargeError,
)
from weakincentives.prompt import MarkdownSection, Prompt, Tool
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    TextDelta,
    ToolCall,
    ToolInvoked,
)
from weakincentives.temporal import EvaluationClient, EvaluationHandle, EvaluationWorker
from weakincentives.temporal._workflow import WORKFLOW_NAME


def _queue() -> str:
    return f"q-{uuid.uuid4().hex}"


@asynccontextmanager
async def in_worker(
    address: str, worker: EvaluationWorker | None = None
) -> AsyncIterator[tuple[Client, EvaluationClient]]:
    """A worker in this process on a new task queue, and a client of that queue."""
    client = await connect(address)
    queue = _queue()
    serving = worker if worker is not None else agents.evaluation_worker()
    async with serving.worker(client, task_queue=queue):
        yield client, EvaluationClient(client, task_queue=queue)


async def eventually[T](probe: Callable[[], Awaitable[T]], done: Callable[[T], bool]) -> T:
    """Ask ``probe`` (a query: a round trip to the worker) until ``done``, at most 500 times."""
    for _ in range(500):
        value = await probe()
        if done(value):
            return value
    raise AssertionError(f"never reached; last: {value!r}")


def _comparable(response: PromptResponse[Any]) -> dict[str, object]:
    """What two runs of one evaluation share (ids and times differ)."""
    return {
        "prompt": (response.prompt_ns, response.prompt_key, response.prompt_name),
        "text": response.text,
        "output": response.output,
        "rounds": response.rounds,
        "usage": response.usage,
        "conversation": response.conversation,
        "calls": [(e.call, e.params, e.result) for e in response.tool_executions],
        "pending": response.pending_approvals,
    }


def _shape(event: object) -> tuple[object, ...]:
    """An event without its ids and times."""
    if isinstance(event, ToolInvoked):
        return ("ToolInvoked", event.name, event.call_id, event.params, event.result)
    if isinstance(event, TextDelta):
        return ("TextDelta", event.round, event.index, event.text)
    if isinstance(event, PromptRendered):
        return ("PromptRendered", event.text, event.tool_names)
    if isinstance(event, PromptExecuted):
        return ("PromptExecuted", event.text, event.rounds, event.tool_call_count, event.usage)
    return (type(event).__name__, event)


class TestEvaluationThroughAWorker:
    def test_the_response_and_events_are_those_of_an_evaluation_in_process(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """Tool calls in activities and in the workflow; the same response and events."""
        prompt = agents.work_prompt(agents.Job(calls=5, per_round=3))
        local_events: list[object] = []
        bus = InProcessEventBus()
        bus.subscribe(object, local_events.append)
        local = Adapter(agents.offline()).evaluate(
            prompt, bus=bus, extras={"ledger": str(tmp_path / "local")}
        )

        async def remote() -> tuple[PromptResponse[str], tuple[object, ...]]:
            async with in_worker(temporal_address) as (_, evaluations):
                handle = await evaluations.start(prompt, extras={"ledger": str(tmp_path / "w")})
                response = await handle.result()
                return response, await handle.events()

        response, events = asyncio.run(remote())
        assert _comparable(response) == _comparable(local)
        assert response.text.startswith("Done: recorded 1")
        # The loop's events come in the same order; what a handler published in an
        # activity is published when the activity returns (in process, as it happens).
        ours = [_shape(e) for e in events if not isinstance(e, agents.Item)]
        assert ours == [_shape(e) for e in local_events if not isinstance(e, agents.Item)]
        items = [e.n for e in events if isinstance(e, agents.Item)]
        assert sorted(items) == [1, 3, 5]  # records 1 and 3 run at once: either may land first
        assert {type(event) for event in events} >= {
            PromptRendered,
            ToolInvoked,
            TextDelta,
            PromptExecuted,
            agents.Item,
        }
        assert (tmp_path / "w").read_text().count("\n") == 3  # records 1, 3, 5

    def test_an_events_query_with_a_bad_after_fails_only_the_query(
        self, temporal_address: str
    ) -> None:
        """-1 gave the last event and "x" a slice TypeError; both now name after."""

        async def run() -> tuple[list[str], int]:
            async with in_worker(temporal_address) as (client, evaluations):
                handle: EvaluationHandle[str] = await evaluations.start(agents.FLAKY)
                await handle.result()
                raw = client.get_workflow_handle(handle.evaluation_id)
                refusals: list[str] = []
                for after in (-1, "x", True):
                    with pytest.raises(WorkflowQueryFailedError) as failed:
                        await raw.query("events", after)
                    refusals.append(str(failed.value))
                return refusals, len(await handle.events(after=1))

        refusals, rest = asyncio.run(run())
        assert all("after must be a number of events" in refusal for refusal in refusals)
        assert rest > 0

    @pytest.mark.parametrize("heartbeat", [timedelta(seconds=7), None], ids=["beats", "none"])
    def test_activities_are_scheduled_with_the_worker_s_heartbeat_timeout(
        self, temporal_address: str, tmp_path: Path, heartbeat: timedelta | None
    ) -> None:
        """Every activity carries the heartbeat timeout; None schedules them without one."""
        prompt = agents.work_prompt(agents.Job(calls=2, per_round=1))
        worker = EvaluationWorker(
            agents.offline(), prompts=[agents.WORK], heartbeat_timeout=heartbeat
        )

        async def run() -> tuple[str, set[float]]:
            async with in_worker(temporal_address, worker) as (client, evaluations):
                handle = await evaluations.start(prompt, extras={"ledger": str(tmp_path / "w")})
                response = await handle.result()
                history = await client.get_workflow_handle(handle.evaluation_id).fetch_history()
            scheduled = {
                event.activity_task_scheduled_event_attributes.heartbeat_timeout.ToTimedelta().total_seconds()
                for event in history.events
                if event.HasField("activity_task_scheduled_event_attributes")
            }
            return response.text, scheduled

        text, scheduled = asyncio.run(run())
        assert text.startswith("Done: recorded 1")
        assert scheduled == {7.0 if heartbeat is not None else 0.0}

    def test_a_retryable_provider_error_is_retried_by_temporal(self, temporal_address: str) -> None:
        """Two overloaded attempts, then an answer: three activity attempts, one round."""

        async def run() -> PromptResponse[str]:
            async with in_worker(temporal_address) as (_, evaluations):
                return await evaluations.evaluate(agents.FLAKY, agents.Mode(mode="retryable"))

        response = asyncio.run(run())
        assert (response.text, response.rounds) == ("answered after 3 attempts", 1)

    def test_a_provider_error_that_must_not_be_retried_fails_at_once(
        self, temporal_address: str
    ) -> None:
        """A 400 is not retried: one attempt, then EvaluationFailedError and PromptFailed."""

        async def run() -> tuple[EvaluationFailedError, tuple[object, ...], str]:
            async with in_worker(temporal_address) as (_, evaluations):
                handle = await evaluations.start(agents.FLAKY, agents.Mode(mode="fatal"))
                with pytest.raises(EvaluationFailedError, match="no such model") as failed:
                    await handle.result()
                return failed.value, await handle.events(), handle.evaluation_id

        error, events, evaluation_id = asyncio.run(run())
        assert (error.phase, error.error_type, error.evaluation_id) == (
            "request",
            "ProviderError",
            evaluation_id,
        )
        failures = [event for event in events if isinstance(event, PromptFailed)]
        assert [(f.phase, f.error_type) for f in failures] == [("request", "ProviderError")]
        assert agents.FAILURES[evaluation_id] == 1


class TestApproval:
    def test_an_approval_signal_resumes_the_paused_evaluation(self, temporal_address: str) -> None:
        """Calls over 100 wait; one approved, one denied with a message; then it finishes."""

        async def run() -> tuple[PromptResponse[str], list[str], str]:
            async with in_worker(temporal_address) as (client, evaluations):
                handle = await evaluations.start(agents.PAYOUT)
                first = await eventually(handle.pending_approvals, bool)
                description = await client.get_workflow_handle(handle.evaluation_id).describe()
                assert description.status is WorkflowExecutionStatus.RUNNING
                await handle.decide(first[0].call_id, approved=True)
                second = await eventually(
                    handle.pending_approvals, lambda calls: bool(calls) and calls != first
                )
                await handle.decide(second[0].call_id, approved=False, message="too much")
                response = await handle.result()
                return response, [first[0].call_id, second[0].call_id], handle.evaluation_id

        response, asked, _ = asyncio.run(run())
        assert asked == ["call_1_1", "call_1_2"]
        assert [result.message for result in response.tool_results] == [
            "paid 20 to A",
            "paid 500 to B",
            "Not run: a person denied this call of tool 'pay'. They said: too much",
        ]
        assert response.pending_approvals == ()

    def test_malformed_decide_signals_are_ignored_and_the_workflow_goes_on(
        self, temporal_address: str
    ) -> None:
        """Another client's bad payloads neither decide nor wedge the workflow's tasks."""

        async def run() -> tuple[tuple[ToolCall, ...], PromptResponse[str]]:
            async with in_worker(temporal_address) as (client, evaluations):
                handle: EvaluationHandle[str] = await evaluations.start(agents.PAYOUT)
                first = await eventually(handle.pending_approvals, bool)
                raw = client.get_workflow_handle(handle.evaluation_id)
                call_id = first[0].call_id
                for payload in ({}, "yes", {"call_id": call_id, "approved": "false"}):
                    await raw.signal("decide", payload)
                await raw.signal("decide", args=[])
                await raw.signal("decide", args=[{"call_id": call_id, "approved": False}, 2])
                still = await handle.pending_approvals()  # answered: the task did not fail
                await handle.decide(call_id, approved=True)
                await handle.decide("call_1_2", approved=True)
                return still, await handle.result()

        still, response = asyncio.run(run())
        assert [call.call_id for call in still] == ["call_1_1"]
        assert [result.success for result in response.tool_results] == [True, True, True]

    def test_cancelling_the_workflow_cancels_the_evaluation(self, temporal_address: str) -> None:
        """While it waits for a person: PromptFailed phase cancelled, EvaluationFailedError."""

        async def run() -> tuple[EvaluationFailedError, tuple[object, ...]]:
            async with in_worker(temporal_address) as (_, evaluations):
                handle = await evaluations.start(agents.PAYOUT)
                await eventually(handle.pending_approvals, bool)
                await handle.cancel()
                with pytest.raises(EvaluationFailedError, match="cancelled") as failed:
                    await handle.result()
                return failed.value, await handle.events()

        error, events = asyncio.run(run())
        assert (error.phase, error.error_type) == ("cancelled", "CancelledError")
        failures = [event for event in events if isinstance(event, PromptFailed)]
        assert [failure.phase for failure in failures] == ["cancelled"]

    def test_an_evaluation_that_ended_or_never_was_is_unreachable(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """The server's refusals come back as EvaluationUnreachableError, naming the call."""

        async def run() -> list[EvaluationUnreachableError]:
            found: list[EvaluationUnreachableError] = []
            async with in_worker(temporal_address) as (_, evaluations):
                prompt = agents.work_prompt(agents.Job(calls=1, per_round=1))
                handle = await evaluations.start(prompt, extras={"ledger": str(tmp_path / "w")})
                await handle.result()
                ghost = evaluations.handle(f"ghost-{uuid.uuid4().hex}")
                for attempt in (
                    handle.decide("c1", approved=True),
                    ghost.cancel(),  # cancelling an ended one is accepted and does nothing
                    ghost.result(),
                    ghost.pending_approvals(),
                    ghost.events(),
                ):
                    with pytest.raises(EvaluationUnreachableError) as caught:
                        await attempt
                    found.append(caught.value)
            return found

        errors = asyncio.run(run())
        assert [error.operation for error in errors] == [
            "decide on a call of",
            "cancel",
            "wait for",
            "query",
            "query",
        ]
        assert "completed" in errors[0].reason
        assert all(
            error.message.startswith(f"cannot {error.operation} evaluation ") for error in errors
        )
        assert all("not found" in error.reason for error in errors[1:])

    def test_cancelling_the_workflow_cancels_its_running_activity(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """The hanging request learns of the cancellation from a heartbeat's answer.

        Without heartbeats the request would hang until its timeout (an hour here). The
        evaluation ends as cancelled (phase ``cancelled``), not as a failed request.
        """
        prompt = agents.work_prompt(agents.Job(calls=5, per_round=1))
        worker = agents.evaluation_worker(hold=True, heartbeats=True)

        async def run() -> tuple[str, EvaluationFailedError, tuple[object, ...]]:
            async with in_worker(temporal_address, worker) as (_, evaluations):
                handle = await evaluations.start(prompt, extras={"ledger": str(tmp_path / "w")})
                await eventually(_sleeping, lambda _: handle.evaluation_id in agents.HELD)
                await handle.cancel()
                with pytest.raises(EvaluationFailedError, match="cancelled") as failed:
                    await handle.result()
                async with asyncio.timeout(30):
                    while handle.evaluation_id not in dict(agents.RELEASED):
                        await asyncio.sleep(0.05)
                return handle.evaluation_id, failed.value, await handle.events()

        evaluation_id, error, events = asyncio.run(run())
        (why,) = [details for held, details in agents.RELEASED if held == evaluation_id]
        # told by the server (in a heartbeat's answer), not timed out on the worker
        assert why is not None
        assert why.cancel_requested or why.not_found
        assert not why.timed_out
        # the step was cancelled, not failed: the same report as a cancelled approval's
        assert (error.phase, error.error_type) == ("cancelled", "CancelledError")
        failures = [event for event in events if isinstance(event, PromptFailed)]
        assert [failure.phase for failure in failures] == ["cancelled"]


async def _sleeping() -> None:
    await asyncio.sleep(0.02)


class TestPayloads:
    def test_params_over_the_limit_fail_before_the_workflow_starts(
        self, temporal_address: str
    ) -> None:
        """The client measures the input first: PayloadTooLargeError, nothing started."""

        async def run() -> None:
            client = await connect(temporal_address)
            evaluations = EvaluationClient(client, task_queue=_queue(), payload_limit=1_000)
            with pytest.raises(PayloadTooLargeError, match="the workflow input is") as raised:
                await evaluations.start(agents.FLAKY, agents.Mode(mode="x" * 2_000))
            assert raised.value.limit == 1_000
            assert raised.value.size > 2_000

        asyncio.run(run())

    def test_a_tool_result_over_the_limit_becomes_a_failed_result(
        self, temporal_address: str
    ) -> None:
        """The activity measures its result: the model reads why, the evaluation goes on."""

        async def run() -> PromptResponse[str]:
            worker = agents.evaluation_worker(payload_limit=20_000)
            async with in_worker(temporal_address, worker) as (_, evaluations):
                return await evaluations.evaluate(agents.BULKY)

        response = asyncio.run(run())
        (result,) = response.tool_results
        assert not result.success
        assert "over the 20,000-byte limit" in result.message
        assert response.text.startswith("Tool 'bulky' returned a result of 50,")


class TestEndings:
    def test_a_deadline_ends_an_evaluation_waiting_for_a_person(
        self, temporal_address: str
    ) -> None:
        """The loop's own deadline (a workflow timer) fails it in phase tool."""

        async def run() -> EvaluationFailedError:
            async with in_worker(temporal_address) as (_, evaluations):
                deadline = datetime.now(UTC) + timedelta(seconds=1)
                handle = await evaluations.start(agents.PAYOUT, deadline=deadline)
                with pytest.raises(EvaluationFailedError, match="deadline") as failed:
                    await handle.result()
                return failed.value

        error = asyncio.run(run())
        assert (error.phase, error.error_type) == ("tool", "PromptEvaluationError")
        assert "passed during the tool calls of round 1" in error.reason

    def test_a_deadline_ends_an_evaluation_waiting_for_its_request(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """The request of round 4 hangs past the deadline: the loop's deadline, phase request.

        The activity's retries end by the deadline too (its schedule-to-close timeout), so
        the evaluation ends then, not at the workflow's execution timeout 5 s later.
        """
        prompt = agents.work_prompt(agents.Job(calls=5, per_round=1))
        worker = agents.evaluation_worker(hold=True, heartbeats=True)

        async def run() -> EvaluationFailedError:
            async with in_worker(temporal_address, worker) as (_, evaluations):
                deadline = datetime.now(UTC) + timedelta(seconds=2)
                handle = await evaluations.start(
                    prompt, extras={"ledger": str(tmp_path / "w")}, deadline=deadline
                )
                with pytest.raises(EvaluationFailedError, match="deadline") as failed:
                    await handle.result()
                return failed.value

        error = asyncio.run(run())
        assert (error.phase, error.error_type) == ("request", "PromptEvaluationError")
        assert error.reason.endswith("passed during the request of round 4")

    def test_a_deadline_ends_an_evaluation_waiting_for_a_tool_activity(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """A call that runs past the deadline: the loop's deadline, phase tool."""
        prompt = agents.work_prompt(agents.Job(calls=3, per_round=1))
        worker = agents.evaluation_worker(heartbeats=True)

        async def run() -> EvaluationFailedError:
            async with in_worker(temporal_address, worker) as (_, evaluations):
                deadline = datetime.now(UTC) + timedelta(seconds=2)
                extras = {"ledger": str(tmp_path / "w"), "stall_at": 3}
                handle = await evaluations.start(prompt, extras=extras, deadline=deadline)
                with pytest.raises(EvaluationFailedError, match="deadline") as failed:
                    await handle.result()
                return failed.value

        error = asyncio.run(run())
        assert (error.phase, error.error_type) == ("tool", "PromptEvaluationError")
        # the loop's timer around the calls, or the activity's timeout at the deadline
        assert re.search(
            r"deadline \S+ passed during the (tool calls of round 3|call \S+ of tool 'record')",
            error.reason,
        ), error.reason

    def test_a_prompt_the_workers_do_not_serve_fails_the_workflow(
        self, temporal_address: str
    ) -> None:
        """Not a workflow task retried forever: a failed evaluation naming the prompt."""
        unknown = Prompt(
            ns="tests/temporal", key="unknown", sections=[MarkdownSection(title="T", template="T")]
        )

        async def run() -> EvaluationFailedError:
            async with in_worker(temporal_address) as (_, evaluations):
                with pytest.raises(EvaluationFailedError) as failed:
                    await evaluations.evaluate(unknown)
                return failed.value

        error = asyncio.run(run())
        assert (error.phase, error.error_type) == ("internal", "ConfigValidationError")
        assert "prompt tests/temporal/unknown is not registered with this worker" in error.reason

    def test_an_input_another_client_wrote_wrong_fails_naming_the_field(
        self, temporal_address: str
    ) -> None:
        """A raw start with a broken input: a failed evaluation that says what was wrong."""

        async def run() -> EvaluationFailedError:
            client = await connect(temporal_address)
            queue = _queue()
            async with agents.evaluation_worker().worker(client, task_queue=queue):
                handle = await client.start_workflow(
                    WORKFLOW_NAME, {"format": 1}, id=_queue(), task_queue=queue
                )
                evaluations = EvaluationClient(client, task_queue=queue)
                with pytest.raises(EvaluationFailedError) as failed:
                    await evaluations.handle(handle.id).result()
                return failed.value

        error = asyncio.run(run())
        assert (error.phase, error.error_type) == ("internal", "ConfigValidationError")
        assert error.reason == "the workflow input has no 'prompt'"

    def test_a_decision_sent_before_the_evaluation_asks_is_kept(
        self, temporal_address: str
    ) -> None:
        """Decided at start: the calls run without ever waiting."""

        async def run() -> PromptResponse[str]:
            async with in_worker(temporal_address) as (_, evaluations):
                handle: EvaluationHandle[str] = await evaluations.start(agents.PAYOUT)
                await handle.decide("call_1_1", approved=True)
                await handle.decide("call_1_2", approved=False, message="no")
                await handle.decide("call_1_2", approved=True)  # the first decision stands
                return await handle.result()

        response = asyncio.run(run())
        assert [result.success for result in response.tool_results] == [True, True, False]


def _record_in_the_workflow() -> Prompt[str]:
    """The work prompt with ``record`` marked pure: its calls would be no activities."""
    pure_record = Tool.wrap(
        agents.record.handler,  # type: ignore[arg-type]
        name="record",
        description=agents.record.description,
        pure=True,
    )
    section = MarkdownSection[agents.Job](
        title="Job",
        key="job",
        template="Do the job.\n\nJOB [${calls}, ${per_round}]",
        tools=[agents.double, pure_record],
    )
    return Prompt(ns=agents.WORK.ns, key=agents.WORK.key, sections=[section])


class TestReplay:
    def test_recorded_histories_replay_without_nondeterminism(
        self, temporal_address: str, tmp_path: Path
    ) -> None:
        """Streaming, pure tools, activities, retries, approvals, a cancellation: all replay."""

        async def run() -> list[WorkflowHistory]:
            async with in_worker(temporal_address) as (client, evaluations):
                extras = {"ledger": str(tmp_path / "ledger")}
                work = await evaluations.start(
                    agents.work_prompt(agents.Job(calls=4, per_round=2)), extras=extras
                )
                flaky = await evaluations.start(agents.FLAKY, agents.Mode(mode="retryable"))
                payout = await evaluations.start(agents.PAYOUT)
                await handle_all(payout)
                cancelled = await evaluations.start(agents.PAYOUT)
                await eventually(cancelled.pending_approvals, bool)
                await cancelled.cancel()
                for handle in (work, flaky, payout):
                    await handle.result()
                with pytest.raises(EvaluationFailedError):
                    await cancelled.result()
                return [
                    await client.get_workflow_handle(handle.evaluation_id).fetch_history()
                    for handle in (work, flaky, payout, cancelled)
                ]

        histories = asyncio.run(run())
        worker = agents.evaluation_worker()
        replayer = Replayer(workflows=worker.workflows, workflow_runner=worker.workflow_runner)

        async def replay() -> None:
            for history in histories:
                await replayer.replay_workflow(history)

        asyncio.run(replay())
        changed = EvaluationWorker(agents.offline(), prompts=[_record_in_the_workflow()])
        strict = Replayer(workflows=changed.workflows, workflow_runner=changed.workflow_runner)
        with pytest.raises(NondeterminismError):
            asyncio.run(strict.replay_workflow(histories[0]))


async def handle_all(handle: EvaluationHandle[Any]) -> None:
    """Approve every call of ``handle`` that waits, until none is left to ask about."""
    for call_id in ("call_1_1", "call_1_2"):

        def asked(calls: tuple[ToolCall, ...], wanted: str = call_id) -> bool:
            return [call.call_id for call in calls] == [wanted]

        await eventually(handle.pending_approvals, asked)
        await handle.decide(call_id, approved=True)
