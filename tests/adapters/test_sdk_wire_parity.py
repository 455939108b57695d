"""What the adapters put on the wire is what the SDK's own ``create`` sends for the same body.

The OpenAI providers post their wire-shaped bodies through the client's ``post``,
skipping the walk ``create`` makes over the body against the SDK's type definitions;
the Anthropic provider still calls ``create``. Either way the server must receive the
same request as from ``create``: each body the adapter sent (through the loop, on the
real SDK clients) is sent again with the SDK's ``with_streaming_response.create`` on a
client of the same kind, and the two requests the loopback server recorded are compared:
path, JSON body, and every header (auth, content type, user agent, the SDK's
``x-stainless-*`` family, ``anthropic-version``, beta and caller headers).
"""

from __future__ import annotations

import asyncio
import inspect
from dataclasses import dataclass
from types import ModuleType
from typing import Any, cast

import pytest

from tests.adapters.conftest import OpenAILoopback, RecordedRequest, Reply
from tests.adapters.openai.test_responses import WEATHER
from tests.adapters.wires import WIRES, Call, ClientKind, Turn, WireName, sdk_client, wire
from weakincentives.adapters import Adapter, Attempt
from weakincentives.adapters._sdk_senders import _declared_options
from weakincentives.prompt import MarkdownSection, Prompt
from weakincentives.serde import JSONValue
from weakincentives.tools import web_search_tool

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

type Body = dict[str, JSONValue]

LISBON = Call("call_1", "get_weather", {"city": "Lisbon"})
OPTIONS: dict[WireName, dict[str, JSONValue]] = {
    # A field every SDK version names, one the SDK's create does not name (sent through
    # extra_body by create, in the body by the posted path), and the SDK's own options.
    "responses": {
        "temperature": 0,
        "service_tier": "flex",
        "reasoning_effort_hint": "low",
        "extra_headers": {"OpenAI-Beta": "responses=v1", "X-Caller": "parity"},
        "extra_query": {"trace": "on"},
        "extra_body": {"metadata": {"run": "parity"}},
    },
    "chat": {
        "temperature": 0,
        "top_k": 5,
        "extra_headers": {"X-Caller": "parity"},
        "extra_query": {"trace": "on"},
        "extra_body": {"min_p": 0.1},
    },
    "anthropic": {
        "temperature": 0,
        "top_k": 5,
        "extra_headers": {"anthropic-beta": "context-1m-2025-08-07", "X-Caller": "parity"},
        "extra_query": {"trace": "on"},
    },
}
SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body")


@dataclass(frozen=True, slots=True)
class Verdict:
    """A structured answer, so each wire's output-format field is in the body."""

    approved: bool
    reason: str


def _prompt(name: WireName) -> Prompt[Verdict]:
    hosted = () if name == "chat" else (web_search_tool(),)
    section = MarkdownSection(
        title="Task", template="Check the weather in Lisbon.", tools=(WEATHER,), hosted_tools=hosted
    )
    return Prompt[Verdict](ns="parity", key="verdict", sections=[section])


def _answer(name: WireName, stream: bool) -> Reply:
    return wire(name).reply(Turn(text='{"approved": true, "reason": "sunny"}'), stream=stream)


def _create(name: WireName, client: Any) -> Any:
    if name == "responses":
        return client.responses.with_streaming_response.create
    if name == "chat":
        return client.chat.completions.with_streaming_response.create
    return client.messages.with_streaming_response.create


def _create_arguments(create: Any, body: Body, *, stream: bool) -> dict[str, Any]:
    """``body`` as a caller of ``create`` passes it: fields it does not name in extra_body."""
    named = set(inspect.signature(create).parameters)
    arguments: dict[str, Any] = {}
    unnamed: dict[str, JSONValue] = {}
    for key, value in body.items():
        if key == "stream":
            continue
        if key in SDK_OPTIONS or key in named:
            arguments[key] = value
        else:
            unnamed[key] = value
    if unnamed:
        given = arguments.get("extra_body")
        arguments["extra_body"] = {**(given if isinstance(given, dict) else {}), **unnamed}
    if stream:
        arguments["stream"] = True
    return arguments


def _send_with_create(
    name: WireName, loopback: OpenAILoopback, kind: ClientKind, bodies: list[Body], *, stream: bool
) -> None:
    client = sdk_client(name, loopback, kind)
    create = _create(name, client)
    for body in bodies:
        loopback.reply(_answer(name, stream))
        arguments = _create_arguments(create, body, stream=stream)
        if kind == "sync":
            with create(**arguments) as reply:
                reply.read()
            continue

        async def send(arguments: dict[str, Any] = arguments) -> None:
            async with create(**arguments) as reply:
                await reply.read()

        asyncio.run(send())
    if kind == "async":
        asyncio.run(client.close())
    else:
        client.close()


class _Recording:
    """The adapter's provider, keeping every request it builds (the bodies ``send`` gets)."""

    def __init__(self, provider: Any) -> None:
        self.provider = provider
        self.requests: list[Body] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.provider, name)

    def build_request(self, turn: Any) -> Body:
        request: Body = self.provider.build_request(turn)
        self.requests.append(request)
        return request


def _assert_same_request(ours: RecordedRequest, theirs: RecordedRequest) -> None:
    assert ours.method == theirs.method == "POST"
    assert ours.path == theirs.path
    assert ours.body == theirs.body
    assert ours.headers == theirs.headers


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["body", "stream"])
@pytest.mark.parametrize("name", WIRES)
def test_every_request_of_a_tool_round_is_what_create_sends(
    openai_loopback: OpenAILoopback, name: WireName, stream: bool, kind: ClientKind
) -> None:
    """Both requests of a round trip (tools, a replayed call and its output, an output
    format, hosted tools, request options) reach the server as ``create`` sends them."""
    shape = wire(name)
    openai_loopback.reply(shape.reply(Turn(calls=(LISBON,)), stream=stream), _answer(name, stream))
    built = shape.adapter(openai_loopback, kind, stream=stream, request_options=OPTIONS[name])
    recording = _Recording(built.provider)
    adapter: Adapter[Any] = Adapter(cast(Any, recording))
    if kind == "sync":
        response = adapter.evaluate(_prompt(name))
    else:
        response = asyncio.run(adapter.evaluate_async(_prompt(name)))
    assert response.output == Verdict(approved=True, reason="sunny")
    ours = list(openai_loopback.requests)
    assert [request.path for request in ours] == [f"{shape.path}?trace=on"] * 2
    assert [request.headers["x-caller"] for request in ours] == ["parity"] * 2
    assert len(recording.requests) == 2

    _send_with_create(name, openai_loopback, kind, recording.requests, stream=stream)
    theirs = openai_loopback.requests[2:]
    assert len(theirs) == 2
    for mine, created in zip(ours, theirs, strict=True):
        _assert_same_request(mine, created)


@pytest.mark.parametrize("name", ["responses", "chat"])
def test_an_admin_key_alone_is_refused_as_create_refuses_it(
    openai_loopback: OpenAILoopback, name: WireName, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The posted request keeps ``create``'s ``security``: model endpoints authenticate with
    the API key only, so a client holding just an admin key sends nothing, either way."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = openai.AsyncOpenAI(
        base_url=openai_loopback.base_url, admin_api_key="admin-key", max_retries=0
    )
    provider = wire(name).adapter(openai_loopback, "async", client=client).provider
    attempt = Attempt(number=1, timeout=None, prompt_name="parity", round=1)
    prompt: Body = {"role": "user", "content": "Hi"}
    body: Body = (
        {"model": "gpt-test", "input": [prompt]}
        if name == "responses"
        else {"model": "gpt-test", "messages": [prompt]}
    )
    refusal = "Could not resolve authentication method"
    with pytest.raises(TypeError, match=refusal):
        asyncio.run(provider.send(body, attempt, lambda text: None))

    async def created() -> None:
        async with _create(name, client)(**body) as reply:
            await reply.read()

    with pytest.raises(TypeError, match=refusal):
        asyncio.run(created())
    assert openai_loopback.requests == []


def test_only_the_request_options_the_sdk_declares_are_passed() -> None:
    """``security`` is an option of the ``openai`` 3 SDK only; an SDK without it gets none."""
    assert "security" in _declared_options(openai)
    assert "security" not in _declared_options(anthropic)
    assert {"headers", "timeout", "max_retries"} <= _declared_options(anthropic)
    assert _declared_options(ModuleType("an_sdk_without_request_options")) == frozenset()
