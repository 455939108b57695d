"""The shared loop behind the sync facades, at interpreter exit (real child processes)."""

from __future__ import annotations

import subprocess
import sys

from tests.child_signals import FRESH_SIGINT

CHILD = r"""
import asyncio, signal, sys, threading

from weakincentives._portal import run_sync

started = threading.Event()


async def slow_to_clean_up():
    try:
        started.set()
        await asyncio.Event().wait()
    finally:
        await asyncio.sleep(float(sys.argv[1]))  # cleanup that takes a few loop turns
        print("CLEANED", flush=True)


main = threading.main_thread().ident
threading.Thread(
    target=lambda: (started.wait(), signal.pthread_kill(main, signal.SIGINT)), daemon=True
).start()
try:
    run_sync(slow_to_clean_up())
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
"""


def _run(cleanup_seconds: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", FRESH_SIGINT + CHILD, str(cleanup_seconds)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_interrupted_callers_task_finishes_its_cleanup_before_exit() -> None:
    """The cancelled task's cleanup runs to its end; nothing is destroyed pending."""
    done = _run(0.2)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["INTERRUPTED", "CLEANED"]
    assert done.stderr == ""


def test_cleanup_past_the_grace_does_not_hold_the_exit() -> None:
    """A cleanup longer than EXIT_GRACE is abandoned: the process exits (within the 60 s bound)."""
    done = _run(600)
    assert done.returncode == 0
    assert done.stdout.splitlines() == ["INTERRUPTED"]
