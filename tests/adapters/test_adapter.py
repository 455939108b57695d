"""The one adapter class: construction, factories, closing and what a closed adapter does."""

from __future__ import annotations

import asyncio
import inspect
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.anthropic.bodies import root_url
from tests.adapters.conftest import OpenAILoopback, load_response, ok
from tests.adapters.openai.test_responses import TRIP, trip_prompt
from weakincentives.adapters import (
    Adapter,
    LoopSettings,
    OfflineAdapter,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.adapters._step_runner import IN_PROCESS
from weakincentives.adapters.anthropic import AnthropicAdapter, AnthropicMessages
from weakincentives.adapters.openai import (
    ChatCompletions,
    ChatCompletionsAdapter,
    OpenAIAdapter,
    OpenAIResponses,
)
from weakincentives.errors import AdapterClosedError, ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, PromptFailed, PromptRendered, Session
from weakincentives.store import SQLiteStore

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")


@dataclass(frozen=True)
class Ping:
    n: int


def ping(params: Ping, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message=f"pong {params.n}")


def ping_prompt() -> Prompt[None]:
    tool = Tool(name="ping", description="Ping.", handler=ping)
    return Prompt(
        ns="t", key="ping", sections=[MarkdownSection(title="T", template="Go.", tools=(tool,))]
    )


def tool_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("weakincentives-offline")]


class TestFactories:
    @pytest.mark.parametrize(
        ("factory", "provider", "options"),
        [
            (OpenAIAdapter, OpenAIResponses, {"model": "m", "api_key": "k"}),
            (ChatCompletionsAdapter, ChatCompletions, {"model": "m", "api_key": "k"}),
            (AnthropicAdapter, AnthropicMessages, {"model": "m", "api_key": "k"}),
            (OfflineAdapter, OfflineModel, {"call_every_tool": True}),
        ],
        ids=["responses", "chat", "anthropic", "offline"],
    )
    def test_a_factory_is_the_adapter_over_its_provider(
        self, factory: Any, provider: type[object], options: dict[str, Any]
    ) -> None:
        """Each factory takes its provider's options and returns Adapter(provider(...))."""
        adapter = factory(**options)
        assert type(adapter) is Adapter
        assert type(adapter.provider) is provider
        for name, value in options.items():
            assert getattr(adapter.provider, name) == value
        assert adapter.settings == LoopSettings()
        assert factory.__module__ == provider.__module__
        assert factory.__name__.endswith("Adapter")
        adapter.close()

    def test_a_factory_shows_its_providers_options(self) -> None:
        """help() and IDEs see the provider's keywords on the factory."""
        parameters = list(inspect.signature(ChatCompletionsAdapter).parameters)
        assert parameters[:2] == ["model", "client"]
        assert "token_cap_field" in parameters
        assert "settings" not in parameters

    def test_settings_must_be_loop_settings(self) -> None:
        """Anything else is refused at construction, naming the field."""
        with pytest.raises(
            ConfigValidationError, match="settings must be a LoopSettings"
        ) as caught:
            Adapter(OfflineModel(call_every_tool=True), settings={"max_rounds": 2})  # type: ignore[arg-type]  # the wrong type is the point
        assert caught.value.field_name == "settings"

    def test_the_api_key_stays_out_of_the_providers_repr(self) -> None:
        """A provider's repr shows its options but never the key."""
        provider = OpenAIResponses(model="m", api_key="sk-secret")
        assert "sk-secret" not in repr(provider)
        assert "model='m'" in repr(provider)
        provider.close()


class TestClientOwnership:
    @pytest.mark.parametrize(
        ("provider", "clients"),
        [
            (OpenAIResponses, "openai"),
            (ChatCompletions, "openai"),
            (AnthropicMessages, "anthropic"),
        ],
        ids=["responses", "chat", "anthropic"],
    )
    def test_a_client_given_with_options_to_build_one_is_refused(
        self, provider: Any, clients: str
    ) -> None:
        """client= and api_key=/base_url=/... are two ways to one client: only one is taken."""
        sdk = openai if clients == "openai" else anthropic
        client = (sdk.OpenAI if clients == "openai" else sdk.Anthropic)(api_key="k")
        with pytest.raises(ConfigValidationError, match="either client= or the options") as caught:
            provider(model="m", client=client, timeout=3.0, base_url="http://h")
        assert caught.value.message.endswith("not both: set base_url, timeout on the client")
        assert (caught.value.config_type, caught.value.field_name) == (provider, "client")
        client.close()

    @pytest.mark.parametrize(
        "provider",
        [
            lambda: OpenAIResponses(model="m", api_key="k"),
            lambda: ChatCompletions(model="m", api_key="k"),
            lambda: AnthropicMessages(model="m", api_key="k"),
        ],
        ids=["responses", "chat", "anthropic"],
    )
    def test_close_closes_a_client_the_provider_built(self, provider: Any) -> None:
        """The client built from api_key= is the adapter's to close, once."""
        adapter = Adapter(provider())
        client = adapter.provider.sdk_client
        assert client.is_closed() is False
        adapter.close()
        assert client.is_closed() is True
        adapter.close()  # idempotent
        assert adapter.closed is True

    def test_close_leaves_a_callers_client_open(self, openai_loopback: OpenAILoopback) -> None:
        """A client passed in belongs to the caller: usable after the adapter is closed."""
        client = openai.OpenAI(api_key="k", base_url=openai_loopback.base_url, max_retries=0)
        openai_loopback.reply(ok(load_response("final_answer")), ok(load_response("final_answer")))
        with Adapter(OpenAIResponses(model="m", client=client)) as adapter:
            adapter.evaluate(trip_prompt(()), TRIP)
        assert adapter.closed is True
        assert client.is_closed() is False
        again = Adapter(OpenAIResponses(model="m", client=client))
        assert again.evaluate(trip_prompt(()), TRIP).rounds == 1
        client.close()

    def test_async_with_closes_an_anthropic_client_it_built(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """``async with`` closes on exit without blocking the loop."""
        provider = AnthropicMessages(model="m", api_key="k", base_url=root_url(openai_loopback))

        async def use() -> bool:
            async with Adapter(provider) as adapter:
                assert adapter.provider.sdk_client.is_closed() is False
            result: bool = adapter.provider.sdk_client.is_closed()
            return result

        assert asyncio.run(use()) is True


class TestClosedAdapter:
    def test_close_stops_the_worker_threads(self) -> None:
        """Sync handlers ran on worker threads; after close() none is left."""
        adapter = OfflineAdapter(
            [
                ScriptedTurn(calls=(ScriptedCall(name="ping", arguments={"n": 1}),)),
                ScriptedTurn(text="ok"),
            ]
        )
        adapter.evaluate(ping_prompt())
        assert tool_threads() != []
        adapter.close()
        assert tool_threads() == []

    def test_evaluating_a_closed_adapter_is_a_typed_error_and_publishes_nothing(self) -> None:
        """evaluate and evaluate_async both refuse, naming the adapter, before any event."""
        bus = InProcessEventBus()
        session = Session(bus=bus)
        adapter = OfflineAdapter([ScriptedTurn(text="never")])
        adapter.close()
        with pytest.raises(AdapterClosedError, match="adapter 'offline' is closed") as caught:
            adapter.evaluate(ping_prompt(), bus=bus, session=session)
        assert caught.value.adapter_name == "offline"
        with pytest.raises(AdapterClosedError):
            asyncio.run(adapter.evaluate_async(ping_prompt(), bus=bus, session=session))
        assert session.select(PromptRendered) == ()
        assert session.select(PromptFailed) == ()
        assert adapter.provider.remaining_turns == 1

    def test_aclose_closes_from_async_code(self) -> None:
        """``await aclose()`` is close() for a running loop."""
        adapter = OfflineAdapter([ScriptedTurn(text="hi")])

        async def use() -> str:
            text = (await adapter.evaluate_async(ping_prompt())).text
            await adapter.aclose()
            return text

        assert asyncio.run(use()) == "hi"
        assert adapter.closed is True


class TestArgumentChecks:
    def test_store_and_steps_together_are_refused(self, tmp_path: Path) -> None:
        """A store records the loop's own steps, so a step runner cannot be added to it."""
        adapter = OfflineAdapter([ScriptedTurn(text="never")])
        with (
            adapter,
            pytest.raises(ConfigValidationError, match="pass store= or steps=, not both") as caught,
        ):
            adapter.evaluate(
                ping_prompt(), store=SQLiteStore(tmp_path / "evals.db"), steps=IN_PROCESS
            )
        assert caught.value.field_name == "steps"

    def test_a_disclosure_that_is_not_one_is_refused(self) -> None:
        """evaluate(disclosure=...) takes a Disclosure, checked before anything runs."""
        adapter = OfflineAdapter([ScriptedTurn(text="never")])
        with pytest.raises(ConfigValidationError, match="disclosure must be a Disclosure, got str"):
            adapter.evaluate(ping_prompt(), disclosure="eager")  # type: ignore[arg-type]  # the wrong type is the point
        assert adapter.provider.remaining_turns == 1

    @pytest.mark.parametrize("size", [0, -3, True, 2.5])
    def test_a_stream_chunk_size_must_be_a_positive_integer(self, size: object) -> None:
        """The offline model refuses a chunk size it could not stream in."""
        with pytest.raises(
            ConfigValidationError, match="stream_chunk_size must be a positive"
        ) as caught:
            OfflineModel(call_every_tool=True, stream_chunk_size=size)  # type: ignore[arg-type]  # wrong values are the point
        assert (caught.value.field_name, caught.value.value) == ("stream_chunk_size", size)

    def test_a_responder_must_answer_with_a_scripted_turn(self) -> None:
        """Anything else is phase response, naming what it returned."""
        adapter = OfflineAdapter(responder=lambda request: "hi")  # type: ignore[arg-type,return-value]  # the wrong answer is the point
        with pytest.raises(
            PromptEvaluationError, match="returned str, not a ScriptedTurn"
        ) as caught:
            adapter.evaluate(ping_prompt())
        assert caught.value.phase == "response"


def test_a_disclosure_of_another_type_is_refused_before_anything_runs() -> None:
    """evaluate's disclosure= must be a Disclosure; the error names the field and value."""
    adapter = OfflineAdapter([ScriptedTurn(text="never")])
    with (
        adapter,
        pytest.raises(
            ConfigValidationError, match="disclosure must be a Disclosure, got str"
        ) as caught,
    ):
        adapter.evaluate(ping_prompt(), disclosure="eager")  # type: ignore[arg-type]
    assert (caught.value.field_name, caught.value.value) == ("disclosure", "eager")
    assert adapter.provider.requests == ()
