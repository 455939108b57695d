"""Recorded: record a provider's exchanges to a cassette, replay them without the provider.

These tests drive ``Recorded`` over the offline model and small hand-written providers
(the SDK providers over loopback HTTP are in ``test_recorded_wires.py``, a replay in a
fresh process in ``test_recorded_process.py``, the file format in ``test_cassette.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.replay_kit import cloudy, run, settings, weather_prompt
from weakincentives.adapters import (
    Adapter,
    ModelTurn,
    OfflineModel,
    Recorded,
    ScriptedCall,
    ScriptedTurn,
    TurnRequest,
)
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.errors import (
    CassetteError,
    ConfigValidationError,
    ProviderError,
    ReplayMissError,
)
from weakincentives.runtime import InProcessEventBus, PromptFailed, TextDelta

LISBON = ScriptedCall(name="get_weather", arguments={"city": "Lisbon"})
ANSWER = "Lisbon is sunny today, at 24 degrees."


def script() -> list[ScriptedTurn]:
    """A tool call, then an answer that streams in several pieces."""
    return [ScriptedTurn(text="Let me check.", calls=(LISBON,)), ScriptedTurn(text=ANSWER)]


def must_not_answer(request: TurnRequest) -> ScriptedTurn:
    """An offline model that fails the test if a replay ever asks it anything."""
    raise AssertionError(f"the inner model was asked round {request.round}")


def replaying(path: Path, **kwargs: Any) -> Adapter[Any]:
    """An adapter replaying ``path`` over a model that must never be asked."""
    provider = Recorded(OfflineModel(responder=must_not_answer), path, **kwargs)
    return Adapter(provider, settings=settings())


def record(path: Path, turns: list[ScriptedTurn] | None = None, **model: Any) -> Adapter[Any]:
    """An adapter recording the scripted model to ``path``."""
    inner = OfflineModel(script() if turns is None else turns, **model)
    return Adapter(Recorded(inner, path, mode="record"), settings=settings())


def exchanges(path: Path) -> list[dict[str, Any]]:
    """The exchanges the cassette at ``path`` holds, as JSON."""
    loaded: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["exchanges"]
    return loaded


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    """Where the test's cassette goes."""
    return tmp_path / "weather.json"


class TestReplay:
    @pytest.mark.parametrize("entry", ["evaluate", "evaluate_async"])
    def test_a_replayed_run_equals_the_recorded_one(self, cassette: Path, entry: Any) -> None:
        """Same response, same events (text deltas in the same pieces), no model asked."""
        prompt = weather_prompt()
        recorded = run(record(cassette, stream_chunk_size=7), prompt, entry)
        adapter = replaying(cassette)
        replayed = run(adapter, prompt, entry)
        assert replayed.response == recorded.response
        assert replayed.events == recorded.events
        deltas = [event.text for event in replayed.events if isinstance(event, TextDelta)]
        assert deltas == [
            *("Let me ", "check."),
            *("Lisbon ", "is sunn", "y today", ", at 24", " degree", "s."),
        ]
        assert deltas == [piece for exchange in exchanges(cassette) for piece in exchange["deltas"]]
        assert adapter.provider.remaining_exchanges == 0

    def test_the_cassette_holds_each_request_reply_and_fingerprint(self, cassette: Path) -> None:
        """One exchange per round: its round, the request as sent, the typed reply."""
        run(record(cassette), weather_prompt())
        document = json.loads(cassette.read_text(encoding="utf-8"))
        assert (document["format"], document["version"]) == ("weakincentives.cassette", 1)
        assert document["provider"] == "offline"
        first, second = document["exchanges"]
        assert (first["round"], second["round"]) == (1, 2)
        assert first["fingerprint"].startswith("sha256:")
        assert len(first["fingerprint"]) == len("sha256:") + 64
        assert first["request"]["history"] == [
            {
                "item": "PromptMessage",
                "text": "## 1 Task\nWhat is the weather in Lisbon?\n"
                "Use the tool, then answer in one sentence.",
            }
        ]
        assert first["reply_form"] == second["reply_form"] == "typed"
        assert second["reply"]["$type"] == "weakincentives.adapters:ModelTurn"
        assert second["reply"]["text"] == ANSWER

    def test_identical_requests_replay_in_the_order_they_were_recorded(
        self, cassette: Path
    ) -> None:
        """The same request twice gets the first recorded reply, then the second."""
        turns = [ScriptedTurn(text="first"), ScriptedTurn(text="second")]
        recorder = record(cassette, turns)
        prompt = weather_prompt()
        assert [run(recorder, prompt).response.text for _ in range(2)] == ["first", "second"]
        fingerprints = {exchange["fingerprint"] for exchange in exchanges(cassette)}
        assert len(fingerprints) == 1
        adapter = replaying(cassette)
        assert [run(adapter, prompt).response.text for _ in range(2)] == ["first", "second"]
        with pytest.raises(ReplayMissError, match=r"recorded this request 2 times, all") as caught:
            run(adapter, prompt)
        assert caught.value.replayed == 2
        assert caught.value.closest is None

    def test_a_replay_never_asks_the_inner_provider(self, cassette: Path) -> None:
        """The model behind a replay answers nothing: it would fail the run."""
        run(record(cassette), weather_prompt())
        replayed = run(replaying(cassette), weather_prompt())
        assert replayed.response.text == ANSWER

    def test_a_missing_cassette_is_refused_when_the_provider_is_built(self, cassette: Path) -> None:
        """Replaying needs the file; the error says how to make it."""
        with pytest.raises(CassetteError, match=r"no such file; record it first") as caught:
            replaying(cassette)
        assert (caught.value.cassette, caught.value.entry) == (str(cassette), None)

    def test_a_cassette_of_another_provider_is_refused(self, cassette: Path) -> None:
        """The provider's name is part of the cassette."""
        run(record(cassette), weather_prompt())
        with pytest.raises(CassetteError, match=r"recorded with the 'offline' provider, not 'x'"):
            Recorded(OfflineModel(responder=must_not_answer, name="x"), cassette)


class TestMiss:
    def test_a_changed_prompt_misses_with_a_diff_of_the_request(self, cassette: Path) -> None:
        """The error names the round, the fingerprint, the file, and shows what changed."""
        run(record(cassette), weather_prompt())
        adapter = replaying(cassette)
        with pytest.raises(ReplayMissError) as caught:
            run(adapter, weather_prompt("What is the weather in Porto?"))
        error = caught.value
        assert (error.round, error.cassette, error.closest, error.closest_round) == (
            1,
            str(cassette),
            0,
            1,
        )
        assert error.phase == "request"
        assert error.fingerprint.startswith("sha256:")
        assert error.fingerprint != exchanges(cassette)[0]["fingerprint"]
        assert error.difference == "$.history[0].text"
        assert error.diff.splitlines()[:2] == [
            "--- recorded exchange 0 (round 1)",
            "+++ the request built now",
        ]
        assert "-        What is the weather in Lisbon?" in error.diff.splitlines()
        assert "+        What is the weather in Porto?" in error.diff.splitlines()
        assert str(error).startswith(
            f"[request] prompt 'weather': cassette {cassette} holds no exchange for the "
            f"request of round 1 ({error.fingerprint}); closest is exchange 0 (round 1), "
            'which first differs at $.history[0].text. Record it again with mode="rerecord"'
        )

    def test_a_changed_tool_misses_at_its_description(self, cassette: Path) -> None:
        """A tool's description is part of the request."""
        run(record(cassette), weather_prompt())
        with pytest.raises(ReplayMissError) as caught:
            run(replaying(cassette), weather_prompt(description="The weather, today."))
        assert caught.value.difference == "$.tools[0].description"
        assert '+      "description": "The weather, today."' in caught.value.diff.splitlines()

    def test_a_miss_in_a_later_round_is_compared_with_that_round(self, cassette: Path) -> None:
        """A changed tool result misses in round 2, against round 2's recorded request."""
        run(record(cassette), weather_prompt())
        with pytest.raises(ReplayMissError) as caught:
            run(replaying(cassette), weather_prompt(handler=cloudy))
        assert (caught.value.round, caught.value.closest, caught.value.closest_round) == (2, 1, 2)
        assert caught.value.difference == "$.history[2].content"

    def test_the_failure_is_published_with_phase_request(self, cassette: Path) -> None:
        """A miss ends the evaluation like any request failure."""
        run(record(cassette), weather_prompt())
        bus = InProcessEventBus()
        failures: list[PromptFailed] = []
        bus.subscribe(PromptFailed, failures.append)
        with pytest.raises(ReplayMissError):
            replaying(cassette).evaluate(weather_prompt("Rain in Porto?"), bus=bus)
        assert [(failure.phase, failure.error_type) for failure in failures] == [
            ("request", "ReplayMissError")
        ]
        assert failures[0].message.startswith(f"cassette {cassette} holds no exchange")

    def test_an_empty_cassette_says_so(self, cassette: Path) -> None:
        """Nothing recorded: nothing to compare with."""
        empty = {"format": "weakincentives.cassette", "version": 1, "exchanges": []}
        cassette.write_text(json.dumps(empty), encoding="utf-8")
        with pytest.raises(ReplayMissError, match=r"; the cassette holds no exchanges\. Rec"):
            run(replaying(cassette), weather_prompt())


class TestRecord:
    def test_record_replaces_an_earlier_cassette(self, cassette: Path) -> None:
        """A recording holds its own run only."""
        run(record(cassette, [ScriptedTurn(text="old")]), weather_prompt("Old question?"))
        run(record(cassette), weather_prompt())
        assert [exchange["round"] for exchange in exchanges(cassette)] == [1, 2]
        assert run(replaying(cassette), weather_prompt()).response.text == ANSWER

    def test_each_exchange_is_on_disk_when_the_next_request_goes_out(self, cassette: Path) -> None:
        """A recording that stops half way leaves the exchanges it finished."""
        seen: list[int] = []

        def model(request: TurnRequest) -> ScriptedTurn:
            seen.append(len(exchanges(cassette)) if cassette.exists() else 0)
            return script()[request.round - 1]

        adapter = Adapter(Recorded(OfflineModel(responder=model), cassette, mode="record"))
        run(adapter, weather_prompt())
        assert seen == [0, 1]
        assert len(exchanges(cassette)) == 2

    def test_a_failed_write_keeps_the_old_cassette_and_fails_the_run(
        self, cassette: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The new cassette is renamed over the old one; when that fails, the old one stays."""
        run(record(cassette), weather_prompt())
        before = cassette.read_bytes()

        def refuse(source: object, target: object) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "replace", refuse)
        with pytest.raises(
            CassetteError, match=r"cannot be written: \[Errno 28\] No space"
        ) as caught:
            run(record(cassette, [ScriptedTurn(text="new")]), weather_prompt("New?"))
        assert (caught.value.cassette, caught.value.entry) == (str(cassette), None)
        assert cassette.read_bytes() == before
        assert sorted(path.name for path in cassette.parent.iterdir()) == [cassette.name]

    def test_only_replies_are_recorded_not_failed_attempts(self, cassette: Path) -> None:
        """A retried request is one exchange: the reply that came."""
        flaky = FailsOnce()
        adapter = Adapter(Recorded(flaky, cassette, mode="record"), settings=settings())
        assert run(adapter, weather_prompt()).response.text == "Second try."
        assert flaky.attempts == [1, 2]
        (only,) = exchanges(cassette)
        assert only["reply"]["text"] == "Second try."
        unused = FailsOnce()
        replayed = run(replaying_with(unused, cassette), weather_prompt())
        assert (replayed.response.text, unused.attempts) == ("Second try.", [])


class TestRerecord:
    def test_only_changed_requests_go_to_the_provider(self, cassette: Path) -> None:
        """Unchanged requests replay; changed ones are sent; the cassette becomes this run."""
        recorder = record(cassette, [ScriptedTurn(text="sunny"), ScriptedTurn(text="windy")])
        run(recorder, weather_prompt())
        run(recorder, weather_prompt("Is it windy in Porto?"))
        asked: list[int] = []

        def model(request: TurnRequest) -> ScriptedTurn:
            asked.append(request.round)
            return ScriptedTurn(text="rainy")

        adapter = Adapter(
            Recorded(OfflineModel(responder=model), cassette, mode="rerecord"), settings=settings()
        )
        assert run(adapter, weather_prompt("Is it raining in Faro?")).response.text == "rainy"
        assert [exchange["reply"]["text"] for exchange in exchanges(cassette)] == ["rainy"]
        assert run(adapter, weather_prompt()).response.text == "sunny"
        assert asked == [1]
        assert [exchange["reply"]["text"] for exchange in exchanges(cassette)] == [
            "rainy",
            "sunny",
        ]
        replay = replaying(cassette)
        assert run(replay, weather_prompt()).response.text == "sunny"
        assert run(replay, weather_prompt("Is it raining in Faro?")).response.text == "rainy"

    def test_a_run_that_changed_nothing_leaves_the_file_alone(self, cassette: Path) -> None:
        """All requests replayed: the cassette is not written (here: still compact)."""
        run(record(cassette), weather_prompt())
        compact = json.dumps(json.loads(cassette.read_text(encoding="utf-8")))
        cassette.write_text(compact, encoding="utf-8")
        adapter = Adapter(
            Recorded(OfflineModel(responder=must_not_answer), cassette, mode="rerecord"),
            settings=settings(),
        )
        assert run(adapter, weather_prompt()).response.text == ANSWER
        assert cassette.read_text(encoding="utf-8") == compact

    def test_without_a_cassette_everything_is_recorded(self, cassette: Path) -> None:
        """Re-recording a cassette that does not exist yet records it."""
        adapter = Adapter(Recorded(OfflineModel(script()), cassette, mode="rerecord"))
        run(adapter, weather_prompt())
        assert [exchange["round"] for exchange in exchanges(cassette)] == [1, 2]


class TestConfiguration:
    def test_an_unknown_mode_is_refused(self, cassette: Path) -> None:
        """The three modes, by name."""
        with pytest.raises(
            ConfigValidationError,
            match=r"Recorded mode must be one of 'replay', 'record', 'rerecord', got 'live'",
        ) as caught:
            Recorded(OfflineModel(script()), cassette, mode="live")  # type: ignore[arg-type]
        assert caught.value.field_name == "mode"

    def test_something_that_is_not_a_provider_is_refused(self, cassette: Path) -> None:
        """Recorded wraps a provider, not an adapter."""
        adapter = Adapter(OfflineModel(script()))
        with pytest.raises(
            ConfigValidationError,
            match=r"got a Adapter, which has no build_request, send, read_turn",
        ):
            Recorded(adapter, cassette, mode="record")  # type: ignore[arg-type]

    def test_the_inner_providers_face_shows_through(self, cassette: Path) -> None:
        """Name, model, retry limit and codecs are the inner provider's."""
        inner = FailsOnce()
        provider = Recorded(inner, cassette, mode="record")
        assert (provider.name, provider.model, provider.retry_limit) == ("flaky", "flaky-1", 1)
        assert provider.hosted_tool_codecs is inner.hosted_tool_codecs
        provider.close()
        assert inner.closed

    @pytest.mark.parametrize(
        ("request_value", "complaint"),
        [
            ({"tags": {"a"}}, r"the request holds a set at \$\.tags, which JSON cannot hold"),
            ({"t": [float("nan")]}, r"the request holds nan at \$\.t\[0\], which JSON"),
            ({"t": {1: "x"}}, r"the request holds the key 1 at \$\.t, which JSON"),
            (print, r"a request of type builtin_function_or_method cannot be recorded: "),
        ],
    )
    def test_a_request_json_cannot_hold_is_refused(
        self, cassette: Path, request_value: object, complaint: str
    ) -> None:
        """A provider whose request has no JSON form cannot be recorded."""
        adapter = Adapter(Recorded(OddRequests(request_value), cassette, mode="record"))
        with pytest.raises(ConfigValidationError, match=complaint):
            run(adapter, weather_prompt())

    def test_a_reply_that_would_not_load_back_is_refused(self, cassette: Path) -> None:
        """A reply of a class defined in a function has no importable name."""
        adapter = Adapter(Recorded(LocalReplies(), cassette, mode="record"))
        with pytest.raises(ConfigValidationError, match=r"a reply of type .*Local cannot be rec"):
            run(adapter, weather_prompt())

    def test_a_typed_request_is_recorded_with_its_type(self, cassette: Path) -> None:
        """A request that is a dataclass (not a JSON body) records as typed JSON."""
        adapter = Adapter(Recorded(TypedRequests(), cassette, mode="record"))
        run(adapter, weather_prompt())
        (only,) = exchanges(cassette)
        assert only["request"] == {"$type": "tests.adapters.test_recorded:Ask", "round": 1}
        provider = Recorded(TypedRequests(), cassette)
        assert run(Adapter(provider), weather_prompt()).response.text == "typed"
        assert provider.remaining_exchanges == 0


def replaying_with(provider: Any, path: Path) -> Adapter[Any]:
    """An adapter replaying ``path`` for ``provider``."""
    return Adapter(Recorded(provider, path), settings=settings())


class _Provider:
    """The fixed face of the small providers below."""

    name = "flaky"
    model: str | None = "flaky-1"
    retry_limit = 1
    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = {}
    closed = False

    def read_turn(self, reply: Any, request: Any, turn: TurnRequest) -> ModelTurn:
        return reply if isinstance(reply, ModelTurn) else ModelTurn(text=str(reply["text"]))

    def close(self) -> None:
        self.closed = True


class FailsOnce(_Provider):
    """Its first attempt fails with a retryable error; the second answers."""

    def __init__(self) -> None:
        self.attempts: list[int] = []

    def build_request(self, turn: TurnRequest) -> dict[str, Any]:
        return {"round": turn.round}

    async def send(self, request: Any, attempt: Attempt, on_text: TextSink) -> dict[str, Any]:
        self.attempts.append(attempt.number)
        if attempt.number == 1:
            raise ProviderError("overloaded", prompt_name=attempt.prompt_name, retryable=True)
        return {"text": "Second try."}


class OddRequests(_Provider):
    """Its request is whatever it was given."""

    def __init__(self, request: object) -> None:
        self.request = request

    def build_request(self, turn: TurnRequest) -> object:
        return self.request

    async def send(self, request: Any, attempt: Attempt, on_text: TextSink) -> dict[str, Any]:
        return {"text": "never"}


class LocalReplies(_Provider):
    """Its replies are of a class defined inside a function."""

    def build_request(self, turn: TurnRequest) -> dict[str, Any]:
        return {"round": turn.round}

    async def send(self, request: Any, attempt: Attempt, on_text: TextSink) -> object:
        @dataclass(frozen=True)
        class Local:
            text: str

        return Local(text="local")


@dataclass(frozen=True, slots=True, kw_only=True)
class Ask:
    """A typed request."""

    round: int


class TypedRequests(_Provider):
    """Its requests are dataclasses; its replies are model turns."""

    def build_request(self, turn: TurnRequest) -> Ask:
        return Ask(round=turn.round)

    async def send(self, request: Ask, attempt: Attempt, on_text: TextSink) -> ModelTurn:
        return ModelTurn(text="typed")
