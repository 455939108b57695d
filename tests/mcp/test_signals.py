"""SIGTERM and SIGINT stop ``wink mcp serve`` cleanly: upstream servers are closed first (D6).

A real process gets a real signal. Its upstream is an HTTP server that knows only
the 2025 handshake, so closing the connection is visible there: the client ends
its session with ``DELETE /mcp``. A process that died without closing never sends it.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from tests.mcp.conftest import Receive, Scope, Send, handshake_only
from tests.mcp.server_app import build_server

ROOT = Path(__file__).parent.parent.parent


class Recorder:
    """An ASGI app in front of the upstream that notes each request's method."""

    def __init__(self, app: Any) -> None:
        self._app = app
        self.methods: list[str] = []
        self.deleted = threading.Event()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            self.methods.append(scope["method"])
            if scope["method"] == "DELETE":
                self.deleted.set()
        await self._app(scope, receive, send)


@contextlib.contextmanager
def _upstream() -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(handshake_only(build_server(name="up").streamable_http_app()))
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    runner = uvicorn.Server(
        uvicorn.Config(recorder, log_level="critical", timeout_graceful_shutdown=1)
    )
    thread = threading.Thread(target=runner.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", recorder
    finally:
        runner.should_exit = True
        thread.join()
        listener.close()


@pytest.mark.parametrize("mode", ["stdio", "http"])
@pytest.mark.parametrize(
    ("number", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["TERM", "INT"]
)
def test_a_signal_closes_the_upstreams_before_the_process_exits(
    mode: str, number: signal.Signals, status: int
) -> None:
    """The exit status is 128 + the signal, and the upstream session was ended first."""
    with _upstream() as (url, recorder):
        extra = ["--http", "127.0.0.1:0"] if mode == "http" else []
        process = subprocess.Popen(
            [sys.executable, "-m", "weakincentives", "mcp", "serve", "--upstream", url, *extra],
            cwd=ROOT,
            stdin=subprocess.PIPE,  # held open: over stdio, the client is still there
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stderr is not None
        assert process.stdin is not None
        try:
            line = process.stderr.readline()
            assert line.startswith("serving 7 tools over MCP"), line
            assert "DELETE" not in recorder.methods
            process.send_signal(number)
            assert process.wait(timeout=60) == status
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            process.stdin.close()
            process.stderr.close()
        assert recorder.deleted.is_set()
        assert recorder.methods[0] == "POST"
