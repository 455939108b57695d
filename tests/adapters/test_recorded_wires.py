"""Recording the SDK providers over real HTTP, and replaying them with no network at all.

Each wire (Responses, Chat Completions, Anthropic Messages), streamed and not, with sync
and async clients: a run is recorded against the loopback server through the official
SDK, then replayed twice - by a provider whose client points at a second loopback
server (which must receive nothing), and by one whose client points at a port nobody
listens on (any attempt to connect would fail the run).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.adapters.conftest import OpenAILoopback, Reply, api_error
from tests.adapters.replay_kit import Entry, run, settings, weather_prompt
from tests.adapters.wires import WIRES, Call, ClientKind, Turn, Wire, WireName, wire
from weakincentives.adapters import Adapter, Recorded
from weakincentives.adapters.openai import OpenAIResponses
from weakincentives.errors import ReplayMissError
from weakincentives.runtime import TextDelta

pytest.importorskip("openai")
pytest.importorskip("anthropic")

LISBON = Call("call_1", "get_weather", {"city": "Lisbon"})
ANSWER = "Lisbon is sunny today, at 24 degrees."


@pytest.fixture(params=WIRES)
def wired(request: pytest.FixtureRequest) -> Wire:
    """Each wire in turn."""
    name: WireName = request.param
    return wire(name)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A port bound on 127.0.0.1 but not listening: every connection is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]


def provider_at(wired: Wire, base_url: str, kind: ClientKind, **options: Any) -> Any:
    """``wired``'s provider on the real SDK, its client pointed at ``base_url``."""
    address: Any = SimpleNamespace(base_url=base_url)
    return wired.adapter(address, kind, **options).provider


def recorded_run(
    wired: Wire, loopback: OpenAILoopback, cassette: Path, kind: ClientKind, *, stream: bool
) -> Any:
    """A tool call and an answer, recorded through the SDK against the loopback server."""
    loopback.reply(
        wired.reply(Turn(calls=(LISBON,)), stream=stream),
        wired.reply(Turn(text=ANSWER), stream=stream),
    )
    inner = provider_at(wired, loopback.base_url, kind, stream=stream)
    adapter = Adapter(Recorded(inner, cassette, mode="record"), settings=settings())
    return run(adapter, weather_prompt(), "evaluate" if kind == "sync" else "evaluate_async")


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_recorded_run_replays_without_the_network(
    openai_loopback: OpenAILoopback,
    wired: Wire,
    kind: ClientKind,
    stream: bool,
    tmp_path: Path,
    closed_port: int,
) -> None:
    """Recorded through the SDK; replayed equal with zero requests and with no server."""
    cassette = tmp_path / f"{wired.name}.json"
    prompt = weather_prompt()
    entry: Entry = "evaluate" if kind == "sync" else "evaluate_async"
    recorded = recorded_run(wired, openai_loopback, cassette, kind, stream=stream)
    assert [request.path for request in openai_loopback.requests] == [wired.path] * 2
    assert recorded.response.text == ANSWER
    openai_loopback.requests.clear()  # from here on the server counts the replays' requests

    for base_url in (openai_loopback.base_url, f"http://127.0.0.1:{closed_port}/v1"):
        inner = provider_at(wired, base_url, kind, stream=stream)
        provider = Recorded(inner, cassette)
        replayed = run(Adapter(provider, settings=settings()), prompt, entry)
        assert replayed.response == recorded.response
        assert replayed.events == recorded.events
        assert provider.remaining_exchanges == 0
    assert openai_loopback.requests == []  # the replay against it sent nothing

    deltas = [event.text for event in recorded.events if isinstance(event, TextDelta)]
    assert "".join(deltas) == ANSWER
    if stream:
        assert deltas == [ANSWER[: len(ANSWER) // 2], ANSWER[len(ANSWER) // 2 :]]


def test_the_cassette_holds_the_bodies_the_server_received(
    openai_loopback: OpenAILoopback, wired: Wire, tmp_path: Path
) -> None:
    """Each request as built (keys sorted) and each reply body as the server sent it."""
    cassette = tmp_path / "c.json"
    recorded_run(wired, openai_loopback, cassette, "sync", stream=False)
    exchanges = json.loads(cassette.read_text(encoding="utf-8"))["exchanges"]
    assert [exchange["request"] for exchange in exchanges] == openai_loopback.bodies
    assert [exchange["round"] for exchange in exchanges] == [1, 2]
    answer = wired.reply(Turn(text=ANSWER)).body
    if wired.name == "anthropic":
        # One send may hold several replies (a paused turn is continued): a tuple of bodies.
        assert [exchange["reply_form"] for exchange in exchanges] == ["typed", "typed"]
        assert exchanges[1]["reply"] == {"$type": "tuple", "value": [answer]}
    else:
        assert [exchange["reply_form"] for exchange in exchanges] == ["json", "json"]
        assert exchanges[1]["reply"] == answer


def test_a_changed_prompt_misses_before_anything_is_sent(
    openai_loopback: OpenAILoopback, wired: Wire, tmp_path: Path
) -> None:
    """The miss shows the changed line of the wire's request body."""
    cassette = tmp_path / "c.json"
    recorded_run(wired, openai_loopback, cassette, "sync", stream=False)
    inner = provider_at(wired, openai_loopback.base_url, "sync")
    adapter = Adapter(Recorded(inner, cassette), settings=settings())
    with pytest.raises(ReplayMissError) as caught:
        run(adapter, weather_prompt("What is the weather in Porto?"))
    assert (caught.value.round, caught.value.closest) == (1, 0)
    assert caught.value.difference == PROMPT_PATHS[wired.name]
    changed = [line for line in caught.value.diff.splitlines() if line.startswith(("-", "+"))]
    assert [line[0] + line[1:].strip() for line in changed[2:]] == [
        "-What is the weather in Lisbon?",
        "+What is the weather in Porto?",
    ]
    assert len(openai_loopback.requests) == 2


PROMPT_PATHS = {
    "responses": "$.input[0].content",
    "chat": "$.messages[0].content",
    "anthropic": "$.messages[0].content[0].text",
}
"""Where each wire's request carries the prompt."""


def test_a_retried_request_is_recorded_once(
    openai_loopback: OpenAILoopback, tmp_path: Path, closed_port: int
) -> None:
    """A 500 then a reply: the cassette holds the reply; the replay sends nothing."""
    responses = wire("responses")
    cassette = tmp_path / "c.json"
    openai_loopback.reply(
        Reply(status=500, body=api_error("try again", kind="server_error")),
        responses.reply(Turn(text=ANSWER)),
    )
    waits: list[float] = []

    async def no_wait(delay: float) -> None:
        waits.append(delay)

    looping = replace(settings(), sleep=no_wait)
    inner = OpenAIResponses(
        model="gpt-test", base_url=openai_loopback.base_url, api_key="test-key", max_retries=1
    )
    adapter = Adapter(Recorded(inner, cassette, mode="record"), settings=looping)
    recorded = run(adapter, weather_prompt())
    assert len(openai_loopback.requests) == 2
    assert len(waits) == 1
    (only,) = json.loads(cassette.read_text(encoding="utf-8"))["exchanges"]
    assert only["reply"] == responses.reply(Turn(text=ANSWER)).body
    offline = provider_at(responses, f"http://127.0.0.1:{closed_port}/v1", "sync")
    replayed = run(Adapter(Recorded(offline, cassette), settings=settings()), weather_prompt())
    assert replayed.response == recorded.response
