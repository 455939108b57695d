"""Durable evaluations in one process: what is stored, how resume checks and rebuilds.

The kill tests (``test_durable_kill.py``) cover real crashes; these cover the contract
around them: checkpoints and steps, resuming a finished or failed evaluation, the
typed refusals (unknown evaluation, another prompt, a changed request), the session
rebuilt from its log, the options and extras restored, the start time kept, and two
writers racing for one step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from tests.adapters.conftest import OpenAILoopback, ok, response_body
from tests.conftest import FakeClock
from weakincentives.adapters import (
    Adapter,
    Disclosure,
    LoopSettings,
    OfflineModel,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.adapters._durable import DurableSteps, event_record
from weakincentives.adapters._request_digest import digest_changes, digest_view, request_digest
from weakincentives.adapters._step_runner import Progress, Sent
from weakincentives.errors import (
    ConfigValidationError,
    PromptEvaluationError,
    ReplayMismatchError,
    ResumeError,
    StoreDatabaseError,
)
from weakincentives.prompt import (
    MarkdownSection,
    Prompt,
    SectionVisibility,
    Tool,
    ToolContext,
    ToolResult,
)
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    Session,
    TextDelta,
    ToolCall,
    ToolInvoked,
)
from weakincentives.serde import JSONValue
from weakincentives.store import SQLiteStore, Store, SyncStore

SESSION = UUID("00000000-0000-0000-0000-0000000000bb")


@dataclass(frozen=True, slots=True, kw_only=True)
class Topic:
    """Params of the lookup tool, and of the prompt's task section."""

    name: str


@dataclass(slots=True)
class Model:
    """A responder that answers like a model, and can be told to fail in round 2 once."""

    fail_round_two: bool = False
    seen: list[int] | None = None

    def __call__(self, request: TurnRequest) -> ScriptedTurn:
        if self.seen is not None:
            self.seen.append(request.round)
        if request.round == 1:
            return ScriptedTurn(
                text="Looking.",
                calls=(ScriptedCall(name="lookup", arguments={"name": "tea"}, call_id="c1"),),
            )
        if self.fail_round_two:
            self.fail_round_two = False
            raise PromptEvaluationError(
                "the model is down", prompt_name=request.prompt_name, phase="request"
            )
        outputs = [
            item.content.splitlines()[0]
            for item in request.history
            if isinstance(item, ToolOutputMessage)
        ]
        return ScriptedTurn(text=f"Found: {'; '.join(outputs)}")


def lookup_tool(ran: list[str], *, description: str = "Look a topic up.") -> Tool[Topic, str]:
    def lookup(params: Topic, *, context: ToolContext) -> ToolResult[str]:
        ran.append(params.name)
        extra = context.extras.get("suffix", "")
        return ToolResult(message=f"{params.name}{extra}", value=params.name)

    return Tool[Topic, str](name="lookup", description=description, handler=lookup)


def topic_prompt(tool: Tool[Topic, Any], *, template: str = "Look up ${name}.") -> Prompt[Any]:
    return Prompt(
        ns="tests/durable",
        key="topics",
        sections=[
            MarkdownSection[Topic](title="Task", key="task", template=template, tools=[tool]),
            MarkdownSection(
                title="Notes", key="notes", template="Background.", summary="Notes, on request."
            ),
        ],
    )


_OPEN: list[Adapter[Any]] = []


@pytest.fixture(autouse=True)
def _close_adapters() -> Iterator[None]:
    """Every adapter a test made is closed after it, so no worker thread outlives it."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def adapter(model: Model, clock: FakeClock | None = None) -> Adapter[OfflineModel]:
    counter = iter(range(1, 1_000))
    settings = LoopSettings(
        clock=clock or FakeClock(), new_id=lambda: f"id-{next(counter)}", output_retries=0
    )
    made = Adapter(OfflineModel(responder=model, stream_chunk_size=5), settings=settings)
    _OPEN.append(made)
    return made


@pytest.fixture
def store(tmp_path: Path) -> SyncStore:
    return SyncStore(SQLiteStore(tmp_path / "durable.db"))


def log_types(store: SyncStore) -> list[str]:
    return [event.type_name.rsplit(":", 1)[1] for event in store.read(str(SESSION))]


class TestRecorded:
    def test_steps_checkpoint_and_log_of_a_finished_evaluation(self, store: SyncStore) -> None:
        """Each send and call is a step; the checkpoint holds the response; the log the events."""
        ran: list[str] = []
        with store:
            response = adapter(Model()).evaluate(
                topic_prompt(lookup_tool(ran)),
                Topic(name="tea"),
                store=store,
                session=Session(session_id=SESSION),
                evaluation_id="e1",
            )
            assert response.text == "Found: tea"
            assert [step.key for step in store.read_steps("e1")] == [
                "round:1/send",
                "round:1/call:c1",
                "round:2/send",
                "final",
            ]
            checkpoint = store.load_checkpoint("e1")
            assert checkpoint is not None
            assert (checkpoint.status, checkpoint.round, checkpoint.session_id) == (
                "done",
                2,
                str(SESSION),
            )
            assert isinstance(checkpoint.document, dict)
            assert checkpoint.document["prompt"] == {
                "ns": "tests/durable",
                "key": "topics",
                "name": "topics",
            }
            assert log_types(store) == [
                "PromptRendered",
                "TextDelta",
                "TextDelta",
                "ToolInvoked",
                "TextDelta",
                "TextDelta",
                "PromptExecuted",
            ]

    def test_resuming_a_finished_evaluation_returns_its_stored_response(
        self, store: SyncStore
    ) -> None:
        """Nothing is sent or run again; the response loads back equal (without the render)."""
        ran: list[str] = []
        model = Model(seen=[])
        prompt = topic_prompt(lookup_tool(ran))
        with store:
            first = adapter(model).evaluate(
                prompt, Topic(name="tea"), store=store, evaluation_id="e1"
            )
            again = adapter(model).resume("e1", prompt.template, store=store)
        assert again == first
        assert again.rendered is None
        assert model.seen == [1, 2]
        assert ran == ["tea"]

    def test_an_evaluation_id_is_used_once(self, store: SyncStore) -> None:
        """Starting a second evaluation under a stored id is refused: resume it instead."""
        prompt = topic_prompt(lookup_tool([]))
        with store:
            adapter(Model()).evaluate(prompt, Topic(name="tea"), store=store, evaluation_id="e1")
            with pytest.raises(
                ConfigValidationError, match=r"resume it with adapter\.resume"
            ) as caught:
                adapter(Model()).evaluate(
                    prompt, Topic(name="tea"), store=store, evaluation_id="e1"
                )
        assert (caught.value.field_name, caught.value.value) == ("evaluation_id", "e1")

    def test_a_store_must_be_a_store(self) -> None:
        """Anything else is a ConfigValidationError naming the type."""
        with pytest.raises(ConfigValidationError, match="store must be a Store") as caught:
            adapter(Model()).evaluate(topic_prompt(lookup_tool([])), Topic(name="t"), store="db")  # type: ignore[arg-type]
        assert caught.value.field_name == "store"


class TestResumeRefuses:
    def test_an_unknown_evaluation(self, store: SyncStore) -> None:
        with store, pytest.raises(ResumeError, match="the store has no such evaluation") as caught:
            adapter(Model()).resume("nope", topic_prompt(lookup_tool([])), store=store)
        assert caught.value.evaluation_id == "nope"

    def test_another_prompt(self, store: SyncStore) -> None:
        with store:
            adapter(Model()).evaluate(
                topic_prompt(lookup_tool([])), Topic(name="t"), store=store, evaluation_id="e1"
            )
            other = Prompt(
                ns="tests/durable",
                key="other",
                sections=[MarkdownSection(title="X", key="x", template="x")],
            )
            with pytest.raises(
                ResumeError,
                match="started with the prompt tests/durable/topics, not tests/durable/other",
            ) as caught:
                adapter(Model()).resume("e1", other, store=store)
        assert caught.value.reason.startswith("it was started with the prompt")

    def test_a_checkpoint_written_by_someone_else(self, store: SyncStore) -> None:
        with store:
            store.save_checkpoint("raw", round=1, status="running", document={"mine": True})
            with pytest.raises(ResumeError, match="not written by a durable evaluation"):
                adapter(Model()).resume("raw", topic_prompt(lookup_tool([])), store=store)


CHANGED_CHECKPOINTS: dict[str, tuple[str, str, JSONValue, str]] = {
    "no session": (
        "failed",
        "session_id",
        None,
        "its checkpoint document has no 'session_id' (it was changed outside this library)",
    ),
    "no params": ("failed", "params", None, "its checkpoint document has no 'params'"),
    "a session id of another type": (
        "failed",
        "session_id",
        7,
        "the 'session_id' of its checkpoint document is 7, not a string",
    ),
    "a session id that is no UUID": (
        "failed",
        "session_id",
        "s" * 100,
        f"the 'session_id' of its checkpoint document is '{'s' * 76}..., not a UUID",
    ),
    "a start time that is no time": (
        "failed",
        "started_at",
        "noon",
        "the 'started_at' of its checkpoint document is 'noon', not an ISO time",
    ),
    "a deadline that is no time": (
        "failed",
        "deadline",
        12,
        "the 'deadline' of its checkpoint document is 12, not a string",
    ),
    "no response": (
        "done",
        "response",
        None,
        "the 'response' of its checkpoint document is None, not an object",
    ),
    "a response that is no object": (
        "done",
        "response",
        [],
        "the 'response' of its checkpoint document is [], not an object",
    ),
}
"""A checkpoint of a failed or finished evaluation with one member removed (None) or changed."""


@pytest.mark.parametrize("change", list(CHANGED_CHECKPOINTS))
def test_a_checkpoint_document_changed_by_hand_is_a_resume_error(
    store: SyncStore, change: str
) -> None:
    """A member a resume reads, missing or of the wrong shape, is named; nothing runs."""
    status, name, value, reason = CHANGED_CHECKPOINTS[change]
    model = Model(fail_round_two=status == "failed", seen=[])
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with contextlib.suppress(PromptEvaluationError):
            adapter(model).evaluate(prompt, Topic(name="t"), store=store, evaluation_id="e1")
        checkpoint = store.load_checkpoint("e1")
        assert checkpoint is not None
        assert isinstance(checkpoint.document, dict)
        assert checkpoint.status == status
        document = {key: item for key, item in checkpoint.document.items() if key != name}
        if value is not None:
            document[name] = value
        store.save_checkpoint("e1", round=checkpoint.round, status=status, document=document)
        seen = list(model.seen or ())
        with pytest.raises(ResumeError, match=r"^cannot resume evaluation 'e1': ") as caught:
            adapter(model).resume("e1", prompt.template, store=store)
    assert caught.value.reason.startswith(reason)
    assert model.seen == seen


def test_a_recorded_step_the_run_never_reaches_fails_the_resume(store: SyncStore) -> None:
    """A step added by hand would keep the rest of the run out of the log: it fails instead."""
    model = Model(fail_round_two=True, seen=[])
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with pytest.raises(PromptEvaluationError, match="the model is down"):
            adapter(model).evaluate(
                prompt,
                Topic(name="t"),
                store=store,
                session=Session(session_id=SESSION),
                evaluation_id="e1",
            )
        for index in range(6):
            store.record_step("e1", f"round:9/call:ghost{index}", {"event": None})
        with pytest.raises(PromptEvaluationError) as caught:
            adapter(model).resume("e1", prompt.template, store=store)
        checkpoint = store.load_checkpoint("e1")
        types = log_types(store)
    assert caught.value.message == (
        "[request] prompt 'topics': evaluation 'e1' records steps this run never reaches "
        "('round:9/call:ghost0', "
        "'round:9/call:ghost1', 'round:9/call:ghost2', 'round:9/call:ghost3', "
        "'round:9/call:ghost4' and 1 more) before its step 'round:2/send'; its steps were "
        "changed outside this library: remove those rows, or start the evaluation again"
    )
    assert model.seen == [1, 2]  # round 2 is not sent again
    assert checkpoint is not None
    assert checkpoint.status == "failed"
    assert types[-2:] == ["PromptFailed", "PromptFailed"]  # the refusal is in the log


@pytest.mark.parametrize(
    ("key", "document", "message"),
    [
        (
            "round:1/send",
            json.dumps(list(range(40))),
            "records no 'reply' (its document is [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, "
            "13, 14, 15, 16, 17, 18, 19, 20, 21...); it was",
        ),
        ("round:1/call:c1", "{}", "step 'round:1/call:c1' of evaluation 'e1' records no 'event' "),
    ],
)
def test_a_recorded_step_changed_by_hand_fails_the_resume_naming_it(
    store: SyncStore, tmp_path: Path, key: str, document: str, message: str
) -> None:
    """A step document of the wrong shape is a PromptEvaluationError naming the step."""
    model = Model(fail_round_two=True, seen=[])
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with pytest.raises(PromptEvaluationError, match="the model is down"):
            adapter(model).evaluate(prompt, Topic(name="t"), store=store, evaluation_id="e1")
        with closing(sqlite3.connect(tmp_path / "durable.db")) as raw, raw:
            raw.execute("UPDATE wink_steps SET document = ? WHERE step_key = ?", (document, key))
        with pytest.raises(PromptEvaluationError) as caught:
            adapter(model).resume("e1", prompt.template, store=store)
    assert message in caught.value.message
    assert caught.value.message.endswith("; it was changed outside this library")


def test_an_event_of_the_log_changed_by_hand_is_a_resume_error(
    store: SyncStore, tmp_path: Path
) -> None:
    """Rebuilding the session from its log refuses a row that holds no event document."""
    model = Model(fail_round_two=True, seen=[])
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with pytest.raises(PromptEvaluationError, match="the model is down"):
            adapter(model).evaluate(
                prompt,
                Topic(name="t"),
                store=store,
                session=Session(session_id=SESSION),
                evaluation_id="e1",
            )
        with closing(sqlite3.connect(tmp_path / "durable.db")) as raw, raw:
            raw.execute("UPDATE wink_events SET document = '[1, 2]' WHERE seq = 2")
        seen = list(model.seen or ())
        with pytest.raises(ResumeError) as caught:
            adapter(model).resume("e1", prompt.template, store=store)
    assert caught.value.reason == (
        f"event 2 of its session {SESSION} is [1, 2], not an event document (it was "
        "changed outside this library)"
    )
    assert model.seen == seen  # nothing was sent


class TestResumeAfterFailure:
    def test_a_failed_evaluation_resumes_from_its_last_step(self, store: SyncStore) -> None:
        """Round 1 is not sent or run again; the log keeps the failure, then the rest."""
        ran: list[str] = []
        model = Model(fail_round_two=True, seen=[])
        prompt = topic_prompt(lookup_tool(ran))
        with store:
            with pytest.raises(PromptEvaluationError, match="the model is down"):
                adapter(model).evaluate(
                    prompt,
                    Topic(name="tea"),
                    store=store,
                    session=Session(session_id=SESSION),
                    evaluation_id="e1",
                )
            checkpoint = store.load_checkpoint("e1")
            assert checkpoint is not None
            assert checkpoint.status == "failed"
            assert isinstance(checkpoint.document, dict)
            assert checkpoint.document["failure"] == {
                "phase": "request",
                "message": "the model is down",
                "error_type": "PromptEvaluationError",
            }
            response = adapter(model).resume("e1", prompt, store=store)
            assert response.text == "Found: tea"
            assert model.seen == [1, 2, 2]
            assert ran == ["tea"]
            assert log_types(store) == [
                "PromptRendered",
                "TextDelta",
                "TextDelta",
                "ToolInvoked",
                "PromptFailed",
                "TextDelta",
                "TextDelta",
                "PromptExecuted",
            ]

    def test_a_changed_prompt_is_a_replay_mismatch(self, store: SyncStore) -> None:
        """The rebuilt request differs from the recorded one: a typed error shows where."""
        prompt = topic_prompt(lookup_tool([]))
        changed = topic_prompt(
            lookup_tool([], description="Find a topic."), template="Find ${name}."
        )
        with store:
            with pytest.raises(PromptEvaluationError):
                adapter(Model(fail_round_two=True)).evaluate(
                    prompt, Topic(name="tea"), store=store, evaluation_id="e1"
                )
            with pytest.raises(
                ReplayMismatchError, match="the request of round 1 is not"
            ) as caught:
                adapter(Model()).resume("e1", changed, store=store)
            checkpoint = store.load_checkpoint("e1")
            assert checkpoint is not None
            assert (checkpoint.round, checkpoint.status) == (2, "failed")
            assert isinstance(checkpoint.document, dict)
            failure = checkpoint.document["failure"]
            assert isinstance(failure, dict)
            assert failure["error_type"] == "ReplayMismatchError"
        assert caught.value.round == 1
        assert caught.value.phase == "request"
        assert caught.value.changes[0].startswith('$.text changed: "## 1 Task\\nFind tea.')
        assert caught.value.changes[1].startswith(
            '$.tools[0] changed: {"description": "Find a topic."'
        )
        assert any(change.startswith("$.history[0] changed") for change in caught.value.changes)

    def test_the_start_time_and_options_survive_and_new_events_carry_new_times(
        self, store: SyncStore
    ) -> None:
        """Overrides, deadline and extras come back; only events after the resume are new."""
        first_clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
        later_clock = FakeClock(datetime(2026, 1, 2, tzinfo=UTC))
        deadline = datetime(2027, 1, 1, tzinfo=UTC)
        ran: list[str] = []
        prompt = topic_prompt(lookup_tool(ran))
        with store:
            with pytest.raises(PromptEvaluationError):
                adapter(Model(fail_round_two=True), first_clock).evaluate(
                    prompt,
                    Topic(name="tea"),
                    store=store,
                    evaluation_id="e1",
                    session=Session(session_id=SESSION),
                    visibility_overrides={("notes",): SectionVisibility.FULL},
                    deadline=deadline,
                    disclosure=Disclosure(policy="manual"),
                    extras={"suffix": "!", "handle": object()},
                )
            bus = InProcessEventBus()
            executed: list[PromptExecuted] = []
            rendered: list[PromptRendered] = []
            bus.subscribe(PromptExecuted, executed.append)
            bus.subscribe(PromptRendered, rendered.append)
            resumed = adapter(Model(), later_clock).resume(
                "e1", prompt, store=store, bus=bus, extras={"handle": "given again"}
            )
        assert resumed.text == "Found: tea!"
        assert rendered == []  # the render was published (and logged) the first time
        assert resumed.rendered is not None
        assert dict(resumed.rendered.visibility_overrides) == {("notes",): SectionVisibility.FULL}
        (event,) = executed
        assert event.started_at == datetime(2026, 1, 1, tzinfo=UTC)
        assert event.finished_at.date() == datetime(2026, 1, 2).date()


class TestSessions:
    def test_an_empty_session_is_rebuilt_from_the_log(self, store: SyncStore) -> None:
        """A fresh session with the evaluation's id gets the old events, then the new ones."""
        prompt = topic_prompt(lookup_tool([]))
        with store:
            with pytest.raises(PromptEvaluationError):
                adapter(Model(fail_round_two=True)).evaluate(
                    prompt,
                    Topic(name="tea"),
                    store=store,
                    evaluation_id="e1",
                    session=Session(session_id=SESSION),
                )
            session = Session(session_id=SESSION)
            adapter(Model()).resume("e1", prompt, store=store, session=session)
        assert len(session.select(ToolInvoked)) == 1
        assert len(session.select(PromptFailed)) == 1
        assert len(session.select(PromptExecuted)) == 1
        assert len(session.select(PromptRendered)) == 1

    def test_a_session_that_holds_events_is_used_as_it_is(self, store: SyncStore) -> None:
        """The session of the process that started it is not given the old events twice."""
        prompt = topic_prompt(lookup_tool([]))
        bus = InProcessEventBus()
        session = Session(bus=bus, session_id=SESSION)
        with store:
            with pytest.raises(PromptEvaluationError):
                adapter(Model(fail_round_two=True)).evaluate(
                    prompt, Topic(name="tea"), store=store, evaluation_id="e1", session=session
                )
            adapter(Model()).resume("e1", prompt, store=store, session=session)
        assert len(session.select(ToolInvoked)) == 1
        assert len(session.select(PromptRendered)) == 1
        assert len(session.select(PromptExecuted)) == 1
        assert len(session.select(TextDelta)) == 0  # the default retention keeps none


def test_a_handler_event_that_cannot_be_stored_fails_its_call(store: SyncStore) -> None:
    """Recorded events must store: publishing one that cannot fails the call, named."""

    def leaky(params: Topic, *, context: ToolContext) -> ToolResult[str]:
        context.event_bus.publish(Leaky(callback=print))
        return ToolResult(message="published")

    tool = Tool[Topic, str](name="lookup", description="Leak.", handler=leaky)
    with store:
        response = adapter(Model()).evaluate(
            topic_prompt(tool), Topic(name="tea"), store=store, evaluation_id="e1"
        )
    result = response.tool_executions[0].result
    assert result.success is False
    assert "cannot dump a value of type builtin_function_or_method at $.callback" in result.message


@dataclass(frozen=True, slots=True, kw_only=True)
class Leaky:
    """An event holding a function: it cannot be stored."""

    callback: object


class TestRacingWriters:
    """Two processes resuming one evaluation agree on every step: the first writer wins."""

    def steps(self, store: Store, *, journal: tuple[Any, ...] = ()) -> DurableSteps:
        return DurableSteps(
            store=store,
            evaluation_id="e1",
            session_id=str(SESSION),
            prompt_name="topics",
            document={},
            bus=InProcessEventBus(),
            journal=journal,
        )

    def test_a_send_recorded_meanwhile_is_replayed_not_kept(self, tmp_path: Path) -> None:
        """A writer whose step lost gets the winner's reply, and its events are not logged."""

        async def scenario() -> tuple[Sent[Any], list[JSONValue]]:
            async with SQLiteStore(tmp_path / "race.db") as store:
                winner = self.steps(store)
                await winner.send("round:1/send", {"model": "m"}, _reply("theirs"))
                loser = self.steps(store)
                loser.bus.publish(
                    TextDelta(evaluation_id="e1", prompt_name="p", round=1, index=0, text="mine")
                )
                sent = await loser.send("round:1/send", {"model": "m"}, _reply("mine"))
                logged = [event.document for event in await store.read(str(SESSION))]
            return sent, logged

        sent, logged = asyncio.run(scenario())
        assert sent.reply == {"said": "theirs"}
        assert logged == []

    def test_a_call_recorded_meanwhile_is_replayed_not_published(self, tmp_path: Path) -> None:
        """The loser returns the winner's ToolInvoked, marked so that it is not published."""
        published: list[object] = []

        async def scenario() -> ToolInvoked:
            async with SQLiteStore(tmp_path / "race.db") as store:
                await self.steps(store).call("round:1/call:c1", _call(), None, _invoked("theirs"))
                loser = self.steps(store)
                bus = InProcessEventBus()
                bus.subscribe(object, published.append)
                loser = DurableSteps(
                    store=store,
                    evaluation_id="e1",
                    session_id=str(SESSION),
                    prompt_name="topics",
                    document={},
                    bus=bus,
                )
                event = await loser.call("round:1/call:c1", _call(), None, _invoked("mine"))
                loser.bus.publish(event)
                return event

        event = asyncio.run(scenario())
        assert event.result.message == "theirs"
        assert published == []


def _reply(said: str) -> Any:
    async def run() -> Sent[dict[str, str]]:
        return Sent(reply={"said": said}, deltas=())

    return run


def _call() -> ToolCall:
    return ToolCall(call_id="c1", name="lookup", arguments="{}")


def _invoked(message: str) -> Any:
    async def run() -> ToolInvoked:
        when = datetime(2026, 1, 1, tzinfo=UTC)
        return ToolInvoked(
            evaluation_id="e1",
            prompt_name="topics",
            adapter="offline",
            session_id=SESSION,
            name="lookup",
            call_id="c1",
            arguments={},
            params=None,
            result=ToolResult(message=message),
            rendered_output="",
            started_at=when,
            finished_at=when,
        )

    return run


def test_a_failed_checkpoint_that_cannot_be_saved_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The evaluation's own error reaches the caller; the store's is logged."""

    class Broken(SQLiteStore):
        async def save_checkpoint(self, evaluation_id: str, **options: Any) -> Any:
            if options.get("status") == "failed":
                raise StoreDatabaseError(operation="save_checkpoint", location="x", reason="full")
            return await super().save_checkpoint(evaluation_id, **options)

    with (
        SyncStore(Broken(tmp_path / "broken.db")) as store,
        caplog.at_level(logging.ERROR),
        pytest.raises(PromptEvaluationError, match="the model is down"),
    ):
        adapter(Model(fail_round_two=True)).evaluate(
            topic_prompt(lookup_tool([])), Topic(name="t"), store=store, evaluation_id="e1"
        )
    assert "could not save the failed checkpoint of evaluation e1" in caplog.text


def test_a_replayed_round_is_not_checkpointed_again(tmp_path: Path) -> None:
    """Checkpoints only move forward: rounds at or before the saved one are skipped."""

    async def scenario() -> list[tuple[int, str]]:
        async with SQLiteStore(tmp_path / "c.db") as store:
            steps = DurableSteps(
                store=store,
                evaluation_id="e1",
                session_id=str(SESSION),
                prompt_name="p",
                document={"format": 1},
                bus=InProcessEventBus(),
                saved=(2, "running"),
            )
            seen: list[tuple[int, str]] = []
            for progress in (
                Progress(round=1, status="running"),
                Progress(round=2, status="running"),
            ):
                await steps.checkpoint(progress)
                seen.append((await _round(store), "after"))
            await steps.checkpoint(Progress(round=2, status="paused"))
            checkpoint = await store.load_checkpoint("e1")
            assert checkpoint is not None
            seen.append((checkpoint.round, checkpoint.status))
            return seen

    assert asyncio.run(scenario()) == [(-1, "after"), (-1, "after"), (2, "paused")]


async def _round(store: Store) -> int:
    checkpoint = await store.load_checkpoint("e1")
    return -1 if checkpoint is None else checkpoint.round


class TestRequestDigests:
    def test_a_body_is_fingerprinted_member_by_member(self) -> None:
        """Scalars hash whole; arrays item by item."""
        parts = request_digest({"model": "m", "input": [{"a": 1}, {"b": 2}]})
        assert set(parts) == {"model", "input"}
        assert isinstance(parts["input"], list)
        assert len(parts["input"]) == 2

    def test_changes_name_added_removed_and_resized_parts(self) -> None:
        """Each difference is a JSON path with the new value."""
        recorded = request_digest({"model": "m", "input": [1, 2, 3], "gone": True})
        changes = digest_changes(recorded, {"model": "n", "input": [1, 9], "temperature": 0})
        assert changes == (
            '$.model changed: "n"',
            "$.input[1] changed: 9",
            "$.input has 2 items, 3 were recorded",
            "$.temperature added: 0",
            "$.gone removed",
        )
        grown = digest_changes(request_digest({"input": [1]}), {"input": [1, {"x": "y"}]})
        assert grown == ('$.input[1] added: {"x": "y"}',)
        assert digest_changes(recorded, {"model": "m", "input": [1, 2, 3], "gone": True}) == ()

    def test_requests_of_other_shapes_are_described_by_their_dump(self) -> None:
        """A request that is neither a body nor a TurnRequest is fingerprinted whole."""
        assert digest_view(Topic(name="x")) == {
            "request": {"$type": "tests.adapters.test_durable:Topic", "name": "x"}
        }
        assert digest_view({"when": datetime(2026, 1, 1, tzinfo=UTC), "n": (1, 2)}) == {
            "when": {"$type": "datetime", "value": "2026-01-01T00:00:00+00:00"},
            "n": [1, 2],
        }

    def test_an_sdk_request_with_another_option_does_not_replay(
        self, openai_loopback: OpenAILoopback, tmp_path: Path
    ) -> None:
        """On a real wire: a resumed adapter with another request option is refused."""
        openai_loopback.reply(
            ok(
                response_body(
                    {
                        "id": "fc1",
                        "type": "function_call",
                        "status": "completed",
                        "call_id": "c1",
                        "name": "lookup",
                        "arguments": json.dumps({"name": "tea"}),
                    }
                )
            ),
        )
        prompt = topic_prompt(lookup_tool([]))
        with SyncStore(SQLiteStore(tmp_path / "sdk.db")) as store:
            with pytest.raises(PromptEvaluationError):
                openai_loopback.adapter().evaluate(
                    prompt, Topic(name="tea"), store=store, evaluation_id="e1"
                )
            assert len(openai_loopback.requests) == 2  # the second found no canned reply
            with pytest.raises(ReplayMismatchError) as caught:
                openai_loopback.adapter(request_options={"temperature": 0}).resume(
                    "e1", prompt, store=store
                )
        assert caught.value.changes == ("$.temperature added: 0",)
        assert len(openai_loopback.requests) == 2


def test_event_records_name_the_event_type() -> None:
    """A log row carries the event's type name and its EVENT_DOCUMENT envelope."""
    record = event_record(
        TextDelta(evaluation_id="e", prompt_name="p", round=1, index=0, text="hi")
    )
    assert record.type_name == "weakincentives.runtime:TextDelta"
    assert isinstance(record.document, dict)
    assert (record.document["kind"], record.document["version"]) == ("weakincentives.event", 1)


def test_deadlines_are_restored_as_the_same_instant(store: SyncStore) -> None:
    """A resumed evaluation keeps its deadline: one already past fails at once (phase request)."""
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with pytest.raises(PromptEvaluationError):
            adapter(Model(fail_round_two=True), clock).evaluate(
                prompt,
                Topic(name="t"),
                store=store,
                evaluation_id="e1",
                deadline=datetime(2026, 1, 1, 0, 1, tzinfo=UTC),
            )
        late = FakeClock(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=1))
        with pytest.raises(
            PromptEvaluationError, match="deadline 2026-01-01T00:01:00\\+00:00 passed"
        ) as caught:
            adapter(Model(), late).resume("e1", prompt, store=store)
    assert caught.value.phase == "request"


def test_a_durable_evaluation_runs_on_the_callers_loop(tmp_path: Path) -> None:
    """evaluate_async and resume_async with an async store, in one event loop."""

    async def scenario() -> PromptResponse[Any]:
        async with SQLiteStore(tmp_path / "async.db") as store:
            prompt = topic_prompt(lookup_tool([]))
            with pytest.raises(PromptEvaluationError):
                await adapter(Model(fail_round_two=True)).evaluate_async(
                    prompt, Topic(name="t"), store=store, evaluation_id="e1"
                )
            return await adapter(Model()).resume_async("e1", prompt, store=store)

    assert asyncio.run(scenario()).text == "Found: tea"


def test_a_crash_after_the_final_step_finishes_without_writing_again(store: SyncStore) -> None:
    """The final step and its events are in; only the done checkpoint was lost."""
    prompt = topic_prompt(lookup_tool([]))
    with store:
        first = adapter(Model()).evaluate(
            prompt,
            Topic(name="t"),
            store=store,
            evaluation_id="e1",
            session=Session(session_id=SESSION),
        )
        done = store.load_checkpoint("e1")
        assert done is not None
        assert isinstance(done.document, dict)
        running = {key: value for key, value in done.document.items() if key != "response"}
        store.save_checkpoint(
            "e1", round=done.round, status="running", document=running, session_id=str(SESSION)
        )
        logged = log_types(store)
        again = adapter(Model()).resume("e1", prompt, store=store)
        assert again == first
        assert log_types(store) == logged
        finished = store.load_checkpoint("e1")
        assert finished is not None
        assert finished.status == "done"


def test_a_reducer_failing_on_the_rebuild_is_logged(
    store: SyncStore, caplog: pytest.LogCaptureFixture
) -> None:
    """Rebuilding applies the log as recording did: a failing reducer is reported."""
    prompt = topic_prompt(lookup_tool([]))

    def refuse(
        slice_values: tuple[ToolInvoked, ...], event: ToolInvoked
    ) -> tuple[ToolInvoked, ...]:
        raise RuntimeError("no")

    with store:
        with pytest.raises(PromptEvaluationError):
            adapter(Model(fail_round_two=True)).evaluate(
                prompt,
                Topic(name="t"),
                store=store,
                evaluation_id="e1",
                session=Session(session_id=SESSION),
            )
        session = Session(session_id=SESSION)
        session.register_reducer(ToolInvoked, refuse)
        with caplog.at_level(logging.ERROR, logger="weakincentives.adapters"):
            adapter(Model()).resume("e1", prompt, store=store, session=session)
    assert f"session {SESSION} failed to record weakincentives.runtime:ToolInvoked again" in (
        caplog.text
    )
    assert len(session.select(PromptRendered)) == 1


def test_approval_requests_store_the_arguments_as_json(tmp_path: Path) -> None:
    """Decoded JSON text, a mapping as it is, and text that is not JSON as the text."""

    async def scenario() -> list[JSONValue]:
        async with SQLiteStore(tmp_path / "a.db") as store:
            steps = DurableSteps(
                store=store,
                evaluation_id="e1",
                session_id=str(SESSION),
                prompt_name="p",
                document={},
                bus=InProcessEventBus(),
            )
            tool = lookup_tool([])
            cases: list[tuple[str, str | dict[str, JSONValue]]] = [
                ("a", '{"x": 1}'),
                ("b", {"y": [1]}),
                ("c", "{oops"),
            ]
            for call_id, arguments in cases:
                call = ToolCall(call_id=call_id, name="lookup", arguments=arguments)
                assert await steps.approval(f"round:1/approval:{call_id}", call, tool) is None
            return [approval.arguments for approval in await store.read_approvals("e1")]

    assert asyncio.run(scenario()) == [{"x": 1}, {"y": [1]}, "{oops"]


@pytest.mark.parametrize("with_bus", [True, False])
def test_a_nested_evaluation_in_a_handler_records_with_its_call(
    store: SyncStore, with_bus: bool
) -> None:
    """A handler evaluates another prompt on its context's bus and session: its events are
    written with the call that ran it, and the session records each once."""
    inner_prompt = Prompt(
        ns="tests/durable",
        key="inner",
        sections=[MarkdownSection(title="X", key="x", template="x")],
    )

    def delegate(params: Topic, *, context: ToolContext) -> ToolResult[str]:
        with Adapter(OfflineModel([ScriptedTurn(text="inner answer")])) as nested:
            answer = nested.evaluate(inner_prompt, bus=context.event_bus, session=context.session)
        return ToolResult(message=answer.text)

    tool = Tool[Topic, str](name="lookup", description="Delegate.", handler=delegate)
    session = Session(bus=InProcessEventBus() if with_bus else None, session_id=SESSION)
    with store:
        response = adapter(Model()).evaluate(
            topic_prompt(tool), Topic(name="t"), store=store, evaluation_id="e1", session=session
        )
        assert response.text == "Found: inner answer"
        (call_step,) = [step for step in store.read_steps("e1") if step.key == "round:1/call:c1"]
        assert call_step.key == "round:1/call:c1"
        assert log_types(store) == [
            "PromptRendered",
            "TextDelta",
            "TextDelta",
            "PromptRendered",  # the nested evaluation's, written with the call
            "TextDelta",
            "PromptExecuted",
            "ToolInvoked",
            *["TextDelta"] * 4,  # "Found: inner answer" in pieces of 5 characters
            "PromptExecuted",
        ]
    assert len(session.select(PromptExecuted)) == 2
    assert len(session.select(PromptRendered)) == 2


def test_a_result_that_cannot_be_stored_fails_the_evaluation_naming_the_call(
    store: SyncStore,
) -> None:
    """A durable evaluation records every result: an unstorable one is a phase tool error."""

    @dataclass(frozen=True)
    class Local:  # defined in a function: it has no name a later process could load
        value: int

    def local(params: Topic, *, context: ToolContext) -> ToolResult[Local]:
        return ToolResult(message="made", value=Local(value=1))

    tool = Tool[Topic, Local](name="lookup", description="Local.", handler=local)
    with (
        store,
        pytest.raises(
            PromptEvaluationError, match="call 'c1' of tool 'lookup' cannot be recorded"
        ) as caught,
    ):
        adapter(Model()).evaluate(
            topic_prompt(tool), Topic(name="t"), store=store, evaluation_id="e1"
        )
    assert caught.value.phase == "tool"
    assert "Local is defined inside a function" in caught.value.reason


@dataclass(frozen=True, slots=True, kw_only=True)
class EmptyFirst(OfflineModel):
    """An offline model whose stream starts with an empty piece, as some servers send."""

    async def send(self, request: TurnRequest, attempt: Any, on_text: Any) -> Any:
        on_text("")
        return await OfflineModel.send(self, request, attempt, on_text)


def test_empty_stream_pieces_are_not_recorded(store: SyncStore) -> None:
    """Only text is a delta: the recorded send keeps the non-empty pieces, and replays them."""
    settings = LoopSettings(clock=FakeClock(), output_retries=0)
    model = EmptyFirst(responder=Model(fail_round_two=True), stream_chunk_size=5)
    prompt = topic_prompt(lookup_tool([]))
    with store:
        with Adapter(model, settings=settings) as first, pytest.raises(PromptEvaluationError):
            first.evaluate(prompt, Topic(name="t"), store=store, evaluation_id="e1")
        (send,) = [step for step in store.read_steps("e1") if step.key == "round:1/send"]
        assert isinstance(send.document, dict)
        assert send.document["deltas"] == ["Looki", "ng."]
        resumed = adapter(Model()).resume("e1", prompt, store=store)
    assert resumed.text == "Found: tea"
