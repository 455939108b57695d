"""Building an ``OpenAIAdapter``: settings, a caller's own client, and what it refuses."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from tests.adapters.conftest import (
    OpenAILoopback,
    load_output,
    load_response,
    ok,
    response_body,
)
from tests.adapters.openai.test_responses import FINAL_TEXT, TRIP, WEATHER, trip_prompt
from weakincentives.adapters._sdk_errors import _jsonable
from weakincentives.adapters.openai import OpenAIAdapter, OpenAIResponses
from weakincentives.adapters.openai._codecs import OpenAICodeInterpreterCodec, OpenAIWebSearchCodec
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

openai = pytest.importorskip("openai")


class TestConstruction:
    @pytest.mark.parametrize("model", ["", "   "])
    def test_blank_model_is_refused(self, model: str) -> None:
        """The model is required; a blank one fails before any client is built."""
        with pytest.raises(
            ConfigValidationError, match="model must be a non-empty string"
        ) as caught:
            OpenAIAdapter(model=model, api_key="test-key")
        assert (caught.value.config_type, caught.value.field_name, caught.value.value) == (
            OpenAIResponses,
            "model",
            model,
        )

    def test_missing_api_key_says_how_to_provide_one(self) -> None:
        """With no key and no OPENAI_API_KEY the SDK refuses, and the error names the fix."""
        with pytest.raises(
            ConfigValidationError, match="pass api_key= or set OPENAI_API_KEY"
        ) as caught:
            OpenAIAdapter(model="gpt-test")
        assert caught.value.field_name == "api_key"
        assert isinstance(caught.value.__cause__, openai.OpenAIError)

    @pytest.mark.parametrize(
        ("base_url", "problem"),
        [
            ("http://[::1", "Invalid IPv6 URL"),
            ("http://localhost:99999/v1", "Port out of range 0-65535"),
            ("localhost:8080/v1", "it needs an http:// or https:// scheme and a host"),
            ("ftp://example.com", "it needs an http:// or https:// scheme and a host"),
        ],
    )
    def test_a_base_url_the_client_cannot_use_is_named(self, base_url: str, problem: str) -> None:
        """The SDK's transport raised its own InvalidURL; now the setting is named."""
        with pytest.raises(ConfigValidationError) as caught:
            OpenAIAdapter(model="gpt-test", api_key="k", base_url=base_url)
        assert caught.value.message == (
            f"base_url {base_url!r} is not a URL the client can use: {problem}"
        )
        assert caught.value.field_name == "base_url"

    def test_api_key_from_the_environment_is_used(
        self, openai_loopback: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Unset settings fall back to the SDK's defaults, such as OPENAI_API_KEY."""
        monkeypatch.setenv("OPENAI_API_KEY", "env-key")
        openai_loopback.reply(ok(load_response("final_answer")))
        adapter = OpenAIAdapter(model="gpt-test", base_url=openai_loopback.base_url, max_retries=0)
        adapter.evaluate(trip_prompt(()), TRIP)
        assert openai_loopback.requests[0].headers["authorization"] == "Bearer env-key"

    def test_missing_sdk_is_an_import_error_naming_the_extra(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without the openai package the adapter cannot be created, and says which extra to add."""
        monkeypatch.setitem(sys.modules, "openai", None)
        with pytest.raises(ImportError, match=r"pip install 'weakincentives\[openai\]'"):
            OpenAIAdapter(model="gpt-test", api_key="test-key")

    def test_properties_describe_the_adapter(self) -> None:
        """Name, model, client and the default codec registry are exposed read-only."""
        adapter = OpenAIAdapter(model="gpt-test", api_key="test-key")
        assert (adapter.name, adapter.provider.model) == ("openai", "gpt-test")
        assert isinstance(adapter.provider.sdk_client, openai.OpenAI)
        codecs = adapter.provider.hosted_tool_codecs
        assert sorted(codecs) == ["code_interpreter", "web_search"]
        assert isinstance(codecs["web_search"], OpenAIWebSearchCodec)
        assert isinstance(codecs["code_interpreter"], OpenAICodeInterpreterCodec)

    def test_settings_reach_the_client(self) -> None:
        """``base_url``, ``timeout`` and ``max_retries`` configure the SDK client it builds."""
        adapter = OpenAIAdapter(
            model="gpt-test",
            api_key="test-key",
            base_url="http://127.0.0.1:9/v1",
            timeout=1.5,
            max_retries=4,
        )
        client = adapter.provider.sdk_client
        assert (str(client.base_url), client.timeout, client.max_retries) == (
            "http://127.0.0.1:9/v1/",
            1.5,
            4,
        )

    def test_request_options_the_adapter_owns_are_refused(self) -> None:
        """Options that would be overwritten or clash are refused together, naming each fix."""
        with pytest.raises(ConfigValidationError) as caught:
            OpenAIAdapter(
                model="gpt-test",
                api_key="test-key",
                request_options={
                    "model": "other",
                    "input": [],
                    "timeout": 3,
                    "stream": True,
                    "tools": {"type": "file_search"},
                    "include": "reasoning.encrypted_content",
                    "text": "low",
                    "temperature": 0,
                },
            )
        assert caught.value.message == (
            "OpenAIResponses request_options cannot be used as given: "
            "'model' is set by the provider (pass model=); "
            "'input' is built from the prompt; "
            "'timeout' is a client setting (pass timeout=, or evaluate(deadline=)); "
            "'stream' is a provider setting (pass stream=True); "
            "'tools' must be a list (it is added to the prompt's tools); "
            "'include' must be a list (it is added to the hosted tools' includes); "
            "'text' must be an object (the output format is added to it)"
        )
        assert (caught.value.config_type, caught.value.field_name) == (
            OpenAIResponses,
            "request_options",
        )

    def test_request_options_that_are_not_a_mapping_are_refused(self) -> None:
        """request_options must be a mapping; the error names the provider, field and value."""
        given: Any = ["temperature"]
        with pytest.raises(ConfigValidationError) as caught:
            OpenAIAdapter(model="gpt-test", api_key="test-key", request_options=given)
        assert caught.value.message == "OpenAIResponses request_options must be a mapping, got list"
        assert (caught.value.config_type, caught.value.field_name, caught.value.value) == (
            OpenAIResponses,
            "request_options",
            ["temperature"],
        )

    def test_codec_registry_can_be_replaced(self) -> None:
        """A caller's registry is used as given (here: web search only)."""
        adapter = OpenAIAdapter(
            model="gpt-test",
            api_key="test-key",
            hosted_tool_codecs={"web_search": OpenAIWebSearchCodec()},
        )
        assert list(adapter.provider.hosted_tool_codecs) == ["web_search"]


class TestOwnClient:
    def test_a_callers_client_is_used_as_is(self, openai_loopback: OpenAILoopback) -> None:
        """With ``client=`` the adapter sends through it (its key, URL and retry settings)."""
        client = openai.OpenAI(api_key="own-key", base_url=openai_loopback.base_url, max_retries=0)
        adapter = OpenAIAdapter(model="gpt-own", client=client)
        openai_loopback.reply(ok(load_response("weather_call")), ok(load_response("final_answer")))
        response = adapter.evaluate(trip_prompt((WEATHER,)), TRIP)
        assert adapter.provider.sdk_client is client
        assert [request.headers["authorization"] for request in openai_loopback.requests] == [
            "Bearer own-key",
            "Bearer own-key",
        ]
        assert [body["model"] for body in openai_loopback.bodies] == ["gpt-own", "gpt-own"]
        assert response.rounds == 2


class TestReplyDetails:
    def test_content_parts_other_than_text_and_refusal_are_skipped(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """Parts the adapter does not read (here audio) neither fail nor add text."""
        openai_loopback.reply(
            ok(
                response_body(
                    {
                        "type": "message",
                        "id": "msg_1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [
                            {"type": "output_audio", "transcript": "Sunny."},
                            {"type": "output_text", "text": "Sunny.", "annotations": []},
                        ],
                    }
                )
            )
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.text == "Sunny."

    def test_refusal_part_without_text_counts_as_no_refusal(
        self, openai_loopback: OpenAILoopback
    ) -> None:
        """A refusal part whose text is missing is an empty answer, asked again, not a refusal."""
        openai_loopback.reply(
            ok(
                response_body(
                    {"type": "message", "content": [{"type": "refusal", "refusal": None}]}
                )
            ),
            ok(load_response("final_answer")),
        )
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.text == FINAL_TEXT
        assert openai_loopback.bodies[1]["input"][-1]["content"].startswith("Your reply was empty")

    @pytest.mark.parametrize(
        "usage",
        [None, "lots", {"input_tokens": True, "output_tokens": "7", "input_tokens_details": 3}],
        ids=["null", "string", "wrong-types"],
    )
    def test_unreadable_usage_counts_as_zero(
        self, openai_loopback: OpenAILoopback, usage: JSONValue
    ) -> None:
        """Usage is informational: odd values read as zero instead of failing the evaluation."""
        openai_loopback.reply(ok(response_body(*load_output("final_answer"), usage=usage)))
        response = openai_loopback.adapter().evaluate(trip_prompt(()), TRIP)
        assert response.usage.total_tokens == 0


class TestJsonable:
    def test_values_that_are_not_json_become_strings(self) -> None:
        """Error bodies from a custom client are made JSON-safe, keeping every value readable."""
        assert _jsonable({1: (2, 3), "nested": [None, 1.5, {"ok": True}]}) == {
            "1": "(2, 3)",
            "nested": [None, 1.5, {"ok": True}],
        }
