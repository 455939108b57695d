"""Streamed Chat Completions: chunks folded into text deltas and one completion body."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.conftest import OpenAILoopback, Reply, ok
from tests.adapters.openai.chat_bodies import (
    chat_stream,
    chat_usage,
    chunk,
    completion,
    text_chunks,
)
from tests.adapters.openai.test_chat import chat_adapter
from tests.adapters.openai.test_responses import LISBON_OUTPUT, TRIP, WEATHER, trip_prompt
from weakincentives.adapters._sse import ServerEvent
from weakincentives.adapters.anthropic._stream import MessagesStreamReader
from weakincentives.adapters.openai._chat_stream import ChatStreamReader
from weakincentives.adapters.openai._stream import ResponsesStreamReader
from weakincentives.errors import PromptEvaluationError
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    TextDelta,
    TokenUsage,
)
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")


class TestStreamedReplies:
    def test_text_arrives_as_deltas_and_usage_is_kept(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Deltas join to the answer; the request asks for usage in the stream."""
        parts = ["Lisbon ", "will be ", "sunny."]
        openai_loopback.reply(chat_stream(text_chunks(parts, usage=chat_usage(90, 9))))
        bus = InProcessEventBus()
        deltas: list[str] = []
        bus.subscribe(TextDelta, lambda event: deltas.append(event.text))
        adapter = chat_adapter(
            openai_loopback, stream=True, request_options={"stream_options": {"x": 1}}
        )
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP, bus=bus)
        assert deltas == parts
        assert response.text == "Lisbon will be sunny."
        assert response.usage == TokenUsage(input_tokens=90, output_tokens=9)
        body = openai_loopback.bodies[0]
        assert body["stream"] is True
        assert body["stream_options"] == {"x": 1, "include_usage": True}

    def test_tool_call_fragments_are_joined_per_index(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Ids and names come first, arguments in pieces; calls are ordered by index."""
        fragments = [
            chunk({"role": "assistant", "content": None}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Porto"}'},
                        }
                    ]
                }
            ),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": ""},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Lisbon"}'}}]}),
            chunk({}, finish_reason="tool_calls"),
            chunk(usage=chat_usage(50, 20)),
        ]
        openai_loopback.reply(
            chat_stream(fragments), chat_stream(text_chunks(["Sunny and cloudy."]))
        )
        response = chat_adapter(openai_loopback, stream=True).evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        assert [(e.call.call_id, e.call.arguments) for e in response.tool_executions] == [
            ("call_a", '{"city":"Lisbon"}'),
            ("call_b", '{"city":"Porto"}'),
        ]
        second = openai_loopback.bodies[1]["messages"]
        assert second[1]["tool_calls"][0]["function"]["arguments"] == '{"city":"Lisbon"}'
        assert second[2] == {"role": "tool", "tool_call_id": "call_a", "content": LISBON_OUTPUT}
        assert response.usage.input_tokens == 50 + 120

    def test_decoded_arguments_in_a_fragment_are_read_like_a_bodys(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Arguments sent as an object (some compatible servers) are not dropped."""
        call: JSONValue = {
            "index": 0,
            "id": "call_a",
            "function": {"name": "get_weather", "arguments": {"city": "Lisbon"}},
        }
        fragments = [chunk({"tool_calls": [call]}), chunk({}, finish_reason="tool_calls")]
        openai_loopback.reply(chat_stream(fragments), chat_stream(text_chunks(["Sunny."])))
        response = chat_adapter(openai_loopback, stream=True).evaluate(
            trip_prompt((WEATHER,)), TRIP
        )
        assert [e.call.arguments for e in response.tool_executions] == ['{"city": "Lisbon"}']

    @pytest.mark.parametrize(
        ("reply", "reason"),
        [
            (
                chat_stream([chunk({"content": "Lisbon"})], done=False),
                "the stream ended before the response completed",
            ),
            (
                Reply(
                    raw=b'data: {"choices":[{"index":0,"delta":{"content":"Li"}}]}\n\n'
                    b'data: {"error":{"message":"model overloaded"}}\n\n',
                    headers={"content-type": "text/event-stream"},
                ),
                "the provider reported an error mid-stream: model overloaded",
            ),
            (
                Reply(
                    raw=b'data: {"choices":[{"index":0,"delta":{"content":"Li"}}]}\n\n'
                    b'data: {"error":"context size exceeded"}\n\n',
                    headers={"content-type": "text/event-stream"},
                ),
                "the provider reported an error mid-stream: context size exceeded",
            ),
            (
                Reply(raw=b"data: {nope\n\n", headers={"content-type": "text/event-stream"}),
                "a stream event is not a JSON object",
            ),
            (
                chat_stream([chunk({"tool_calls": [{"id": "c"}]})]),
                "a tool call fragment has no integer index",
            ),
            (
                chat_stream([chunk({"tool_calls": [{"index": True, "id": "c"}]})]),
                "a tool call fragment has no integer index",
            ),
            (
                chat_stream([chunk({"content": 42}), chunk({}, finish_reason="stop")]),
                "choices[0].delta.content is not a string or null",
            ),
            (
                chat_stream([chunk({"refusal": ["no"]}), chunk({}, finish_reason="stop")]),
                "choices[0].delta.refusal is not a string or null",
            ),
            (
                chat_stream(
                    [
                        chunk({"tool_calls": {"index": 0, "id": "c", "function": {"name": "x"}}}),
                        chunk({}, finish_reason="tool_calls"),
                    ]
                ),
                "choices[0].delta.tool_calls is not a list",
            ),
            (
                chat_stream(
                    [
                        chunk(
                            {
                                "tool_calls": [
                                    {
                                        "index": 0,
                                        "id": "call_a",
                                        "function": {"name": "get_weather", "arguments": 7},
                                    }
                                ]
                            }
                        ),
                        chunk({}, finish_reason="tool_calls"),
                    ]
                ),
                "the arguments of tool call fragment 0 are not a string",
            ),
        ],
        ids=[
            "cut-off",
            "error",
            "error-as-text",
            "garbage",
            "fragment-without-index",
            "fragment-index-a-bool",
            "content-a-number",
            "refusal-a-list",
            "tool-calls-an-object",
            "arguments-a-number",
        ],
    )
    def test_a_broken_stream_is_a_response_error_and_not_a_success(
        self, openai_loopback: OpenAILoopback, reply: Reply, reason: str
    ) -> None:
        """Phase response and PromptFailed; nothing recorded as executed."""
        openai_loopback.reply(reply)
        bus = InProcessEventBus()
        session = Session(bus=bus)
        with pytest.raises(PromptEvaluationError) as caught:
            chat_adapter(openai_loopback, stream=True).evaluate(
                trip_prompt((WEATHER,)), TRIP, bus=bus, session=session
            )
        assert caught.value.phase == "response"
        assert caught.value.reason.startswith(reason)
        assert session.select(PromptExecuted) == ()
        assert session.select(PromptFailed)[0].phase == "response"


def test_a_json_body_where_a_stream_was_asked_for_says_it_was_no_event_stream(
    openai_loopback: OpenAILoopback,
) -> None:
    """A server that answers a streamed request with a plain body: no event arrived."""
    openai_loopback.reply(ok(completion("Lisbon.")))
    with pytest.raises(PromptEvaluationError) as caught:
        chat_adapter(openai_loopback, stream=True).evaluate(trip_prompt((WEATHER,)), TRIP)
    assert caught.value.reason == (
        "the stream ended before the response completed: no event with JSON data "
        "arrived (was the reply an event stream?)"
    )


type AnyReader = ChatStreamReader | ResponsesStreamReader | MessagesStreamReader


@pytest.mark.parametrize(
    "reader",
    [
        ChatStreamReader(lambda text: None, prompt_name="p"),
        ResponsesStreamReader(lambda text: None, prompt_name="p"),
        MessagesStreamReader(lambda text: None, prompt_name="p"),
    ],
    ids=["chat", "responses", "messages"],
)
def test_every_reader_says_when_no_event_arrived(reader: AnyReader) -> None:
    """The hint is each provider's; after one event the stream was merely cut off."""
    with pytest.raises(PromptEvaluationError, match=r"no event with JSON data arrived"):
        reader.result()
    reader.read(ServerEvent(event=None, data='{"type": "ping"}'))
    with pytest.raises(PromptEvaluationError) as caught:
        reader.result()
    assert caught.value.reason == "the stream ended before the response completed"


class TestReader:
    def test_a_refusal_stream_builds_a_refusal_message_and_ignores_what_follows_done(
        self,
    ) -> None:
        """Refusal pieces join; events after [DONE] are ignored."""
        reader = ChatStreamReader(lambda text: None, prompt_name="p")
        for data in (
            '{"id": "c1", "choices": [{"index": 0, "delta": {"refusal": "No, "}}]}',
            '{"choices": [{"index": 0, "delta": {"refusal": "sorry."}, "finish_reason": "stop"}]}',
            "[DONE]",
            '{"choices": [{"index": 0, "delta": {"content": "late"}}]}',
        ):
            reader.read(ServerEvent(event=None, data=data))
        body = reader.result()
        assert body["id"] == "c1"
        assert body["choices"] == [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "refusal": "No, sorry."},
                "finish_reason": "stop",
            }
        ]

    def test_the_async_client_streams_too(self, openai_loopback: OpenAILoopback) -> None:
        """AsyncOpenAI with evaluate_async reads the same stream."""
        openai_loopback.reply(chat_stream(text_chunks(["Hi", " there."])))
        adapter = chat_adapter(
            openai_loopback,
            stream=True,
            client=openai.AsyncOpenAI(base_url=openai_loopback.base_url, api_key="k"),
        )
        response = asyncio.run(adapter.evaluate_async(trip_prompt((WEATHER,)), TRIP))
        assert response.text == "Hi there."


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    return [piece for piece in pieces if piece]


class TestChunkings:
    @given(
        answer=st.text(min_size=1, max_size=40),
        arguments=st.dictionaries(st.text(max_size=4), st.integers() | st.text(max_size=6)),
        text_cuts=st.lists(st.integers(0, 200), max_size=8),
        argument_cuts=st.lists(st.integers(0, 200), max_size=8),
    )
    def test_any_split_of_content_and_arguments_folds_into_the_same_message(
        self,
        answer: str,
        arguments: dict[str, JSONValue],
        text_cuts: list[int],
        argument_cuts: list[int],
    ) -> None:
        """However the chunks split the content and a call's arguments, the completion's
        message is the one a non-streamed reply holds, and subscribers saw its content."""
        encoded = json.dumps(arguments)
        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks.extend(chunk({"content": piece}) for piece in _split(answer, text_cuts))
        call: dict[str, JSONValue] = {
            "index": 0,
            "id": "call_1",
            "type": "function",
            "function": {"name": "f"},
        }
        chunks.append(chunk({"tool_calls": [call]}))
        chunks.extend(
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in _split(encoded, argument_cuts)
        )
        chunks.append(chunk({}, finish_reason="tool_calls"))
        seen: list[str] = []
        reader = ChatStreamReader(seen.append, prompt_name="p")
        for item in chunks:
            reader.read(ServerEvent(event=None, data=json.dumps(item)))
        reader.read(ServerEvent(event=None, data="[DONE]"))
        assert reader.result()["choices"] == [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": answer,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "f", "arguments": encoded},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
        assert "".join(seen) == answer
