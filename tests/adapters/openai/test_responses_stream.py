"""Streamed Responses API replies: the deltas and the closing body must tell one story."""

from __future__ import annotations

import json
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.adapters.conftest import OpenAILoopback, Reply, response_body
from weakincentives.adapters._sse import ServerEvent
from weakincentives.adapters.openai._stream import ResponsesStreamReader
from weakincentives.errors import PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.runtime import (
    InProcessEventBus,
    PromptExecuted,
    PromptFailed,
    Session,
    TextDelta,
)
from weakincentives.serde import JSONValue

pytest.importorskip("openai")

PROMPT = Prompt(ns="t", key="weather", sections=[MarkdownSection(title="T", template="Go.")])


def message(*texts: str) -> dict[str, JSONValue]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []} for text in texts],
    }


def stream_of(deltas: list[str], body: dict[str, JSONValue]) -> Reply:
    events: list[dict[str, JSONValue]] = [
        {"type": "response.created", "response": {**body, "status": "in_progress", "output": []}}
    ]
    events.extend({"type": "response.output_text.delta", "delta": delta} for delta in deltas)
    events.append({"type": "response.completed", "response": body})
    data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return Reply(raw=data.encode(), headers={"content-type": "text/event-stream"})


def test_deltas_that_contradict_the_closing_body_fail_the_evaluation(
    openai_loopback: OpenAILoopback,
) -> None:
    """Issue 26 L5: subscribers saw one text, the body records another: phase response.

    The closing body is what would be recorded and replayed, and the deltas are what the
    caller was already shown; rather than record an answer nobody saw, the evaluation fails.
    """
    openai_loopback.reply(stream_of(["Checking the weather. "], response_body(message("Sunny."))))
    bus = InProcessEventBus()
    session = Session(bus=bus)
    seen: list[str] = []
    bus.subscribe(TextDelta, lambda event: seen.append(event.text))
    adapter = openai_loopback.adapter(stream=True)
    with pytest.raises(PromptEvaluationError) as caught:
        adapter.evaluate(PROMPT, bus=bus, session=session)
    assert caught.value.phase == "response"
    assert caught.value.reason == (
        "the streamed text (22 characters) differs from the text of the completed response "
        "(6 characters); the stream contradicts itself"
    )
    assert seen == ["Checking the weather. "]
    assert session.select(PromptExecuted) == ()
    assert session.select(PromptFailed)[0].phase == "response"


@pytest.mark.parametrize("kind", [["response.completed"], {"name": "error"}, 7])
def test_an_event_type_that_is_not_a_string_is_a_response_error(
    openai_loopback: OpenAILoopback, kind: JSONValue
) -> None:
    """A list or object type once escaped as a bare TypeError (looked up in a set)."""
    event = {"type": kind, "response": response_body(message("Sunny."))}
    data = f"data: {json.dumps(event)}\n\n"
    openai_loopback.reply(Reply(raw=data.encode(), headers={"content-type": "text/event-stream"}))
    with pytest.raises(PromptEvaluationError) as caught:
        openai_loopback.adapter(stream=True).evaluate(PROMPT)
    assert caught.value.phase == "response"
    assert caught.value.reason == (f"a stream event's type is {type(kind).__name__}, not a string")
    assert caught.value.provider_payload == event


def test_a_last_event_without_a_blank_line_after_it_still_counts(
    openai_loopback: OpenAILoopback,
) -> None:
    """The closing event is dispatched when the stream ends, even unterminated."""
    reply = stream_of(["Sun", "ny."], response_body(message("Sunny.")))
    assert reply.raw is not None
    assert reply.raw.endswith(b"\n\n")
    openai_loopback.reply(Reply(raw=reply.raw[:-2], headers=reply.headers))
    assert openai_loopback.adapter(stream=True).evaluate(PROMPT).text == "Sunny."


def test_a_corrupt_content_encoding_is_a_response_error(openai_loopback: OpenAILoopback) -> None:
    """A body announced as gzip that is not: phase response, the decoder's complaint kept."""
    openai_loopback.reply(
        Reply(
            raw=b"definitely not gzip",
            headers={"content-type": "application/json", "content-encoding": "gzip"},
        )
    )
    with pytest.raises(
        PromptEvaluationError, match="content encoding could not be decoded"
    ) as caught:
        openai_loopback.adapter().evaluate(PROMPT)
    assert (caught.value.phase, caught.value.provider_payload) == (
        "response",
        {"error": "decoding"},
    )


def test_a_stream_without_deltas_is_read_from_its_body(openai_loopback: OpenAILoopback) -> None:
    """No delta came, so nothing was shown: the body's text is the answer and one delta."""
    openai_loopback.reply(stream_of([], response_body(message("Sun", "ny."))))
    bus = InProcessEventBus()
    seen: list[str] = []
    bus.subscribe(TextDelta, lambda event: seen.append(event.text))
    response = openai_loopback.adapter(stream=True).evaluate(PROMPT, bus=bus)
    assert response.text == "Sunny."
    assert seen == ["Sunny."]


@given(
    parts=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=3),
    cuts=st.lists(st.integers(0, 100), max_size=8),
)
def test_any_split_of_the_text_into_deltas_agrees_with_the_body(
    parts: list[str], cuts: list[int]
) -> None:
    """However the deltas cut the text (across output_text parts too), the body stands."""
    text = "".join(parts)
    points = sorted({cut % (len(text) + 1) for cut in cuts})
    deltas = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    call: dict[str, JSONValue] = {
        "id": "fc_1",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": "{}",
    }
    answer = message(*parts)
    # A refusal part and a function call carry no output_text: the deltas leave them out.
    answer["content"] = [
        *cast("list[JSONValue]", answer["content"]),
        {"type": "refusal", "refusal": "no"},
    ]
    body = response_body(answer, call)
    seen: list[str] = []
    reader = ResponsesStreamReader(seen.append, prompt_name="p")
    for delta in deltas:
        event = {"type": "response.output_text.delta", "delta": delta}
        reader.read(ServerEvent(event=None, data=json.dumps(event)))
    reader.read(
        ServerEvent(event=None, data=json.dumps({"type": "response.completed", "response": body}))
    )
    assert reader.result() == body
    assert "".join(seen) == text
