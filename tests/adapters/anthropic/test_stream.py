"""Streamed Messages API replies: events folded into text deltas and one message."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.anthropic.bodies import (
    cited,
    events,
    message,
    search_result,
    search_results,
    server_tool_use,
    streamed,
    text,
    tool_use,
    usage,
)
from tests.adapters.anthropic.test_messages import claude
from tests.adapters.conftest import OpenAILoopback, Reply
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from weakincentives.adapters._sse import ServerEvent
from weakincentives.adapters.anthropic._stream import MessagesStreamReader
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    TextDelta,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.serde import JSONValue
from weakincentives.tools import WebSearchResult, web_search_tool

anthropic = pytest.importorskip("anthropic")

STATUS = "https://status.example.com"


class TestStreamedReplies:
    def test_text_arrives_as_deltas_and_usage_is_the_final_count(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Deltas join to the answer; message_delta's cumulative usage replaces the start's."""
        body = message(text("Lisbon will be sunny."), usage_=usage(80, 7, cache_read=20))
        parts = ["Lisbon ", "will be ", "sunny."]
        openai_loopback.reply(events(*streamed(body, text_pieces=parts)))
        bus = InProcessEventBus()
        deltas: list[str] = []
        bus.subscribe(TextDelta, lambda event: deltas.append(event.text))
        response = claude(openai_loopback, stream=True).evaluate(
            trip_prompt((WEATHER,)), TRIP, bus=bus
        )
        assert deltas == parts
        assert response.text == "Lisbon will be sunny."
        assert response.usage == TokenUsage(
            input_tokens=100, output_tokens=7, cached_input_tokens=20
        )
        assert openai_loopback.bodies[0]["stream"] is True

    def test_tool_input_streamed_in_pieces_is_one_call(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """input_json_delta pieces join into the tool input, replayed as a whole block."""
        calls = message(text("Checking."), tool_use("toolu_1", "get_weather", {"city": "Lisbon"}))
        openai_loopback.reply(events(*streamed(calls)), events(*streamed(message(text("Sunny.")))))
        response = claude(openai_loopback, stream=True).evaluate(trip_prompt((WEATHER,)), TRIP)
        (execution,) = response.tool_executions
        assert execution.call.arguments == '{"city": "Lisbon"}'
        replayed = openai_loopback.bodies[1]["messages"][1]
        assert replayed == {"role": "assistant", "content": calls["content"]}

    def test_search_results_and_citations_survive_streaming(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Server tool blocks arrive whole; citations_delta attaches citations to their text."""
        body = message(
            server_tool_use("srvtoolu_1", "web_search", {"query": "status page"}),
            search_results("srvtoolu_1", search_result(STATUS, "Status")),
            text("All systems operational.", cited(STATUS, "Status", "All systems go")),
        )
        openai_loopback.reply(events(*streamed(body)))
        prompt = Prompt(
            ns="claude",
            key="search",
            sections=[
                MarkdownSection(title="T", template="Go.", hosted_tools=(web_search_tool(),))
            ],
        )
        response = claude(openai_loopback, stream=True).evaluate(prompt)
        result = response.hosted_outputs["web_search"]
        assert isinstance(result, WebSearchResult)
        assert [citation.url for citation in result.citations] == [STATUS]
        assert result.calls[0].queries == ("status page",)

    def test_the_async_client_streams_too(self, openai_loopback: OpenAILoopback) -> None:
        """AsyncAnthropic with evaluate_async reads the same stream."""
        openai_loopback.reply(events(*streamed(message(text("Hi there.")))))
        client = anthropic.AsyncAnthropic(
            base_url=openai_loopback.base_url.removesuffix("/v1"), api_key="k", max_retries=0
        )
        adapter = claude(openai_loopback, stream=True, client=client)
        response = asyncio.run(adapter.evaluate_async(trip_prompt((WEATHER,)), TRIP))
        assert response.text == "Hi there."


START: dict[str, JSONValue] = {"type": "message_start", "message": message()}


@pytest.mark.parametrize(
    ("stream", "reason"),
    [
        (
            events(START, {"type": "content_block_start", "index": 0, "content_block": text("")}),
            "the stream ended before the response completed",
        ),
        (
            events(
                START,
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ),
            "the provider reported an error mid-stream: Overloaded (overloaded_error)",
        ),
        (events(START, {"type": ["ping"]}), "a stream event's type is list, not a string"),
        (
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": {"type": ["text"]}},
            ),
            "content block 0 has no string type",
        ),
        (
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {"type": "content_block_delta", "index": 0, "delta": {"type": {"t": 1}}},
            ),
            "a delta for block 0 has no string type",
        ),
        (
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": 5},
                },
            ),
            "the 'text' of the text_delta for block 0 is int, not a string",
        ),
        (
            events(
                START,
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": tool_use("t", "get_weather", {}),
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": {"city": "Porto"}},
                },
                {"type": "content_block_stop", "index": 0},
            ),
            "the 'partial_json' of the input_json_delta for block 0 is dict, not a string",
        ),
        (
            Reply(
                raw=b"event: ping\ndata: [nope\n\n", headers={"content-type": "text/event-stream"}
            ),
            "a stream event is not a JSON object",
        ),
        (
            events({"type": "content_block_stop", "index": 0}),
            "an event arrived before message_start",
        ),
        (events({"type": "message_start"}), "message_start carries no message object"),
        (
            events(START, {"type": "content_block_start", "index": 0}),
            "content_block_start carries no content block",
        ),
        (
            events(START, {"type": "content_block_start", "index": "0", "content_block": text("")}),
            "a content block event has no integer index",
        ),
        (
            events(
                START, {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta"}}
            ),
            "a delta for block 3, which was not started",
        ),
        (
            events(START, {"type": "content_block_stop", "index": 2}),
            "block 2 was stopped but never started",
        ),
        (
            events(
                START,
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": tool_use("t", "get_weather", {}),
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
                },
                {"type": "content_block_stop", "index": 0},
            ),
            "the input of block 0 is not a JSON object",
        ),
        (
            # Issue 26 L3: the tool's input arrived in pieces but the block never closed;
            # running the tool with {} (its defaults) would act on input the model never gave.
            events(
                START,
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": tool_use("t", "get_weather", {}),
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '{"city": '},
                },
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": '"Porto"}'},
                },
                {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
                {"type": "message_stop"},
            ),
            "the message stopped with content block 0 never closed (no content_block_stop)",
        ),
        (
            # Issue 26 L4: a second start of index 0 would replace what subscribers saw.
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Checking the weather. "},
                },
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Sunny."},
                },
                {"type": "content_block_stop", "index": 0},
                {"type": "message_stop"},
            ),
            "content block 0 was started twice",
        ),
        (
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {"type": "content_block_stop", "index": 0},
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "late"},
                },
            ),
            "a delta for block 0, which is already closed",
        ),
        (
            events(
                START,
                {"type": "content_block_start", "index": 0, "content_block": text("")},
                {"type": "content_block_stop", "index": 0},
                {"type": "content_block_stop", "index": 0},
            ),
            "block 0 was stopped twice",
        ),
    ],
    ids=[
        "cut-off",
        "error-event",
        "event-type-a-list",
        "block-type-a-list",
        "delta-type-an-object",
        "text-delta-a-number",
        "input-delta-decoded",
        "garbage",
        "no-start",
        "start-without-message",
        "block-without-content",
        "index-not-integer",
        "delta-for-unknown-block",
        "stop-for-unknown-block",
        "broken-tool-input",
        "tool-input-never-closed",
        "block-started-twice",
        "delta-after-stop",
        "stopped-twice",
    ],
)
def test_a_broken_stream_is_a_response_error_and_not_a_success(
    openai_loopback: OpenAILoopback, stream: Reply, reason: str
) -> None:
    """Phase response and PromptFailed; nothing recorded as executed."""
    openai_loopback.reply(stream)
    bus = InProcessEventBus()
    session = Session(bus=bus)
    with pytest.raises(PromptEvaluationError) as caught:
        claude(openai_loopback, stream=True).evaluate(
            trip_prompt((WEATHER,)), TRIP, bus=bus, session=session
        )
    assert caught.value.phase == "response"
    assert caught.value.reason.startswith(reason)
    assert session.select(ToolInvoked) == ()
    assert session.select(PromptExecuted) == ()
    assert session.select(PromptFailed)[0].phase == "response"


class TestReader:
    def test_what_the_reader_does_not_know_is_left_out(self) -> None:
        """An unknown event, an unknown delta and a delta missing its piece change nothing."""
        seen: list[str] = []
        reader = MessagesStreamReader(seen.append, prompt_name="p")
        body = message(text("Hi."))
        events: list[JSONValue] = [
            {"type": "message_start", "message": {**body, "content": [], "stop_reason": None}},
            {"type": "content_block_start", "index": 0, "content_block": text("")},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "Hi."},
            },
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "future_delta", "x": 1}},
            {"type": "content_block_future", "index": 0},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}},
            {"type": "message_stop"},
        ]
        for data in events:
            reader.read(ServerEvent(event=None, data=json.dumps(data)))
        assert reader.result()["content"] == [text("Hi.")]
        assert seen == ["Hi."]

    def test_thinking_signatures_stop_details_and_container_are_kept(self) -> None:
        """Everything the next request must replay, and what errors read, is in the message."""
        reader = MessagesStreamReader(lambda piece: None, prompt_name="p")
        container = {"id": "container_1", "expires_at": "2026-01-01T00:00:00Z"}
        for data in (
            {"type": "message_start", "message": message(usage_=usage(10, 1))},
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": ""},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "Hm"},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": server_tool_use("s", "code_execution", {}),
            },
            {"type": "content_block_stop", "index": 1},
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "refusal",
                    "stop_details": {"type": "refusal"},
                    "container": container,
                },
                "usage": {"output_tokens": 9, "input_tokens": None},
            },
            {"type": "message_stop"},
            {"type": "message_start", "message": {}},
        ):
            reader.read(ServerEvent(event=None, data=json.dumps(data)))
        body = reader.result()
        assert body["content"] == [
            {"type": "thinking", "thinking": "Hm", "signature": "sig"},
            server_tool_use("s", "code_execution", {}),
        ]
        assert body["stop_reason"] == "refusal"
        assert body["stop_details"] == {"type": "refusal"}
        assert body["container"] == container
        counts = body["usage"]
        assert isinstance(counts, dict)
        assert (counts["output_tokens"], counts["input_tokens"]) == (9, 10)


def _split(text: str, cuts: list[int]) -> list[str]:
    """``text`` cut at ``cuts`` (positions modulo its length), keeping empty pieces out."""
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    return [piece for piece in pieces if piece]


_JSON_OBJECTS = st.dictionaries(
    st.text(max_size=4), st.integers() | st.text(max_size=6) | st.booleans(), max_size=3
)


class TestChunkings:
    @given(
        answer=st.text(min_size=1, max_size=40),
        arguments=_JSON_OBJECTS,
        text_cuts=st.lists(st.integers(0, 200), max_size=8),
        json_cuts=st.lists(st.integers(0, 200), max_size=8),
        opening=st.integers(0, 40),
    )
    def test_any_split_of_text_and_tool_input_folds_into_the_same_message(
        self,
        answer: str,
        arguments: dict[str, JSONValue],
        text_cuts: list[int],
        json_cuts: list[int],
        opening: int,
    ) -> None:
        """However the deltas split the text (some of it in the block's start) and the tool
        input, the message is the non-streamed one and subscribers saw exactly its text."""
        body = message(text(answer), tool_use("toolu_1", "get_weather", arguments))
        first = answer[: opening % (len(answer) + 1)]
        rest = answer[len(first) :]
        tool_input = json.dumps(arguments)
        text_deltas: list[JSONValue] = [
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}
            for p in _split(rest, text_cuts)
        ]
        json_deltas: list[JSONValue] = [
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in _split(tool_input, json_cuts)
        ]
        stream: list[JSONValue] = [
            {"type": "message_start", "message": {**body, "content": [], "stop_reason": None}},
            {"type": "content_block_start", "index": 0, "content_block": text(first)},
            *text_deltas,
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": tool_use("toolu_1", "get_weather", {}),
            },
            *json_deltas,
            {"type": "content_block_stop", "index": 1},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
            {"type": "message_stop"},
        ]
        seen: list[str] = []
        reader = MessagesStreamReader(seen.append, prompt_name="p")
        for data in stream:
            reader.read(ServerEvent(event=None, data=json.dumps(data)))
        assert reader.result()["content"] == body["content"]
        assert "".join(seen) == answer
