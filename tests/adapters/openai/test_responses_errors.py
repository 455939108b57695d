"""Provider failures over real HTTP: statuses, retries, timeouts and replies that make no sense.

Transport and HTTP failures must surface as ``PromptEvaluationError(phase="request")``
and uninterpretable replies as ``phase="response"``, each with the provider's
payload attached. Tool problems never raise; these tests are about the provider.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta

import pytest

from tests.adapters.conftest import (
    HANG,
    OpenAILoopback,
    Reply,
    api_error,
    load_output,
    load_response,
    ok,
    response_body,
)
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from tests.conftest import FakeClock
from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.openai import OpenAIAdapter, OpenAIResponses
from weakincentives.errors import PromptEvaluationError, ProviderError, ResponseTruncatedError
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")

RATE_LIMITED = api_error(
    "Rate limit reached for gpt-test on requests per min",
    kind="requests",
    code="rate_limit_exceeded",
)
SERVER_ERROR = api_error("The server had an error processing your request", kind="server_error")
FAST_RETRY = {"retry-after-ms": "1"}


class RecordingSleep:
    """Stands in for the loop's back-off sleep: records each delay instead of waiting."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
def sdk_time() -> RecordingSleep:
    """Loop settings whose retry back-offs are recorded, so retries never wait."""
    return RecordingSleep()


def retrying(
    loopback: OpenAILoopback, sleeper: RecordingSleep, retries: int
) -> Adapter[OpenAIResponses]:
    """An adapter allowed ``retries`` resends, whose back-offs go to ``sleeper``."""
    return loopback.adapter(max_retries=retries, settings=LoopSettings(sleep=sleeper))


def evaluate_trip(adapter: Adapter[OpenAIResponses]) -> None:
    adapter.evaluate(trip_prompt((WEATHER,)), TRIP)


class TestStatusErrors:
    def test_rate_limit_is_a_request_error_with_status_and_body(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """HTTP 429 without retries left fails with phase request, the status and the error body."""
        openai_loopback.reply(Reply(status=429, body=RATE_LIMITED, headers=FAST_RETRY))
        with pytest.raises(PromptEvaluationError, match=r"rate limited with HTTP 429") as caught:
            evaluate_trip(openai_loopback.adapter())
        error = caught.value
        assert error.phase == "request"
        assert error.prompt_name == "plan"
        assert error.provider_payload == {"status": 429, "body": RATE_LIMITED["error"]}
        assert isinstance(error.__cause__, openai.RateLimitError)
        assert len(openai_loopback.requests) == 1

    @pytest.mark.parametrize(
        ("status", "sdk_error"),
        [
            (400, "BadRequestError"),
            (401, "AuthenticationError"),
            (404, "NotFoundError"),
            (500, "InternalServerError"),
            (503, "InternalServerError"),
        ],
    )
    def test_other_statuses_are_request_errors(
        self, openai_loopback: OpenAILoopback, status: int, sdk_error: str
    ) -> None:
        """Any 4xx/5xx becomes phase request naming the status, with the SDK error as cause."""
        body = api_error(f"status {status} from the test server", kind="test_error")
        openai_loopback.reply(Reply(status=status, body=body))
        with pytest.raises(
            PromptEvaluationError, match=rf"the provider answered with HTTP {status}: "
        ) as caught:
            evaluate_trip(openai_loopback.adapter())
        assert caught.value.phase == "request"
        assert caught.value.provider_payload == {"status": status, "body": body["error"]}
        assert type(caught.value.__cause__).__name__ == sdk_error

    @pytest.mark.parametrize(
        ("reply", "body"),
        [
            (
                Reply(
                    status=502,
                    raw=b"<html>Bad gateway</html>",
                    headers={"content-type": "text/html"},
                ),
                "<html>Bad gateway</html>",
            ),
            (
                Reply(status=500, body=["overloaded", {"retry": True}]),
                ["overloaded", {"retry": True}],
            ),
        ],
    )
    def test_error_bodies_that_are_not_api_errors_are_kept(
        self, openai_loopback: OpenAILoopback, reply: Reply, body: JSONValue
    ) -> None:
        """A proxy's HTML page or an odd JSON error body is attached as the server sent it."""
        openai_loopback.reply(reply)
        with pytest.raises(PromptEvaluationError) as caught:
            evaluate_trip(openai_loopback.adapter())
        assert caught.value.provider_payload == {"status": reply.status, "body": body}

    def test_client_errors_are_not_retried(
        self, openai_loopback: OpenAILoopback, sdk_time: RecordingSleep
    ) -> None:
        """A 400 is final even with retries to spare: one request, no backoff."""
        openai_loopback.reply(Reply(status=400, body=api_error("bad input", kind="invalid")))
        with pytest.raises(PromptEvaluationError, match="HTTP 400"):
            evaluate_trip(retrying(openai_loopback, sdk_time, 2))
        assert len(openai_loopback.requests) == 1
        assert sdk_time.sleeps == []


class TestRetries:
    @pytest.mark.parametrize(
        ("status", "body"), [(429, RATE_LIMITED), (500, SERVER_ERROR)], ids=["429", "500"]
    )
    def test_sdk_retries_after_the_delay_the_server_asks_for(
        self,
        openai_loopback: OpenAILoopback,
        sdk_time: RecordingSleep,
        status: int,
        body: JSONValue,
    ) -> None:
        """With retries allowed, one failure then success sends the same body twice, 1 ms apart."""
        openai_loopback.reply(
            Reply(status=status, body=body, headers=FAST_RETRY), ok(load_response("final_answer"))
        )
        response = retrying(openai_loopback, sdk_time, 2).evaluate(trip_prompt((WEATHER,)), TRIP)
        first, second = openai_loopback.requests
        assert first.body == second.body
        assert [request.headers["x-stainless-retry-count"] for request in (first, second)] == [
            "0",
            "1",
        ]
        assert sdk_time.sleeps == [0.001]
        assert response.rounds == 1
        assert response.text == "Lisbon will be sunny at 24 °C, and 200 EUR is about 216 USD."

    def test_retry_after_in_seconds_is_honoured(
        self, openai_loopback: OpenAILoopback, sdk_time: RecordingSleep
    ) -> None:
        """The SDK also reads ``retry-after`` (seconds) when no millisecond header is sent."""
        openai_loopback.reply(
            Reply(status=429, body=RATE_LIMITED, headers={"retry-after": "0.25"}),
            ok(load_response("final_answer")),
        )
        evaluate_trip(retrying(openai_loopback, sdk_time, 1))
        assert sdk_time.sleeps == [0.25]

    def test_exhausted_retries_report_the_last_failure(
        self, openai_loopback: OpenAILoopback, sdk_time: RecordingSleep
    ) -> None:
        """When every attempt fails the error carries the last status; attempts = retries + 1."""
        openai_loopback.reply(
            Reply(status=500, body=SERVER_ERROR, headers=FAST_RETRY),
            Reply(status=429, body=RATE_LIMITED, headers=FAST_RETRY),
        )
        with pytest.raises(PromptEvaluationError, match="rate limited with HTTP 429") as caught:
            evaluate_trip(retrying(openai_loopback, sdk_time, 1))
        assert caught.value.provider_payload == {"status": 429, "body": RATE_LIMITED["error"]}
        assert len(openai_loopback.requests) == 2
        assert sdk_time.sleeps == [0.001]


class TestTransportErrors:
    def test_unanswered_request_times_out(self, openai_loopback: OpenAILoopback) -> None:
        """A server that never answers trips the client timeout: phase request, no retry."""
        openai_loopback.reply(HANG)
        with pytest.raises(PromptEvaluationError, match="the request timed out") as caught:
            evaluate_trip(openai_loopback.adapter(timeout=0.2))
        assert caught.value.phase == "request"
        assert caught.value.provider_payload == {"error": "timeout"}
        assert isinstance(caught.value.__cause__, openai.APITimeoutError)
        (request,) = openai_loopback.requests
        assert request.headers["x-stainless-read-timeout"] == "0.2"

    @pytest.mark.parametrize(
        ("client_timeout", "deadline_in", "applied"),
        [
            (10.0, 0.2, 0.2),
            (0.2, 3.0, 0.2),
            ("sdk-timeout-5s", 0.2, 0.2),
            ("sdk-timeout-0.2s", 3.0, 0.2),
            ("sdk-read-timeout-only", 3.0, 0.2),
            (None, 0.2, 0.2),
        ],
        ids=[
            "deadline-sooner",
            "client-sooner",
            "sdk-timeout-deadline-sooner",
            "sdk-timeout-sooner",
            "sdk-read-timeout-only",
            "no-client-timeout",
        ],
    )
    def test_deadline_only_ever_shortens_the_request_timeout(
        self,
        openai_loopback: OpenAILoopback,
        clock: FakeClock,
        client_timeout: float | str | None,
        deadline_in: float,
        applied: float,
    ) -> None:
        """The request waits for the sooner of the deadline and the client's own timeout."""
        timeouts = {
            "sdk-timeout-5s": openai.Timeout(5.0, connect=1.0),
            "sdk-timeout-0.2s": openai.Timeout(0.2, connect=1.0),
            "sdk-read-timeout-only": openai.Timeout(None, read=0.2),
        }
        client = openai.OpenAI(
            api_key="test-key",
            base_url=openai_loopback.base_url,
            max_retries=0,
            timeout=timeouts[client_timeout] if isinstance(client_timeout, str) else client_timeout,
        )
        adapter = Adapter(
            OpenAIResponses(model="gpt-test", client=client), settings=LoopSettings(clock=clock)
        )
        openai_loopback.reply(HANG)
        deadline = clock.now + timedelta(seconds=deadline_in)
        # Whichever fires first, the SDK's timeout or the loop's bound on the attempt, the
        # outcome is the same retryable timeout (the fake clock keeps the deadline ahead).
        with pytest.raises(ProviderError) as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, deadline=deadline)
        assert (caught.value.retryable, caught.value.provider_payload) == (
            True,
            {"error": "timeout"},
        )
        (request,) = openai_loopback.requests
        # The SDK announces the read timeout it applies; the fake clock ticks 1 ms per reading.
        assert float(request.headers["x-stainless-read-timeout"]) == pytest.approx(
            applied, abs=0.01
        )

    def test_passed_deadline_sends_nothing(
        self, openai_loopback: OpenAILoopback, clock: FakeClock
    ) -> None:
        """A deadline already behind the clock fails before any request reaches the server."""
        adapter = openai_loopback.adapter(settings=LoopSettings(clock=clock))
        with pytest.raises(PromptEvaluationError, match="passed before round 1") as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, deadline=clock.now)
        assert caught.value.phase == "request"
        assert openai_loopback.requests == []

    def test_unreachable_server_is_a_connection_error(self, closed_port: int) -> None:
        """Nothing listening on the port: phase request, marked as a connection failure."""
        adapter = OpenAIAdapter(
            model="gpt-test",
            base_url=f"http://127.0.0.1:{closed_port}/v1",
            api_key="test-key",
            max_retries=0,
            timeout=5.0,
        )
        with pytest.raises(PromptEvaluationError, match="could not reach the provider") as caught:
            evaluate_trip(adapter)
        assert caught.value.phase == "request"
        assert caught.value.provider_payload == {"error": "connection"}
        assert type(caught.value.__cause__) is openai.APIConnectionError


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but not listening, so connections are refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


MALFORMED_BODY = response_body(
    {"type": "message", "id": "msg_1", "role": "assistant", "content": "just text"}
)


class TestUninterpretableReplies:
    @pytest.mark.parametrize(
        ("raw", "content_type"),
        [
            (b'{"id": "resp_1", "output": [', "application/json"),
            (b"<html><body>Service temporarily unavailable</body></html>", "text/html"),
            (b"", "application/json"),
        ],
        ids=["truncated-json", "html", "empty"],
    )
    def test_body_that_is_not_json_is_a_response_error(
        self, openai_loopback: OpenAILoopback, raw: bytes, content_type: str
    ) -> None:
        """A 200 whose body does not decode fails with phase response and the raw text."""
        openai_loopback.reply(Reply(raw=raw, headers={"content-type": content_type}))
        with pytest.raises(PromptEvaluationError, match="the reply is not valid JSON") as caught:
            evaluate_trip(openai_loopback.adapter())
        assert caught.value.phase == "response"
        assert caught.value.provider_payload == {"status": 200, "body": raw.decode()}
        assert len(openai_loopback.requests) == 1

    def test_json_that_is_not_an_object_is_a_response_error(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A JSON array is valid JSON but not a Responses API body."""
        openai_loopback.reply(Reply(body=["resp_1"]))
        with pytest.raises(PromptEvaluationError, match="the reply is a JSON list, not an object"):
            evaluate_trip(openai_loopback.adapter())

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            (
                {"id": "resp_1", "object": "response", "status": "completed"},
                "'output' is not a list",
            ),
            (response_body(42), "an output item is not an object"),
            (MALFORMED_BODY, "a message item has no content list"),
            (
                response_body({"type": "message", "content": ["hello"]}),
                "a message content part is not an object",
            ),
            (
                response_body({"type": "message", "content": [{"type": "output_text"}]}),
                "an output_text part has no text",
            ),
            (
                response_body(
                    {"type": "message", "content": [{"type": "refusal", "refusal": ["no"]}]}
                ),
                "a refusal part's refusal is not a string",
            ),
            (
                response_body({"type": "function_call", "call_id": "c1", "name": "get_weather"}),
                "a function_call item needs string call_id, name and arguments",
            ),
            (
                response_body(
                    {
                        "type": "function_call",
                        "call_id": 7,
                        "name": "get_weather",
                        "arguments": "{}",
                    }
                ),
                "a function_call item needs string call_id, name and arguments",
            ),
            (response_body({"type": ["message"]}), "output[0] has no string type"),
            (
                response_body({"type": "message", "content": []}, {"type": {"kind": "x"}}),
                "output[1] has no string type",
            ),
        ],
        ids=[
            "no-output",
            "item-not-object",
            "content-not-list",
            "part-not-object",
            "text-missing",
            "refusal-not-text",
            "arguments-missing",
            "call-id-not-string",
            "type-a-list",
            "type-an-object",
        ],
    )
    def test_shapes_the_adapter_cannot_read_are_response_errors(
        self, openai_loopback: OpenAILoopback, body: dict[str, JSONValue], reason: str
    ) -> None:
        """Each unreadable shape names what is wrong and carries the whole body."""
        openai_loopback.reply(ok(body))
        with pytest.raises(PromptEvaluationError) as caught:
            evaluate_trip(openai_loopback.adapter())
        error = caught.value
        assert error.phase == "response"
        assert error.message == (
            f"[response] prompt 'plan': cannot interpret the provider's reply: {reason}"
        )
        assert error.provider_payload == body

    @pytest.mark.parametrize(
        ("extra", "message"),
        [
            (
                {"status": "failed", "error": {"code": "server_error", "message": "Model crashed"}},
                "the provider reported a failed response: Model crashed",
            ),
            (
                {"status": "failed", "error": None},
                "the provider reported a failed response: no details",
            ),
            (
                {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}},
                "the response is incomplete (content_filter)",
            ),
            (
                {"status": "incomplete", "incomplete_details": None},
                "the response is incomplete (no reason given)",
            ),
            ({"status": "queued"}, "the response has status 'queued', not 'completed'"),
            ({"status": "in_progress"}, "the response has status 'in_progress', not 'completed'"),
            ({"status": "cancelled"}, "the response has status 'cancelled', not 'completed'"),
        ],
        ids=[
            "failed",
            "failed-no-details",
            "incomplete",
            "incomplete-no-reason",
            "queued",
            "in-progress",
            "cancelled",
        ],
    )
    def test_failed_or_incomplete_responses_are_response_errors(
        self, openai_loopback: OpenAILoopback, extra: dict[str, JSONValue], message: str
    ) -> None:
        """A 200 whose status says the model did not finish is not taken as an answer."""
        body = response_body(*load_output("final_answer"), **extra)
        openai_loopback.reply(ok(body))
        with pytest.raises(PromptEvaluationError) as caught:
            evaluate_trip(openai_loopback.adapter())
        assert caught.value.phase == "response"
        assert caught.value.message == f"[response] prompt 'plan': {message}"
        assert caught.value.provider_payload == body

    def test_a_reply_cut_off_at_the_token_limit_is_reported_as_truncated(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``incomplete`` for ``max_output_tokens`` is a truncation with the limit, not bad JSON."""
        body = response_body(
            *load_output("final_answer"),
            status="incomplete",
            incomplete_details={"reason": "max_output_tokens"},
        )
        openai_loopback.reply(ok(body))
        adapter = openai_loopback.adapter(settings=LoopSettings(max_output_tokens=64))
        with pytest.raises(ResponseTruncatedError) as caught:
            evaluate_trip(adapter)
        assert caught.value.phase == "response"
        assert caught.value.limit == 64
        assert caught.value.reason == (
            "the reply was cut off at the output-token limit of 64 tokens; raise "
            "LoopSettings.max_output_tokens or ask for a shorter answer"
        )
        assert openai_loopback.bodies[0]["max_output_tokens"] == 64

    def test_failure_in_a_later_round_stops_the_loop(self, openai_loopback: OpenAILoopback) -> None:
        """A bad second reply fails the evaluation after the first round's tool ran."""
        openai_loopback.reply(ok(load_response("weather_call")), ok(MALFORMED_BODY))
        with pytest.raises(PromptEvaluationError, match="a message item has no content list"):
            evaluate_trip(openai_loopback.adapter())
        assert len(openai_loopback.requests) == 2

    def test_body_without_status_is_read(self, openai_loopback: OpenAILoopback) -> None:
        """Responses-compatible servers that omit ``status`` are taken at their output."""
        body = response_body(*load_output("final_answer"))
        del body["status"]
        openai_loopback.reply(ok(body))
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.text == "Lisbon will be sunny at 24 °C, and 200 EUR is about 216 USD."
