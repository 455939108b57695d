"""Real processes: SIGINT interrupts a sync ``evaluate`` (H1); nesting lets a script exit (H2).

Each case runs a child Python process whose evaluation blocks for good (a request that
never answers, a sync tool waiting on an event, an async tool awaiting forever). The
child prints ``BLOCKED`` once it is there; the test then sends SIGINT and expects
``INTERRUPTED`` (printed by the child's ``except KeyboardInterrupt``) within a second,
and a clean exit.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time

import pytest

from tests.child_signals import FRESH_SIGINT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CHILD = r"""
import asyncio, sys, threading
from dataclasses import dataclass

from weakincentives.adapters import OfflineAdapter, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult

where = sys.argv[1]
release = threading.Event()


@dataclass(frozen=True)
class Step:
    name: str


def sync_block(params: Step, *, context: ToolContext) -> ToolResult[None]:
    print("BLOCKED", flush=True)
    release.wait()
    return ToolResult(message="released")


async def async_block(params: Step, *, context: ToolContext) -> ToolResult[None]:
    print("BLOCKED", flush=True)
    await asyncio.Event().wait()
    return ToolResult(message="never")


async def never_answers(request):
    print("BLOCKED", flush=True)
    await asyncio.Event().wait()


handler = {"sync tool": sync_block, "async tool": async_block}.get(where)
tools = [Tool(name="block", description="Block.", handler=handler)] if handler else []
prompt = Prompt(ns="t", key="t", sections=[MarkdownSection(title="T", template="Go.", tools=tools)])
if where == "request":
    adapter = OfflineAdapter(responder=never_answers)
else:
    call = ScriptedCall(name="block", arguments={"name": "x"})
    adapter = OfflineAdapter([ScriptedTurn(calls=(call,)), ScriptedTurn(text="never")])
try:
    adapter.evaluate(prompt)
except KeyboardInterrupt:
    print("INTERRUPTED", flush=True)
    release.set()  # the blocked worker thread may end; the interpreter exits cleanly
"""

START = 60.0
"""Bound on the child's start-up (imports on a loaded machine); never reached normally."""


class _Lines:
    """Lines of a child's stdout, each awaited with a bound (select, never a sleep)."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._fd = process.stdout.fileno()
        self._buffer = b""

    def next(self, within: float) -> str:
        deadline = time.monotonic() + within
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._fd], [], [], max(left, 0))
            if not ready:
                return "<nothing in time>"
            chunk = os.read(self._fd, 4096)
            if not chunk:
                return "<end of output>"
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()


@pytest.mark.parametrize("where", ["request", "sync tool", "async tool"])
def test_sigint_interrupts_a_sync_evaluate_within_a_second(where: str) -> None:
    """The main thread's KeyboardInterrupt reaches the caller of evaluate at once."""
    process = subprocess.Popen(
        [sys.executable, "-c", FRESH_SIGINT + CHILD, where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        lines = _Lines(process)
        assert lines.next(START) == "BLOCKED"
        process.send_signal(signal.SIGINT)
        assert lines.next(1.0) == "INTERRUPTED"
        assert process.wait(timeout=START) == 0
        assert process.stderr is not None
        assert process.stderr.read() == b""  # no stray traceback or unretrieved task
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        assert process.stderr is not None
        process.stderr.close()
        assert process.stdout is not None
        process.stdout.close()


NESTED = r"""
from dataclasses import dataclass

from weakincentives.adapters import Adapter, LoopSettings, OfflineModel, ScriptedCall, ScriptedTurn
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult


@dataclass(frozen=True)
class Step:
    name: str


def leaf(params: Step, *, context: ToolContext) -> ToolResult[None]:
    return ToolResult(message="leaf")


leaf_tool = Tool(name="leaf", description="Leaf.", handler=leaf)
inner_section = MarkdownSection(title="I", template="Go.", tools=[leaf_tool])
inner = Prompt(ns="t", key="inner", sections=[inner_section])


def nest(params: Step, *, context: ToolContext) -> ToolResult[None]:
    nested = context.adapter.evaluate(inner, bus=context.event_bus, session=context.session)
    return ToolResult(message=nested.text)


tool = Tool(name="nest", description="Nest.", handler=nest)
section = MarkdownSection(title="O", template="Go.", tools=[tool])
prompt = Prompt(ns="t", key="outer", sections=[section])
script = [
    ScriptedTurn(calls=(ScriptedCall(name="nest", arguments={"name": "x"}),)),
    ScriptedTurn(calls=(ScriptedCall(name="leaf", arguments={"name": "y"}),)),  # nested
    ScriptedTurn(text="inner"),
    ScriptedTurn(text="outer"),
]
adapter = Adapter(OfflineModel(script), settings=LoopSettings(max_concurrency=1))
response = adapter.evaluate(prompt)
print(response.tool_results[0].message, response.text, flush=True)
"""


def test_a_script_nesting_evaluations_at_max_concurrency_one_finishes_and_exits() -> None:
    """H2: the nested evaluation gets a thread, and nothing is left to block interpreter exit."""
    completed = subprocess.run(
        [sys.executable, "-c", NESTED], check=False, capture_output=True, text=True, timeout=START
    )
    assert (completed.returncode, completed.stdout, completed.stderr) == (0, "inner outer\n", "")
