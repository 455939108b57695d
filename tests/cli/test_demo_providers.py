"""The demo on the Chat Completions and Anthropic adapters, with request options.

The providers are loopback servers speaking each wire, so the runs are real SDK calls
that answer at once with a triage report.
"""

from __future__ import annotations

import io
import json

import pytest

from tests.adapters.anthropic.bodies import message, root_url, text
from tests.adapters.conftest import OpenAILoopback, ok
from tests.adapters.openai.chat_bodies import completion
from weakincentives._cli import main
from weakincentives._cli._demo import DemoOptions, build_adapter
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions
from weakincentives.errors import ConfigValidationError

pytest.importorskip("openai")
pytest.importorskip("anthropic")

REPORT = json.dumps(
    {
        "severity": "sev2",
        "suspected_cause": "The 14:02 deploy of checkout-api.",
        "actions": ["Roll back checkout-api"],
        "sources": [],
    }
)


def demo(*argv: str) -> str:
    out = io.StringIO()
    assert main(["demo", "--no-prompt", *argv], out=out) == 0
    return out.getvalue()


def test_openai_chat_runs_the_demo_without_the_web_search_it_cannot_offer(
    openai_loopback: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transcript says web search was left out; options reach the request."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("WINK_REQUEST_OPTIONS", '{"top_k": 20}')
    openai_loopback.reply(ok(completion(REPORT)))
    output = demo(
        "--adapter",
        "openai-chat",
        "--model",
        "qwen2.5",
        "--base-url",
        openai_loopback.base_url,
        "--temperature",
        "0.2",
    )
    assert "on the openai-chat adapter" in output
    assert (
        "(section 'web_search' left out: the openai-chat adapter cannot run its hosted tools)"
        in output
    )
    assert '"severity": "sev2"' in output
    body = openai_loopback.bodies[0]
    assert (body["model"], body["temperature"], body["top_k"]) == ("qwen2.5", 0.2, 20)
    assert body["max_tokens"] == 4096
    assert "tools" in body
    # The report's schema would be enforced as a grammar by llama.cpp, leaving the model
    # no way to call a tool: it stays out of requests that offer tools.
    assert "response_format" not in body


def test_answer_schema_always_sends_the_schema_with_the_tools(
    openai_loopback: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--answer-schema always: the report's schema goes in every request."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    openai_loopback.reply(ok(completion(REPORT)))
    demo(
        "--adapter",
        "openai-chat",
        "--base-url",
        openai_loopback.base_url,
        "--answer-schema",
        "always",
    )
    body = openai_loopback.bodies[0]
    assert body["response_format"]["json_schema"]["name"] == "TriageReport"
    assert "tools" in body


def test_an_unknown_answer_schema_mode_in_the_environment_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """WINK_ANSWER_SCHEMA must name a mode; the error lists them."""
    monkeypatch.setenv("WINK_ANSWER_SCHEMA", "sometimes")
    with pytest.raises(ConfigValidationError, match="'without_tools', 'always', 'never'") as caught:
        DemoOptions.from_environment(adapter="openai-chat")
    assert (caught.value.field_name, caught.value.value) == ("answer_schema", "sometimes")


def test_anthropic_runs_the_demo_with_web_search(
    openai_loopback: OpenAILoopback, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY configure the run; web search is offered."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", root_url(openai_loopback))
    openai_loopback.reply(ok(message(text(REPORT))))
    output = demo("--adapter", "anthropic", "--request-options", '{"temperature": 0}')
    assert "on the anthropic adapter" in output
    assert "left out" not in output
    body = openai_loopback.bodies[0]
    assert body["model"] == "claude-sonnet-4-6"
    assert body["temperature"] == 0
    assert {
        "type": "web_search_20250305",
        "name": "web_search",
        "allowed_domains": ["status.payments.example.com"],
    } in body["tools"]


def test_the_environment_picks_model_base_url_and_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each provider reads its own base URL variable; the temperature flag joins the JSON."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai.invalid/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://anthropic.invalid")
    monkeypatch.setenv("WINK_REQUEST_OPTIONS", '{"top_p": 0.5}')
    options = DemoOptions.from_environment(adapter="anthropic", temperature=0.0)
    assert (options.model, options.base_url) == ("claude-sonnet-4-6", "http://anthropic.invalid")
    assert options.request_options == {"top_p": 0.5, "temperature": 0.0}
    chat = DemoOptions.from_environment(adapter="openai-chat", request_options='{"seed": 1}')
    assert (chat.model, chat.base_url) == ("gpt-4.1-mini", "http://openai.invalid/v1")
    assert chat.request_options == {"seed": 1}


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("{nope", "must be a JSON object, such as"),
        ("[1]", "got a JSON list"),
        ('{"temperature": NaN}', "NaN is not a JSON number"),
        ('{"a": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than"),
    ],
)
def test_request_options_must_be_a_json_object(text: str, complaint: str) -> None:
    """A clear configuration error, naming the field."""
    with pytest.raises(ConfigValidationError, match=complaint) as caught:
        DemoOptions.from_environment(request_options=text)
    assert caught.value.field_name == "request_options"


def test_bad_request_options_on_the_command_line_exit_with_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command prints the error instead of a traceback."""
    assert main(["demo", "--request-options", "3"], out=io.StringIO()) == 1
    assert "request options must be a JSON object" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf"])
def test_a_temperature_that_is_not_finite_exits_with_1(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused up front, naming the flag (it failed later, naming no option)."""
    assert main(["demo", "--temperature", value], out=io.StringIO()) == 1
    assert f"temperature must be a finite number, got {value}" in capsys.readouterr().err


def test_deeply_nested_request_options_in_the_environment_exit_with_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON nested past the recursion limit is refused, not a RecursionError traceback."""
    monkeypatch.setenv("WINK_REQUEST_OPTIONS", "[" * 50_000 + "]" * 50_000)
    assert main(["demo", "--no-prompt"], out=io.StringIO()) == 1
    assert "request options must be a JSON object" in capsys.readouterr().err


def test_each_adapter_name_builds_its_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    """openai-chat and anthropic build their adapters with the demo's options."""
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    chat = build_adapter(DemoOptions(adapter="openai-chat", model="llama"))
    claude = build_adapter(DemoOptions(adapter="anthropic", model="claude-x"))
    assert isinstance(chat.provider, ChatCompletions)
    assert isinstance(claude.provider, AnthropicMessages)
    assert (chat.provider.model, claude.provider.model) == ("llama", "claude-x")
    assert chat.provider.token_cap_field == "max_tokens"
    for adapter in (chat, claude):
        assert (adapter.settings.recover_text_tool_calls, adapter.settings.answer_schema) == (
            True,
            "without_tools",
        )
