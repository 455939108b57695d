"""The shared loop behind the sync facades, at interpreter exit (real child processes)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest

from tests.child_signals import FRESH_SIGINT
from weakincentives._portal import run_sync

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


class _Signal(BaseException):
    """A library's own BaseException (as pytest's ``Failed`` or trio's ``Cancelled`` are)."""


@pytest.mark.parametrize("signal", [GeneratorExit, _Signal])
def test_a_coroutine_ending_with_another_base_exception_reaches_the_caller(
    signal: type[BaseException],
) -> None:
    """Not only errors, KeyboardInterrupt and SystemExit: the caller gets it, it does not hang."""

    async def ends_with_signal() -> None:
        raise signal("stop")

    outcome: list[BaseException] = []

    def call() -> None:
        try:
            run_sync(ends_with_signal())
        except BaseException as exc:  # what reached the caller is the test
            outcome.append(exc)

    caller = threading.Thread(target=call, daemon=True)
    caller.start()
    caller.join(timeout=10)
    assert not caller.is_alive(), "run_sync never returned"
    assert [type(exc) for exc in outcome] == [signal]
    assert run_sync(asyncio.sleep(0, result="still serving")) == "still serving"
