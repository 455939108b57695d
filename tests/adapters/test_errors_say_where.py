"""Provider errors say where they went, how often, and what usually causes them.

Every test talks real HTTP on loopback through the official SDK clients (``openai``
for Responses and Chat Completions, ``anthropic`` for Messages): the endpoint in the
message is the one the SDK really called, the key never appears, and each retry the
loop made is an event on the bus before the error that ends the evaluation.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, Reply, api_error
from tests.adapters.openai.test_responses import TRIP, WEATHER, trip_prompt
from tests.conftest import FakeClock
from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.anthropic import AnthropicAdapter
from weakincentives.adapters.openai import ChatCompletionsAdapter, OpenAIAdapter
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.runtime import InProcessEventBus, RequestRetried

pytest.importorskip("openai")
pytest.importorskip("anthropic")

SECRET_KEY = "sk-test-SECRET-0123456789"


class RecordingSleep:
    """The loop's back-off sleep, recorded instead of waited."""

    def __init__(self) -> None:
        self.sleeps: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.sleeps.append(seconds)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that is bound but not listening: connections are refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def _evaluate(adapter: Adapter[Any], bus: InProcessEventBus | None = None) -> None:
    adapter.evaluate(trip_prompt((WEATHER,)), TRIP, bus=bus)


class TestNothingListening:
    @pytest.mark.parametrize(
        ("adapter_kind", "path"),
        [
            ("responses", "/v1/responses"),
            ("chat", "/v1/chat/completions"),
            ("anthropic", "/v1/messages"),
        ],
    )
    def test_a_refused_connection_names_the_endpoint_attempts_and_fix(
        self, closed_port: int, adapter_kind: str, path: str
    ) -> None:
        """Every SDK provider says which URL refused, how many sends, and to start the server."""
        sleep = RecordingSleep()
        settings = LoopSettings(sleep=sleep)
        base = f"http://127.0.0.1:{closed_port}"
        built: Adapter[Any]
        if adapter_kind == "responses":
            built = OpenAIAdapter(
                model="m", base_url=f"{base}/v1", api_key=SECRET_KEY, max_retries=2, timeout=5.0
            )
        elif adapter_kind == "chat":
            built = ChatCompletionsAdapter(
                model="m", base_url=f"{base}/v1", api_key=SECRET_KEY, max_retries=2, timeout=5.0
            )
        else:
            built = AnthropicAdapter(
                model="m", base_url=base, api_key=SECRET_KEY, max_retries=2, timeout=5.0
            )
        adapter = Adapter(built.provider, settings=settings)
        with pytest.raises(ProviderError) as caught:
            _evaluate(adapter)
        error = caught.value
        endpoint = f"POST http://127.0.0.1:{closed_port}{path}"
        assert error.endpoint == endpoint
        assert error.attempts == 3
        assert error.reason == (
            f"could not reach the provider: connection refused ({endpoint}, 3 attempts). "
            f"Nothing is listening at 127.0.0.1:{closed_port}: start the server, or check "
            "base_url"
        )
        assert SECRET_KEY not in str(error)
        assert len(sleep.sleeps) == 2


class TestStatuses:
    def test_401_says_the_key_was_refused_and_never_shows_it(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A refused key is named as the cause, with the variable to check; the key is not shown."""
        openai_loopback.reply(
            Reply(status=401, body=api_error("Incorrect API key provided", kind="auth"))
        )
        adapter = OpenAIAdapter(
            model="gpt-test", base_url=openai_loopback.base_url, api_key=SECRET_KEY, max_retries=0
        )
        with pytest.raises(ProviderError) as caught:
            _evaluate(adapter)
        error = caught.value
        assert error.status_code == 401
        assert error.hint == "The server refused the key: check api_key= (or OPENAI_API_KEY)"
        assert error.reason.startswith(
            "the provider answered with HTTP 401: Incorrect API key provided "
            f"(POST {openai_loopback.base_url}/responses, 1 attempt)."
        )
        assert SECRET_KEY not in str(error)

    def test_anthropic_401_names_its_own_key_variable(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """The hint names the variable of the SDK in use."""
        openai_loopback.reply(
            Reply(status=401, body={"type": "error", "error": {"type": "auth", "message": "no"}})
        )
        root = openai_loopback.base_url.removesuffix("/v1")
        adapter = AnthropicAdapter(model="m", base_url=root, api_key=SECRET_KEY, max_retries=0)
        with pytest.raises(ProviderError) as caught:
            _evaluate(adapter)
        assert caught.value.hint == (
            "The server refused the key: check api_key= (or ANTHROPIC_API_KEY)"
        )

    def test_404_on_responses_points_a_local_server_at_chat_completions(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A server without /v1/responses (llama.cpp, Ollama...) gets the Chat Completions hint."""
        openai_loopback.reply(Reply(status=404, raw=b"File Not Found", headers={}))
        adapter = openai_loopback.adapter()
        with pytest.raises(ProviderError) as caught:
            _evaluate(adapter)
        error = caught.value
        assert error.endpoint == f"POST {openai_loopback.base_url}/responses"
        assert error.hint is not None
        assert error.hint.startswith(
            "The server does not serve /v1/responses (or does not know the model): local "
            "servers (llama.cpp, Ollama, vLLM, LM Studio) usually offer Chat Completions only"
        )

    def test_404_on_chat_completions_without_v1_says_add_v1(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A base URL missing /v1 is the usual cause of a 404 on /chat/completions."""
        openai_loopback.reply(Reply(status=404, body=api_error("not found", kind="nf")))
        root = openai_loopback.base_url.removesuffix("/v1")
        adapter = ChatCompletionsAdapter(model="m", base_url=root, api_key="k", max_retries=0)
        with pytest.raises(ProviderError) as caught:
            _evaluate(adapter)
        assert caught.value.hint == (
            "The server does not serve /chat/completions: OpenAI-compatible servers serve "
            "/v1/chat/completions, so base_url usually ends with /v1"
        )

    def test_429_after_retries_reports_every_attempt_and_publishes_each_retry(
        self, openai_loopback: OpenAILoopback, caplog: pytest.LogCaptureFixture
    ) -> None:
        """Three sends, two RequestRetried events with their delays, then the throttling hint."""
        throttled = api_error("Rate limit reached", kind="requests", code="rate_limit_exceeded")
        openai_loopback.reply(
            *[Reply(status=429, body=throttled, headers={"retry-after-ms": "5"})] * 3
        )
        sleep = RecordingSleep()
        adapter = openai_loopback.adapter(max_retries=2, settings=LoopSettings(sleep=sleep))
        bus = InProcessEventBus()
        retried: list[RequestRetried] = []
        bus.subscribe(RequestRetried, retried.append)
        with pytest.raises(ProviderError) as caught, caplog.at_level("INFO"):
            _evaluate(adapter, bus)
        error = caught.value
        assert error.attempts == 3
        assert error.status_code == 429
        assert "(POST " in error.reason
        assert ", 3 attempts). The provider is throttling requests" in error.reason
        assert [(event.round, event.attempt, event.delay) for event in retried] == [
            (1, 1, 0.005),
            (1, 2, 0.005),
        ]
        assert {event.status_code for event in retried} == {429}
        assert retried[0].cause.startswith("rate limited with HTTP 429 (retry after 0.005s)")
        assert retried[0].error_type == "ProviderError"
        assert sleep.sleeps == [0.005, 0.005]
        lines = [r.getMessage() for r in caplog.records if r.name == "weakincentives.adapters"]
        assert [line.partition(": ")[0] for line in lines] == [
            "retrying round 1 of prompt 'plan' (attempt 1 failed) in 0.01s",
            "retrying round 1 of prompt 'plan' (attempt 2 failed) in 0.01s",
        ]


class TestDeadline:
    def test_a_deadline_error_carries_the_last_failure(
        self, openai_loopback: OpenAILoopback, clock: FakeClock
    ) -> None:
        """A 500 whose back-off would pass the deadline: the message names the 500 too."""
        openai_loopback.reply(
            Reply(status=500, body=api_error("upstream exploded", kind="server_error"))
        )
        adapter = openai_loopback.adapter(max_retries=3, settings=LoopSettings(clock=clock))
        deadline = clock.now + timedelta(seconds=0.1)
        with pytest.raises(PromptEvaluationError) as caught:
            adapter.evaluate(trip_prompt((WEATHER,)), TRIP, deadline=deadline)
        error = caught.value
        assert error.phase == "request"
        assert error.reason.startswith(
            f"deadline {deadline.isoformat()} passed during round 1; the last attempt failed: "
            "the provider answered with HTTP 500: upstream exploded (POST "
        )
        assert isinstance(error.__cause__, ProviderError)
