"""Across processes: a recording replays in a fresh process; a killed recorder leaves a cassette.

The replay runs in a new Python process with the provider's client pointed at a port
nobody listens on, so nothing of the recording process (its server, its objects) can
answer for the cassette. Recorders are killed with SIGKILL at named points; the
cassette they leave is always a whole one.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.conftest import OpenAILoopback
from tests.adapters.replay_kit import comparable, event_documents, run, settings, weather_prompt
from tests.adapters.wires import WIRES, Call, Turn, WireName, wire
from weakincentives.adapters import Adapter, OfflineModel, Recorded

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "Lisbon is sunny today, at 24 degrees."


def child(*arguments: str) -> subprocess.CompletedProcess[str]:
    """Run ``tests/adapters/replay_child.py`` with ``arguments`` from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "tests.adapters.replay_child", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", WIRES)
def test_a_fresh_process_replays_the_recording_offline(
    openai_loopback: OpenAILoopback, name: WireName, tmp_path: Path
) -> None:
    """Recorded here through the SDK (streamed); replayed there with no server: all equal."""
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    wired = wire(name)
    openai_loopback.reply(
        wired.reply(Turn(calls=(Call("call_1", "get_weather", {"city": "Lisbon"}),)), stream=True),
        wired.reply(Turn(text=ANSWER), stream=True),
    )
    inner = wired.adapter(openai_loopback, "sync", stream=True).provider
    cassette = tmp_path / "run.json"
    recorded = run(
        Adapter(Recorded(inner, cassette, mode="record"), settings=settings()), weather_prompt()
    )

    with socket.socket() as held:  # bound, never listening: connections are refused
        held.bind(("127.0.0.1", 0))
        replayed = child("replay", name, str(cassette), str(held.getsockname()[1]), "stream")
    assert replayed.returncode == 0, replayed.stderr
    there = json.loads(replayed.stdout)
    assert there["response"] == comparable(recorded.response)
    assert there["events"] == event_documents(recorded.events)
    assert len(openai_loopback.requests) == 2


@pytest.mark.parametrize(("where", "whole"), [("in-round-3", 2), ("before-rename", 1)])
def test_a_recorder_killed_mid_run_leaves_a_whole_cassette(
    where: str, whole: int, tmp_path: Path
) -> None:
    """SIGKILL while the model is asked, or between writing and renaming: it still loads."""
    cassette = tmp_path / "run.json"
    killed = child("die", where, str(cassette))
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    provider = Recorded(OfflineModel(call_every_tool=True), cassette)
    assert provider.remaining_exchanges == whole
    rounds = [exchange["round"] for exchange in json.loads(cassette.read_text())["exchanges"]]
    assert rounds == list(range(1, whole + 1))
