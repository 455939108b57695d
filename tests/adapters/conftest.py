"""A loopback server that answers like the OpenAI Responses API, for adapter tests.

The real ``openai`` SDK talks HTTP to a stdlib ``ThreadingHTTPServer`` on
127.0.0.1. A test queues canned replies (a JSON body, raw bytes, any status and
headers, or a reply that never comes) and reads back every request the server
received, with its JSON body parsed. Nothing here mocks the SDK.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import pytest

from weakincentives.adapters import Adapter, LoopSettings
from weakincentives.adapters.openai import OpenAIResponses
from weakincentives.serde import JSONValue

RESPONSES = Path(__file__).parent.parent / "fixtures" / "responses"

type Body = dict[str, JSONValue]


def load_response(name: str) -> Body:
    """A canned Responses API body from ``tests/fixtures/responses/<name>.json``."""
    loaded: Body = json.loads((RESPONSES / f"{name}.json").read_text(encoding="utf-8"))
    return loaded


def load_output(name: str) -> list[JSONValue]:
    """The ``output`` items of a canned body."""
    output = load_response(name)["output"]
    assert isinstance(output, list)
    return output


def response_body(*output: JSONValue, usage: JSONValue = None, **extra: JSONValue) -> Body:
    """A minimal completed Responses API body around ``output`` items, for one-off shapes.

    ``extra`` adds or replaces top-level fields (``status``, ``error``, ``id``...).
    """
    body: Body = {
        "id": "resp_test",
        "object": "response",
        "created_at": 1760000000,
        "status": "completed",
        "model": "gpt-test",
        "output": list(output),
        "usage": usage,
    }
    body.update(extra)
    return body


def api_error(message: str, *, kind: str, code: str | None = None) -> Body:
    """An error body in the shape the OpenAI API sends with 4xx/5xx statuses."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """One canned answer, served to the next request that arrives."""

    status: int = 200
    body: JSONValue = None
    """Sent as JSON (``application/json``) unless ``raw`` is given."""
    raw: bytes | None = None
    """Sent byte for byte instead of ``body``; set ``content-type`` in ``headers``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    hang: bool = False
    """Never answer: hold the connection until the fixture is torn down (for timeouts)."""
    cut_after: int | None = None
    """Send the headers (announcing the whole body) and this many body bytes, then drop
    the connection: the client sees the body end early."""
    stall_after: int | None = None
    """Send the headers and this many body bytes, then send nothing more and wait for the
    client to close the connection (``OpenAILoopback.client_left`` is set when it does)."""


def ok(body: Body) -> Reply:
    """A 200 reply with ``body`` as JSON."""
    return Reply(body=body)


HANG = Reply(hang=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedRequest:
    """What the server received."""

    method: str
    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: Any
    """The request body, parsed as JSON."""


class OpenAILoopback:
    """The running server's address, its reply queue and its request log."""

    def __init__(self, port: int, release: threading.Event) -> None:
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.replies: deque[Reply] = deque()
        self.requests: list[RecordedRequest] = []
        self.release = release
        """Set at teardown; hanging replies wait on it instead of sleeping."""
        self.client_left = threading.Event()
        """Set when a client closed a connection whose reply had stalled."""
        self.responder: Callable[[RecordedRequest], Reply] | None = None
        """When set, answers every request from what it asked (a server with behaviour,
        such as one enforcing a schema as a grammar) instead of the reply queue."""

    def reply(self, *replies: Reply) -> None:
        """Queue ``replies``, served in order."""
        self.replies.extend(replies)

    def adapter(
        self,
        *,
        max_retries: int = 0,
        timeout: float = 10.0,
        settings: LoopSettings | None = None,
        **kwargs: Any,
    ) -> Adapter[OpenAIResponses]:
        """An adapter over ``OpenAIResponses`` on the real SDK, pointed at this server."""
        provider = OpenAIResponses(
            model="gpt-test",
            base_url=self.base_url,
            api_key="test-key",
            max_retries=max_retries,
            timeout=timeout,
            **kwargs,
        )
        return Adapter(provider, settings=settings)

    @property
    def bodies(self) -> list[Any]:
        """The JSON body of every request, in order."""
        return [request.body for request in self.requests]


class _Server(ThreadingHTTPServer):
    loopback: OpenAILoopback
    connections: list[socket.socket]


class _ResponsesHandler(BaseHTTPRequestHandler):
    """Records each request, then plays the next queued reply."""

    def setup(self) -> None:
        super().setup()
        cast(_Server, self.server).connections.append(self.connection)

    def do_POST(self) -> None:
        loopback = cast(_Server, self.server).loopback
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        loopback.requests.append(
            RecordedRequest(
                method=self.command,
                path=self.path,
                headers={name.lower(): value for name, value in self.headers.items()},
                body=json.loads(raw) if raw else None,
            )
        )
        try:
            reply = (
                loopback.responder(loopback.requests[-1])
                if loopback.responder is not None
                else loopback.replies.popleft()
            )
        except IndexError:
            reply = Reply(status=599, body=api_error("no canned reply queued", kind="test_error"))
        if reply.hang:
            loopback.release.wait()
            return
        data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
        self.send_response(reply.status)
        headers = {"content-type": "application/json", **reply.headers}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if reply.cut_after is not None:
            self.wfile.write(data[: reply.cut_after])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if reply.stall_after is not None:
            self.wfile.write(data[: reply.stall_after])
            self.wfile.flush()
            self._wait_for_the_client(loopback)
            return
        self.wfile.write(data)

    def _wait_for_the_client(self, loopback: OpenAILoopback) -> None:
        """Block until the client closes the connection (or the fixture is torn down)."""
        try:
            closed = self.connection.recv(1) == b""
        except OSError:
            closed = True
        if closed and not loopback.release.is_set():
            loopback.client_left.set()
        self.close_connection = True

    def log_message(self, format: str, *args: object) -> None:
        """Keep request lines out of the test output."""


class _KeepAliveHandler(_ResponsesHandler):
    """Speaks HTTP/1.1, so clients keep their connections open and pool them."""

    protocol_version = "HTTP/1.1"


def _serve(handler: type[_ResponsesHandler]) -> Iterator[OpenAILoopback]:
    server = _Server(("127.0.0.1", 0), handler)
    server.connections = []
    release = threading.Event()
    server.loopback = OpenAILoopback(server.server_port, release)
    # A short poll interval only bounds how long shutdown() waits for the loop to notice.
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server.loopback
    release.set()
    # Wake every handler still reading (a stalled reply, a pooled keep-alive connection).
    for connection in server.connections:
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_RDWR)
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def openai_loopback() -> Iterator[OpenAILoopback]:
    """A Responses API stand-in on 127.0.0.1, listening from construction (no readiness poll).

    It answers HTTP/1.0 style, closing each connection after its reply.
    """
    yield from _serve(_ResponsesHandler)


@pytest.fixture
def keepalive_loopback() -> Iterator[OpenAILoopback]:
    """The same server speaking HTTP/1.1: clients keep and reuse their connections."""
    yield from _serve(_KeepAliveHandler)
