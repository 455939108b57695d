"""Sans-IO pieces of the provider seam: retry rules, reply decoding, the event-stream parser."""

from __future__ import annotations

import json

import pytest

from weakincentives.adapters._http import is_retryable_status, retry_after_seconds
from weakincentives.adapters._json import decode_reply
from weakincentives.adapters.openai._stream import (
    EventStreamParser,
    ResponsesStreamReader,
    ServerEvent,
)
from weakincentives.errors import PromptEvaluationError
from weakincentives.serde._loads import MAX_JSON_DEPTH


class TestRetryRules:
    @pytest.mark.parametrize(
        ("status", "headers", "retryable"),
        [
            (408, {}, True),
            (409, {}, True),
            (429, {}, True),
            (500, {}, True),
            (503, {}, True),
            (400, {}, False),
            (404, {}, False),
            (400, {"x-should-retry": "true"}, True),
            (503, {"x-should-retry": "false"}, False),
        ],
    )
    def test_statuses_and_the_servers_hint_decide(
        self, status: int, headers: dict[str, str], retryable: bool
    ) -> None:
        """408/409/429/5xx are retried unless the server says otherwise, and vice versa."""
        assert is_retryable_status(status, headers) is retryable

    @pytest.mark.parametrize(
        ("headers", "seconds"),
        [
            ({"retry-after-ms": "250"}, 0.25),
            ({"retry-after": "2"}, 2.0),
            ({"retry-after": "1.5", "retry-after-ms": "10"}, 0.01),
            ({"retry-after": "Thu, 01 Jan 1970 00:00:30 GMT"}, 20.0),
            ({"retry-after": "Thu, 01 Jan 1970 00:00:05 GMT"}, 0.0),
            ({"retry-after": "soon"}, None),
            ({"retry-after-ms": "-5"}, None),
            ({"retry-after": "inf"}, None),
            ({}, None),
        ],
    )
    def test_retry_after_in_ms_seconds_or_as_a_date(
        self, headers: dict[str, str], seconds: float | None
    ) -> None:
        """retry-after-ms wins, then seconds, then an HTTP date (relative to now)."""
        assert retry_after_seconds(headers, now=lambda: 10.0) == seconds


class TestReplyDecoding:
    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ("[" * 5_000 + "]" * 5_000, "nested more than"),
            ("[" * (MAX_JSON_DEPTH + 2) + "]" * (MAX_JSON_DEPTH + 2), "nested more than"),
            ('{"n": ' + "9" * 5_000 + "}", "an integer of 5,000 digits"),
            ('{"n": NaN}', "NaN is not a JSON number"),
            ("{", "Expecting property name"),
        ],
    )
    def test_bad_bodies_are_reported_not_raised(self, text: str, problem: str) -> None:
        """Whatever the provider sends, decoding returns a problem instead of raising."""
        value, found = decode_reply(text)
        assert value is None
        assert found is not None
        assert problem in found

    def test_good_bodies_decode(self) -> None:
        """Ordinary JSON comes back as is."""
        assert decode_reply('{"a": [1, {"b": null}]}') == ({"a": [1, {"b": None}]}, None)


class TestEventStreamParser:
    def test_events_split_across_chunks_and_line_endings(self) -> None:
        """CR, LF and CRLF all end lines; a line may arrive in pieces."""
        parser = EventStreamParser()
        events = parser.feed(b"event: a\r\ndata: 1\r")
        events += parser.feed(b"\n\r\ndata: 2\rdata: 3\n")
        events += parser.feed(b"\n: a comment\n\nevent: last\ndata: 4")
        events += parser.close()
        assert events == [
            ServerEvent(event="a", data="1"),
            ServerEvent(event=None, data="2\n3"),
            ServerEvent(event="last", data="4"),
        ]

    def test_a_bare_event_name_still_dispatches(self) -> None:
        """An event line with no data is an event with empty data."""
        parser = EventStreamParser()
        assert parser.feed(b"event: ping\n\n") == [ServerEvent(event="ping", data="")]
        assert parser.close() == []


class TestResponsesStreamReader:
    def test_nothing_after_the_closing_event_counts(self) -> None:
        """Events after response.completed, and [DONE], are ignored."""
        texts: list[str] = []
        reader = ResponsesStreamReader(texts.append, prompt_name="p")
        reader.read(
            ServerEvent(event=None, data='{"type": "response.output_text.delta", "delta": "a"}')
        )
        body = {
            "id": "r",
            "output": [{"type": "message", "content": [{"type": "output_text", "text": "a"}]}],
        }
        completed = json.dumps({"type": "response.completed", "response": body})
        reader.read(ServerEvent(event=None, data=completed))
        reader.read(
            ServerEvent(event=None, data='{"type": "response.output_text.delta", "delta": "b"}')
        )
        reader.read(ServerEvent(event=None, data="[DONE]"))
        assert texts == ["a"]
        assert reader.result() == body

    @pytest.mark.parametrize(
        ("data", "reason"),
        [
            ('{"type": "response.completed"}', "a response.completed event carries no response"),
            ('{"type": "error", "error": {"message": "boom"}}', "mid-stream: boom"),
            ('{"type": "error"}', "mid-stream: no details"),
            ("[1, 2]", "a stream event is not a JSON object (not an object)"),
        ],
    )
    def test_broken_events_are_response_errors(self, data: str, reason: str) -> None:
        """Closing events without a response and error events are phase response."""
        reader = ResponsesStreamReader(lambda text: None, prompt_name="p")
        with pytest.raises(PromptEvaluationError) as caught:
            reader.read(ServerEvent(event=None, data=data))
        assert caught.value.phase == "response"
        assert reason in caught.value.reason
