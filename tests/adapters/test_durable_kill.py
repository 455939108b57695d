"""Kill tests: a real process SIGKILLed mid-evaluation, and a second one that finishes it.

At each kill point (during a request, between two tool calls, inside a slow tool) and on
both backends, the evaluation of ``durable_scenario.py`` is started in a subprocess,
killed when it prints that it got there, and resumed in a new subprocess. Then:

- the session log holds exactly the events of an uninterrupted run (same clock, same
  ids), byte for byte and in the same order: none lost, none written twice;
- every tool call that had completed ran once; only the call killed while it ran ran
  again (at-least-once, as the spec says);
- the response is the uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adapters.durable_scenario import EVALUATION, MARKER, SESSION
from tests.store.backends import Backend, fresh_schema
from tests.store.pg_server import PostgresServer
from weakincentives.adapters import PromptResponse
from weakincentives.serde import JSONValue

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 120.0
"""Seconds a worker may take; reaching it fails the test (it never waits otherwise)."""


def _worker(*arguments: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.adapters.durable_worker", *arguments],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finished(worker: subprocess.Popen[str]) -> PromptResponse[object]:
    out, error = worker.communicate(timeout=LIMIT)
    assert worker.returncode == 0, error
    lines = out.splitlines()
    assert lines[0] == "DONE", out + error
    return PromptResponse.from_json(lines[1])


def _killed_at_its_point(worker: subprocess.Popen[str]) -> None:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if line != f"{MARKER}\n":
        worker.kill()
        _, error = worker.communicate(timeout=LIMIT)
        raise AssertionError(f"expected the kill point, got {line!r}:\n{error}")
    os.kill(worker.pid, signal.SIGKILL)
    worker.communicate(timeout=LIMIT)
    assert worker.returncode == -signal.SIGKILL


def _log(backend: Backend) -> list[tuple[str, JSONValue]]:
    with backend.sync() as store:
        return [(event.type_name, event.document) for event in store.read(str(SESSION))]


def _another(backend: Backend, tmp_path: Path, server: PostgresServer | None) -> Backend:
    """A second, empty database on the same backend, for the uninterrupted run."""
    if backend.name == "sqlite":
        return Backend("sqlite", str(tmp_path / "uninterrupted.db"))
    assert server is not None
    return Backend("postgres", fresh_schema(server))


def _run(backend: Backend, side_effects: Path, kill_point: str) -> None:
    worker = _worker("start", backend.name, backend.location, str(side_effects), kill_point)
    if kill_point == "none":
        _finished(worker)
    else:
        _killed_at_its_point(worker)


@pytest.mark.parametrize(
    ("kill_point", "ran_again"),
    [("request", []), ("between", []), ("slow", ["slow-start s"])],
)
def test_a_killed_evaluation_resumed_elsewhere_equals_an_uninterrupted_one(
    backend: Backend,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    kill_point: str,
    ran_again: list[str],
) -> None:
    """The resumed run's log, side effects and response are the uninterrupted run's."""
    server = request.getfixturevalue("postgres_server") if backend.name == "postgres" else None
    reference = _another(backend, tmp_path, server)
    reference_effects = tmp_path / "reference.txt"
    _run(reference, reference_effects, "none")
    with reference.sync() as store:
        expected = PromptResponse.from_json(_response_text(store.load_checkpoint(EVALUATION)))

    effects = tmp_path / "effects.txt"
    _run(backend, effects, kill_point)
    with backend.sync() as store:
        checkpoint = store.load_checkpoint(EVALUATION)
        assert checkpoint is not None
        assert checkpoint.status == "running"
    resumed = _finished(_worker("resume", backend.name, backend.location, str(effects)))

    once = reference_effects.read_text().splitlines()
    assert once == ["note a", "note b", "slow-start s", "slow-done s", "note c"]
    assert effects.read_text().splitlines() == _with_reruns(once, ran_again)
    assert _log(backend) == _log(reference)
    assert [name for name, _ in _log(backend)].count("tests.adapters.durable_scenario:Noted") == 4
    assert resumed == expected
    assert resumed.text == "All noted."


def _with_reruns(once: list[str], ran_again: list[str]) -> list[str]:
    """The side effects of a run in which ``ran_again`` started twice (killed the first time)."""
    lines: list[str] = []
    for line in once:
        lines.append(line)
        if line in ran_again:
            lines.append(line)
    return lines


def _response_text(checkpoint: object) -> str:
    document = getattr(checkpoint, "document", None)
    assert isinstance(document, dict)
    return json.dumps(document["response"])
