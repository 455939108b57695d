"""Workers in processes of their own: killed mid-evaluation, and two sharing one queue.

Each tool call that has a side effect appends a line to a ledger file (evaluation id,
item, worker pid), so the tests count exactly which calls ran, where, and how often.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import TimeoutType
from temporalio.client import Client
from temporalio.worker import Replayer

from tests.temporal import agents
from tests.temporal.server import connect
from weakincentives.adapters import Adapter
from weakincentives.temporal import EvaluationClient

ROOT = Path(__file__).parent.parent.parent
LINE_TIMEOUT = 60.0


class WorkerProcess:
    """``worker_process.py`` in a subprocess, with its output read line by line."""

    def __init__(
        self, address: str, task_queue: str, *, hold: bool = False, heartbeats: bool = False
    ) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.temporal.worker_process", address, task_queue]
            + (["--hold"] if hold else [])
            + (["--heartbeats"] if heartbeats else []),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))

    def expect(self, prefix: str) -> str:
        """The next line, which must start with ``prefix`` (waits for it, bounded)."""
        try:
            line = self._lines.get(timeout=LINE_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"worker {self.process.pid} printed no {prefix!r}") from None
        assert line.startswith(prefix), line
        return line

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(timeout=30)
        self._reader.join(timeout=30)
        assert self.process.stdout is not None
        self.process.stdout.close()


@pytest.fixture
def workers(temporal_address: str) -> Iterator[list[WorkerProcess]]:
    """Worker processes a test starts; every one left running is stopped after it."""
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


def _ledger(path: Path) -> list[tuple[str, int, int]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [(line.split()[0], int(line.split()[1]), int(line.split()[2])) for line in lines]


def test_a_killed_worker_s_evaluation_finishes_on_another_without_repeating_calls(
    temporal_address: str, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    """SIGKILL while the 4th request hangs; a new worker finishes; no call ran twice."""
    task_queue = f"q-{uuid.uuid4().hex}"
    ledger = tmp_path / "ledger"
    prompt = agents.work_prompt(agents.Job(calls=5, per_round=1))
    first = WorkerProcess(temporal_address, task_queue, hold=True)
    workers.append(first)
    first.expect("READY")

    async def run() -> tuple[str, str, Client]:
        client = await connect(temporal_address)
        evaluations = EvaluationClient(client, task_queue=task_queue)
        handle = await evaluations.start(prompt, extras={"ledger": str(ledger)})
        holding = await asyncio.to_thread(first.expect, "HOLDING")
        assert holding == f"HOLDING {handle.evaluation_id}"
        first.stop(signal.SIGKILL)
        assert first.process.returncode == -signal.SIGKILL
        second = WorkerProcess(temporal_address, task_queue)
        workers.append(second)
        await asyncio.to_thread(second.expect, "READY")
        response = await handle.result()
        return handle.evaluation_id, response.text, client

    evaluation_id, text, _ = asyncio.run(run())
    local = Adapter(agents.offline()).evaluate(prompt, extras={"ledger": str(tmp_path / "x")})
    assert text == local.text
    killed, survivor = workers[0].process.pid, workers[1].process.pid
    # records 1 and 3 ran before the kill (in the first worker), 5 after it: each once
    assert _ledger(ledger) == [
        (evaluation_id, 1, killed),
        (evaluation_id, 3, killed),
        (evaluation_id, 5, survivor),
    ]

    async def replay() -> None:
        history = (
            await (await connect(temporal_address))
            .get_workflow_handle(evaluation_id)
            .fetch_history()
        )
        worker = agents.evaluation_worker()
        replayer = Replayer(workflows=worker.workflows, workflow_runner=worker.workflow_runner)
        await replayer.replay_workflow(history)

    asyncio.run(replay())


def test_a_killed_worker_s_attempt_is_lost_by_its_missing_heartbeat(
    temporal_address: str, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    """Attempts may take an hour; the killed one is retried a second after its last beat.

    The history says why the retried attempt's predecessor ended: its heartbeat timed
    out (its start-to-close timeout, an hour, would have kept this test waiting).
    """
    task_queue = f"q-{uuid.uuid4().hex}"
    prompt = agents.work_prompt(agents.Job(calls=5, per_round=1))
    first = WorkerProcess(temporal_address, task_queue, hold=True, heartbeats=True)
    workers.append(first)
    first.expect("READY")

    async def run() -> tuple[str, list[tuple[int, TimeoutType.ValueType]]]:
        client = await connect(temporal_address)
        evaluations = EvaluationClient(client, task_queue=task_queue)
        handle = await evaluations.start(prompt, extras={"ledger": str(tmp_path / "ledger")})
        await asyncio.to_thread(first.expect, "HOLDING")
        await asyncio.sleep(2.5)  # over two heartbeat timeouts: the beats keep it alive
        first.stop(signal.SIGKILL)
        second = WorkerProcess(temporal_address, task_queue, heartbeats=True)
        workers.append(second)
        await asyncio.to_thread(second.expect, "READY")
        async with asyncio.timeout(LINE_TIMEOUT):
            response = await handle.result()
        history = await client.get_workflow_handle(handle.evaluation_id).fetch_history()
        retried = [
            (started.attempt, started.last_failure.timeout_failure_info.timeout_type)
            for event in history.events
            if event.HasField("activity_task_started_event_attributes")
            and (started := event.activity_task_started_event_attributes).attempt > 1
        ]
        return response.text, retried

    text, retried = asyncio.run(run())
    local = Adapter(agents.offline()).evaluate(prompt, extras={"ledger": str(tmp_path / "x")})
    assert text == local.text
    # one activity ran twice: the held request, lost when its worker stopped beating
    assert retried == [(2, TimeoutType.TIMEOUT_TYPE_HEARTBEAT)]


def test_two_worker_processes_share_fifty_evaluations(
    temporal_address: str, workers: list[WorkerProcess], tmp_path: Path
) -> None:
    """Both workers run some of the tool calls; each evaluation's call ran exactly once."""
    task_queue = f"q-{uuid.uuid4().hex}"
    ledger = tmp_path / "ledger"
    for _ in range(2):
        workers.append(WorkerProcess(temporal_address, task_queue))
    for worker in workers:
        worker.expect("READY")
    prompt = agents.work_prompt(agents.Job(calls=1, per_round=1))

    async def run() -> list[str]:
        client = await connect(temporal_address)
        evaluations = EvaluationClient(client, task_queue=task_queue)
        handles = [
            await evaluations.start(prompt, extras={"ledger": str(ledger)}) for _ in range(50)
        ]
        texts = await asyncio.gather(*(handle.result() for handle in handles))
        assert {response.text for response in texts} == {'Done: recorded 1\n\n{"value":1}'}
        return [handle.evaluation_id for handle in handles]

    evaluation_ids = asyncio.run(run())
    recorded = _ledger(ledger)
    assert Counter(evaluation for evaluation, _, _ in recorded) == Counter(evaluation_ids)
    by_worker = Counter(pid for _, _, pid in recorded)
    assert set(by_worker) == {worker.process.pid for worker in workers}
    assert sum(by_worker.values()) == 50
    assert os.getpid() not in by_worker
