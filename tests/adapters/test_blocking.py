"""A sync client's call on a worker thread: its text in order, its socket cut when cancelled."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator

import pytest

from weakincentives.adapters._blocking import ReplyCutter, run_blocking
from weakincentives.adapters._provider import TextSink


class _Stream:
    """The part of an HTTP/1.1 network stream the cutter uses: its socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock

    def get_extra_info(self, info: str) -> object:
        return self._sock if info == "socket" else None


class _Reply:
    """A reply as httpx hands it out: its ``extensions`` name the network stream."""

    def __init__(self, sock: socket.socket | None) -> None:
        self.extensions = {"network_stream": _Stream(sock)} if sock is not None else {}


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    client, server = socket.socketpair()
    yield client, server
    client.close()
    server.close()


def test_cutting_shuts_the_socket_a_thread_reads(pair: tuple[socket.socket, socket.socket]) -> None:
    """A read blocked on the reply's socket returns at once (EOF) when the reply is cut."""
    client, _ = pair
    cutter = ReplyCutter()
    cutter.reading(_Reply(client))
    read: list[bytes] = []
    reader = threading.Thread(target=lambda: read.append(client.recv(1)))
    reader.start()
    cutter.cut_now()
    reader.join(timeout=10)
    assert read == [b""]
    assert cutter.cut is True


def test_a_reply_that_arrives_after_the_cut_is_cut_at_once(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    """Cancelled before the headers came: the reply is cut as soon as it is read."""
    client, _ = pair
    cutter = ReplyCutter()
    cutter.cut_now()
    cutter.reading(_Reply(client))
    assert client.recv(1) == b""


def test_a_finished_reply_is_left_alone(pair: tuple[socket.socket, socket.socket]) -> None:
    """Once the thread is done, the connection may be pooled again: cutting leaves it open."""
    client, server = pair
    cutter = ReplyCutter()
    cutter.reading(_Reply(client))
    cutter.finished()
    cutter.cut_now()
    server.sendall(b"x")
    assert client.recv(1) == b"x"


def test_a_reply_without_a_socket_is_left_to_its_timeout() -> None:
    """HTTP/2 streams expose no socket: cutting does nothing rather than fail."""
    cutter = ReplyCutter()
    cutter.reading(_Reply(None))
    cutter.cut_now()
    assert cutter.cut is True


def test_text_after_a_cut_never_reaches_the_caller() -> None:
    """A piece queued before the cut and one sent after it are both dropped."""
    delivered: list[str] = []
    started, go, queued, resume = (threading.Event() for _ in range(4))

    def call(forward: TextSink) -> str:
        started.set()
        go.wait(timeout=10)
        forward("queued before the cut")
        queued.set()
        resume.wait(timeout=10)
        forward("sent after the cut")
        return "done"

    async def run() -> str:
        cutter = ReplyCutter()
        task = asyncio.create_task(run_blocking(call, delivered.append, cutter))
        await asyncio.to_thread(started.wait, 10)
        # Block the loop while the thread queues a piece, so it is still queued at the cut.
        go.set()
        queued.wait(timeout=10)
        cutter.cut_now()
        resume.set()
        return await task

    assert asyncio.run(run()) == "done"
    assert delivered == []
