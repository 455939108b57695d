"""adapter.stream: an evaluation's events as an iterator, over the one loop.

Async and sync iteration yield the same items in the same order: text deltas, tool
calls with their results, retries, partial structured output, and the response last.
Leaving early cancels the evaluation (recorded as phase ``cancelled``); a consumer that
stops reading stops the evaluation at its next request.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, Reply, api_error, ok, response_body
from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    PartialOutput,
    PromptResponse,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.adapters._step_runner import IN_PROCESS
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import (
    InProcessEventBus,
    PromptFailed,
    RequestRetried,
    Session,
    TextDelta,
    ToolInvoked,
)
from weakincentives.serde import JSONValue


@dataclass(frozen=True)
class Owner:
    name: str
    team: str
    tickets: int


@dataclass(frozen=True)
class Lookup:
    key: str


def lookup(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
    """Look a key up."""
    return ToolResult(message=f"{params.key} belongs to ada", value="ada")


def owner_prompt() -> Prompt[Owner]:
    return Prompt[Owner](
        ns="tests/stream",
        key="owner",
        sections=[
            MarkdownSection(title="Task", template="Who owns it?", tools=[Tool.wrap(lookup)])
        ],
    )


ANSWER = '{"name": "ada", "team": "core", "tickets": 12}'


def owner_adapter() -> Adapter[OfflineModel]:
    return OfflineAdapter(
        [
            ScriptedTurn(
                text="Checking.",
                calls=(ScriptedCall(name="lookup", arguments={"key": "db"}, call_id="c1"),),
            ),
            ScriptedTurn(text=ANSWER),
        ],
        stream_chunk_size=5,
    )


def describe(item: object) -> tuple[Any, ...]:
    """A compact, comparable view of a stream item."""
    if isinstance(item, TextDelta):
        return ("text", item.round, item.text)
    if isinstance(item, ToolInvoked):
        return ("tool", item.name, item.result.message)
    if isinstance(item, PartialOutput):
        return ("partial", item.round, dict(item.fields))
    if isinstance(item, PromptResponse):
        return ("response", item.output)
    return (type(item).__name__,)


EXPECTED_TAIL = [
    ("partial", 2, {"name": "ada"}),
    ("partial", 2, {"name": "ada", "team": "core"}),
    ("partial", 2, {"name": "ada", "team": "core", "tickets": 12}),
    ("response", Owner(name="ada", team="core", tickets=12)),
]


class TestIteration:
    def test_async_iteration_yields_deltas_calls_partials_and_the_response(self) -> None:
        """Every item, in order; partial objects hold only the fields complete so far."""

        async def collect() -> list[tuple[Any, ...]]:
            return [describe(item) async for item in owner_adapter().stream(owner_prompt())]

        items = asyncio.run(collect())
        assert items[:3] == [
            ("text", 1, "Check"),
            ("text", 1, "ing."),
            ("tool", "lookup", "db belongs to ada"),
        ]
        assert [item for item in items if item[0] != "text"][1:] == EXPECTED_TAIL
        joined = "".join(item[2] for item in items if item[0] == "text" and item[1] == 2)
        assert joined == ANSWER

    def test_sync_iteration_yields_the_same_items(self) -> None:
        """A plain for loop runs the same iterator on the background loop."""

        async def collect() -> list[tuple[Any, ...]]:
            return [describe(item) async for item in owner_adapter().stream(owner_prompt())]

        stream = owner_adapter().stream(owner_prompt())
        assert [describe(item) for item in stream] == asyncio.run(collect())
        assert stream.response is not None
        assert stream.response.output == Owner(name="ada", team="core", tickets=12)

    def test_only_this_evaluations_events_are_yielded(self) -> None:
        """Events of other evaluations on the same bus stay out of the stream."""
        bus = InProcessEventBus()
        stream = OfflineAdapter([ScriptedTurn(text="Hi")]).stream(owner_prompt(), bus=bus)
        stranger = TextDelta(evaluation_id="other", prompt_name="x", round=1, index=0, text="no")

        def also_publish(event: TextDelta) -> None:
            if event.evaluation_id == stream.evaluation_id:
                bus.publish(stranger)

        bus.subscribe(TextDelta, also_publish)
        with pytest.raises(PromptEvaluationError):
            list(stream)

    def test_a_failed_evaluation_raises_after_its_events(self) -> None:
        """The error comes from the iterator once the events before it were yielded.

        Tools are offered, so the first answer asks for a tools-free final turn (the
        answer's schema goes there); that answer is rejected once, then fails.
        """
        seen: list[tuple[Any, ...]] = []
        turns = [
            ScriptedTurn(text='{"name": 1}'),
            ScriptedTurn(text="nope"),
            ScriptedTurn(text="x"),
        ]
        with pytest.raises(PromptEvaluationError, match="not valid JSON for Owner"):
            seen.extend(describe(item) for item in OfflineAdapter(turns).stream(owner_prompt()))
        assert seen == [
            ("text", 1, '{"name": 1}'),
            ("text", 2, "nope"),
            ("OutputRejected",),
            ("text", 3, "x"),
        ]

    def test_retries_are_stream_items(self, openai_loopback: OpenAILoopback) -> None:
        """A retried request shows up between the text of the evaluation."""
        message: JSONValue = {
            "type": "message",
            "id": "m",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
        }
        openai_loopback.reply(
            Reply(status=500, body=api_error("x", kind="server"), headers={"retry-after-ms": "1"}),
            ok(response_body(message)),
        )

        async def no_wait(seconds: float) -> None:
            del seconds

        adapter = openai_loopback.adapter(max_retries=1, settings=LoopSettings(sleep=no_wait))
        prompt = Prompt(ns="t", key="k", sections=[MarkdownSection(title="T", template="Go")])
        items = list(adapter.stream(prompt))
        assert [type(item).__name__ for item in items] == [
            "RequestRetried",
            "TextDelta",
            "PromptResponse",
        ]
        retried = items[0]
        assert isinstance(retried, RequestRetried)
        assert (retried.attempt, retried.status_code) == (1, 500)

    def test_a_stream_is_iterated_once(self) -> None:
        """A second iteration is refused: start another stream instead."""
        stream = OfflineAdapter([ScriptedTurn(text="Hi")]).stream(owner_prompt())
        stream.__aiter__()
        with pytest.raises(ConfigValidationError, match="already iterated"):
            iter(stream).__next__()

    def test_a_given_evaluation_id_names_the_stream_and_its_response(self) -> None:
        """evaluation_id= reaches the stream and the evaluation it runs."""
        stream = OfflineAdapter([ScriptedTurn(text=ANSWER)]).stream(
            owner_prompt(), evaluation_id="ev-7"
        )
        items = list(stream)
        assert stream.evaluation_id == "ev-7"
        response = items[-1]
        assert isinstance(response, PromptResponse)
        assert response.evaluation_id == "ev-7"

    def test_steps_is_not_a_stream_option(self) -> None:
        """A stream runs its steps in process: steps= is refused at the call, by name."""
        with pytest.raises(
            TypeError, match=r"^stream\(\) got an unexpected keyword argument 'steps'$"
        ):
            OfflineAdapter([ScriptedTurn(text="Hi")]).stream(
                owner_prompt(),
                steps=IN_PROCESS,  # type: ignore[call-arg]  # the refusal under test
            )

    def test_a_bus_that_cannot_be_subscribed_to_is_refused(self) -> None:
        """A publisher without subscribe cannot feed a stream."""

        class Publisher:
            def publish(self, event: object) -> None:
                del event

        with pytest.raises(ConfigValidationError, match="must be an EventBus") as caught:
            OfflineAdapter([ScriptedTurn(text="Hi")]).stream(owner_prompt(), bus=Publisher())
        assert caught.value.field_name == "bus"


class TestCancellation:
    def test_leaving_an_async_stream_cancels_the_evaluation(self) -> None:
        """aclose (via aclosing) cancels a running handler; PromptFailed says cancelled."""
        started = asyncio.Event()
        outcome: list[str] = []

        async def stuck(params: Lookup, *, context: ToolContext) -> ToolResult[str]:
            """Never finishes."""
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                outcome.append("cancelled")
                raise
            raise AssertionError("unreachable")

        prompt = Prompt(
            ns="t",
            key="k",
            sections=[MarkdownSection(title="T", template="Go", tools=[Tool.wrap(stuck)])],
        )
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    text="Wait.", calls=(ScriptedCall(name="stuck", arguments={"key": "a"}),)
                )
            ]
        )
        session = Session()

        async def consume() -> None:
            async with contextlib.aclosing(adapter.stream(prompt, session=session)) as stream:
                async for item in stream:
                    assert isinstance(item, TextDelta)
                    await started.wait()
                    break

        asyncio.run(consume())
        assert outcome == ["cancelled"]
        (failed,) = session.select(PromptFailed)
        assert failed.phase == "cancelled"

    def test_breaking_out_of_a_sync_stream_cancels_the_evaluation(self) -> None:
        """The generator's close cancels the evaluation on the background loop."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    text="a", calls=(ScriptedCall(name="lookup", arguments={"key": "a"}),)
                ),
                ScriptedTurn(
                    text="b", calls=(ScriptedCall(name="lookup", arguments={"key": "b"}),)
                ),
                ScriptedTurn(text=ANSWER),
            ]
        )
        session = Session()
        stream = adapter.stream(owner_prompt(), session=session, max_buffered=0)
        for item in stream:
            assert describe(item) == ("text", 1, "a")
            break
        (failed,) = session.select(PromptFailed)
        assert failed.phase == "cancelled"
        assert adapter.provider.remaining_turns >= 1
        assert stream.response is None


class TestBackpressure:
    def test_a_consumer_that_stops_reading_stops_the_evaluation_at_its_next_request(
        self,
    ) -> None:
        """With max_buffered=0 the second request waits until the consumer reads on."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(
                    text="a", calls=(ScriptedCall(name="lookup", arguments={"key": "a"}),)
                ),
                ScriptedTurn(
                    text="b", calls=(ScriptedCall(name="lookup", arguments={"key": "b"}),)
                ),
                ScriptedTurn(text=ANSWER),
            ]
        )
        bus = InProcessEventBus()
        called = asyncio.Event()
        bus.subscribe(ToolInvoked, lambda event: called.set())

        async def consume() -> tuple[int, int]:
            stream = adapter.stream(owner_prompt(), bus=bus, max_buffered=0)
            events = stream.__aiter__()
            await anext(events)  # round 1's text
            await called.wait()  # round 1's call published: the loop moves to round 2
            for _ in range(50):  # give the loop every chance to send round 2 (it must not)
                await asyncio.sleep(0)
            paused = len(adapter.provider.requests)
            rest = [item async for item in events]
            assert isinstance(rest[-1], PromptResponse)
            return paused, len(adapter.provider.requests)

        assert asyncio.run(consume()) == (1, 3)

    def test_a_negative_buffer_is_refused(self) -> None:
        """max_buffered below zero is a ConfigValidationError naming it."""
        with pytest.raises(ConfigValidationError, match="max_buffered") as caught:
            OfflineAdapter([ScriptedTurn(text="Hi")]).stream(owner_prompt(), max_buffered=-1)
        assert caught.value.field_name == "max_buffered"
