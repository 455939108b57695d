"""``demo --record PATH`` and ``demo --replay PATH``: the same transcript, from the cassette."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest

from tests.adapters.conftest import OpenAILoopback, ok, response_body
from weakincentives._cli import main
from weakincentives.serde import JSONValue

REPORT = {
    "severity": "sev2",
    "suspected_cause": "The 14:02 deploy of checkout-api.",
    "actions": ["Roll back checkout-api"],
    "sources": [],
}


def demo(*argv: str) -> str:
    """The demo's transcript; it must exit with 0."""
    out = io.StringIO()
    assert main(["demo", *argv], out=out) == 0
    return out.getvalue()


def test_a_replayed_demo_prints_the_recorded_transcript(tmp_path: Path) -> None:
    """Offline: record, then replay; the transcripts are identical, prompts included."""
    cassette = tmp_path / "demo.json"
    recorded = demo("--record", str(cassette))
    assert "Structured answer (TriageReport)" in recorded
    rounds = [exchange["round"] for exchange in json.loads(cassette.read_text())["exchanges"]]
    assert rounds == [1, 2, 3, 4, 5, 6, 7]
    assert demo("--replay", str(cassette)) == recorded


def test_the_replayed_answers_come_from_the_cassette(tmp_path: Path) -> None:
    """An answer edited in the cassette is what the replay prints."""
    cassette = tmp_path / "demo.json"
    demo("--no-prompt", "--record", str(cassette))
    document = json.loads(cassette.read_text())
    last = document["exchanges"][-1]["reply"]
    last["text"] = last["text"].replace('"sev2"', '"sev1"')
    cassette.write_text(json.dumps(document), encoding="utf-8")
    replayed = demo("--no-prompt", "--replay", str(cassette))
    assert '"severity": "sev1"' in replayed
    assert '"severity": "sev2"' not in replayed


def test_a_real_provider_replays_with_no_key_and_no_server(
    openai_loopback: OpenAILoopback, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Recorded against the Responses API (loopback); replayed without a key or a server."""
    pytest.importorskip("openai")
    cassette = tmp_path / "demo.json"
    answer: JSONValue = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": json.dumps(REPORT), "annotations": []}],
    }
    openai_loopback.reply(ok(response_body(answer)))
    monkeypatch.setenv("OPENAI_API_KEY", "recording-key")
    flags = ("--adapter", "openai", "--no-prompt")
    recorded = demo(*flags, "--base-url", openai_loopback.base_url, "--record", str(cassette))
    assert '"severity": "sev2"' in recorded
    monkeypatch.delenv("OPENAI_API_KEY")
    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{held.getsockname()[1]}/v1"
        assert demo(*flags, "--base-url", nowhere, "--replay", str(cassette)) == recorded
    assert len(openai_loopback.requests) == 1


def test_record_and_replay_together_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    """One cassette mode per run."""
    with pytest.raises(SystemExit) as exited:
        main(["demo", "--record", "a.json", "--replay", "b.json"], out=io.StringIO())
    assert exited.value.code == 2
    assert "argument --replay: not allowed with argument --record" in capsys.readouterr().err


def test_replaying_a_missing_cassette_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit code 1 and the file named."""
    missing = tmp_path / "none.json"
    assert main(["demo", "--replay", str(missing)], out=io.StringIO()) == 1
    assert capsys.readouterr().err == (
        f'wink: error: cassette {missing}: no such file; record it first with mode="record"\n'
    )
