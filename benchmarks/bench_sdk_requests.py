"""Our requests against the bare SDK's ``create`` for the same bodies, on all three wires.

For each wire (Responses, Chat Completions, Messages) the request bodies of one
10-round conversation (a prompt with two tools; every round one tool call and its
result, then an answer) are captured from the adapter itself, so they are exactly what
it sends. Each body is then sent, one after the other, over the same async SDK client
to a loopback server in another process:

- ``ours``: the provider's ``send`` (what the loop calls for every attempt): the body
  goes out as built, and the reply is read as raw JSON (or as server-sent events through
  the provider's stream reader);
- ``bare``: ``client.<endpoint>.create(**body)``, as a user of the SDK would call it
  (fields ``create`` does not name in ``extra_body``), returning the SDK's models (or,
  streamed, iterating the SDK's event models).

Reported per wire and per mode (whole JSON body, streamed): the median of the paired
runs' CPU time of this process (the server runs elsewhere, so this is the client's own
cost) and of their wall time, and the ratios ours / bare. The goal (issue 31) is at most
1.05x. A third runner gives the floor under both: the SDK's ``post`` with the same body
and options, the reply read as bytes (and, whole, decoded with ``json.loads``).

Run: ``.venv/bin/python benchmarks/bench_sdk_requests.py [--repeats N] [--baseline REF]``;
with ``--baseline`` the same rows are measured first with the ``src`` tree of that git
ref (extracted with ``git archive``), in a subprocess against the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any, ClassVar, Literal

import anthropic
import httpx2
import openai

from weakincentives.adapters import Adapter, Attempt, LoopSettings
from weakincentives.adapters.anthropic import AnthropicMessages
from weakincentives.adapters.openai import ChatCompletions, OpenAIResponses
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult

ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 10
REPEATS = 15
type Body = dict[str, Any]
type WireName = Literal["responses", "chat", "anthropic"]
WIRES: tuple[WireName, ...] = ("responses", "chat", "anthropic")
PATHS: dict[str, WireName] = {
    "/v1/responses": "responses",
    "/v1/chat/completions": "chat",
    "/v1/messages": "anthropic",
}
CITIES = ("Lisbon", "Porto", "Faro", "Braga", "Evora", "Sintra", "Coimbra", "Aveiro", "Tomar")


def _arguments(call: int) -> dict[str, Any]:
    return {"city": CITIES[call % len(CITIES)], "days": 1 + call}


RESULT_TEXT = json.dumps(
    {"city": "Lisbon", "forecast": [{"day": n, "high": 21 + n, "low": 14} for n in range(3)]}
)


# --- replies in each wire's documented shape ------------------------------------------


def _responses_reply(call: int | None) -> Body:
    output: list[Body]
    if call is None:
        output = [
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "Sunny all week.", "annotations": []}],
            }
        ]
    else:
        output = [
            {
                "id": f"fc_{call}",
                "type": "function_call",
                "status": "completed",
                "call_id": f"call_{call}",
                "name": "forecast",
                "arguments": json.dumps(_arguments(call)),
            }
        ]
    return {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1760000000,
        "status": "completed",
        "model": "gpt-bench",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": 300,
            "output_tokens": 20,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 320,
        },
    }


def _chat_reply(call: int | None) -> Body:
    message: Body = {"role": "assistant", "content": None, "refusal": None, "annotations": []}
    if call is None:
        message["content"] = "Sunny all week."
    else:
        message["tool_calls"] = [
            {
                "id": f"call_{call}",
                "type": "function",
                "function": {"name": "forecast", "arguments": json.dumps(_arguments(call))},
            }
        ]
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "gpt-bench",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "stop" if call is None else "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320},
    }


def _anthropic_reply(call: int | None) -> Body:
    block: Body = (
        {"type": "text", "text": "Sunny all week."}
        if call is None
        else {
            "type": "tool_use",
            "id": f"toolu_{call}",
            "name": "forecast",
            "input": _arguments(call),
        }
    )
    return {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "claude-bench",
        "content": [block],
        "stop_reason": "end_turn" if call is None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 300, "output_tokens": 20},
    }


REPLIES: dict[WireName, Callable[[int | None], Body]] = {
    "responses": _responses_reply,
    "chat": _chat_reply,
    "anthropic": _anthropic_reply,
}


def _events(wire: WireName, body: Body) -> bytes:
    """``body`` (a tool-call reply) as the server-sent events its wire streams."""
    if wire == "responses":
        events: list[Body] = [
            {
                "type": "response.created",
                "response": {**body, "status": "in_progress", "output": []},
            },
            {"type": "response.output_item.done", "output_index": 0, "item": body["output"][0]},
            {"type": "response.completed", "response": body},
        ]
        return "".join(
            f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': n})}\n\n"
            for n, event in enumerate(events)
        ).encode()
    if wire == "chat":
        call = body["choices"][0]["message"]["tool_calls"][0]
        chunk = {key: body[key] for key in ("id", "created", "model")}
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}]},
            {"choices": [{"index": 0, "delta": {"tool_calls": [{**call, "index": 0}]}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            {"choices": [], "usage": body["usage"]},
        ]
        lines = [
            f"data: {json.dumps({**chunk, 'object': 'chat.completion.chunk', **c})}\n\n"
            for c in chunks
        ]
        return ("".join(lines) + "data: [DONE]\n\n").encode()
    block = body["content"][0]
    encoded = json.dumps(block["input"])
    events = [
        {
            "type": "message_start",
            "message": {**body, "content": [], "stop_reason": None, "usage": body["usage"]},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {**block, "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": encoded},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 20},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


# --- the loopback server (run in its own process) --------------------------------------


class _Handler(BaseHTTPRequestHandler):
    """Answers every request with its wire's tool-call reply, streamed when asked to."""

    protocol_version = "HTTP/1.1"
    canned: ClassVar[dict[tuple[WireName, bool], bytes]] = {}

    def setup(self) -> None:
        super().setup()
        # Headers and body go out as two writes; without this the second waits for the
        # client's delayed acknowledgement (about 40 ms a request).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        streamed = json.loads(raw).get("stream") is True
        data = self.canned[PATHS[self.path], streamed]
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if streamed else "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def serve() -> None:
    """Serve on a free port, print it, and stop when stdin closes."""
    for wire in WIRES:
        body = REPLIES[wire](1)
        _Handler.canned[wire, False] = json.dumps(body).encode()
        _Handler.canned[wire, True] = _events(wire, body)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    print(server.server_port, flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


# --- capturing the adapter's bodies -----------------------------------------------------


@dataclass
class _Capture:
    """A provider that records what the real one builds and answers from a script."""

    inner: Any
    wire: WireName
    requests: list[Body]

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def model(self) -> str | None:
        return str(self.inner.model)

    @property
    def retry_limit(self) -> int:
        return 0

    @property
    def hosted_tool_codecs(self) -> Any:
        return self.inner.hosted_tool_codecs

    def build_request(self, turn: Any) -> Any:
        return self.inner.build_request(turn)

    async def send(self, request: Body, attempt: Any, on_text: Any) -> Any:
        self.requests.append(request)
        number = len(self.requests)
        reply = REPLIES[self.wire](None if number > ROUNDS - 1 else number)
        return (reply,) if self.wire == "anthropic" else reply

    def read_turn(self, reply: Any, request: Any, turn: Any) -> Any:
        return self.inner.read_turn(reply, request, turn)

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True, slots=True)
class Forecast:
    """Where and for how long."""

    city: str
    days: int


@dataclass(frozen=True, slots=True)
class Alert:
    """Which region."""

    region: str


def forecast(params: Forecast, *, context: ToolContext) -> ToolResult[None]:
    """A canned forecast."""
    return ToolResult(message=RESULT_TEXT)


def alert(params: Alert, *, context: ToolContext) -> ToolResult[None]:
    """No alerts."""
    return ToolResult(message="none")


def _prompt() -> Prompt[None]:
    tools = (
        Tool(name="forecast", description="The forecast for a city.", handler=forecast),
        Tool(name="alert", description="Weather alerts for a region.", handler=alert),
    )
    sections = [
        MarkdownSection(title="Role", template="You are a careful assistant who plans trips. " * 8),
        MarkdownSection(title="Task", template="Plan three days in Lisbon.", tools=tools),
    ]
    return Prompt(ns="bench", key="sdk-requests", sections=sections)


def _provider(wire: WireName, client: Any, *, stream: bool) -> Any:
    if wire == "responses":
        return OpenAIResponses(model="gpt-bench", client=client, stream=stream)
    if wire == "chat":
        return ChatCompletions(model="gpt-bench", client=client, stream=stream)
    return AnthropicMessages(model="claude-bench", client=client, stream=stream)


def _client(wire: WireName, port: int) -> Any:
    if wire == "anthropic":
        return anthropic.AsyncAnthropic(
            base_url=f"http://127.0.0.1:{port}", api_key="k", max_retries=0, timeout=30.0
        )
    return openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0, timeout=30.0
    )


async def capture(wire: WireName, client: Any, *, stream: bool) -> list[Body]:
    """The bodies the adapter sends in a conversation of ``ROUNDS`` requests."""
    recorder = _Capture(_provider(wire, client, stream=stream), wire, [])
    adapter = Adapter(recorder, settings=LoopSettings(max_rounds=ROUNDS + 1))
    await adapter.evaluate_async(_prompt())
    assert len(recorder.requests) == ROUNDS, len(recorder.requests)
    return recorder.requests


# --- timing ---------------------------------------------------------------------------


def _endpoint(wire: WireName, client: Any) -> Any:
    if wire == "responses":
        return client.responses
    if wire == "chat":
        return client.chat.completions
    return client.messages


def _bare(wire: WireName, client: Any, *, stream: bool) -> Callable[[Body], Awaitable[None]]:
    endpoint = _endpoint(wire, client)
    named = set(inspect.signature(endpoint.create).parameters)

    async def send(body: Body) -> None:
        known = {key: value for key, value in body.items() if key in named}
        extra = {key: value for key, value in body.items() if key not in named}
        if extra:
            known["extra_body"] = extra
        if not stream:
            await endpoint.create(**known)
            return
        events = await endpoint.create(**known, stream=True)
        async for _ in events:
            pass

    return send


POST_PATHS: dict[WireName, str] = {
    "responses": "/responses",
    "chat": "/chat/completions",
    "anthropic": "/v1/messages",
}


def _floor(wire: WireName, client: Any, *, stream: bool) -> Callable[[Body], Awaitable[None]]:
    """The least a caller can do through the SDK: ``post`` the body, read the bytes."""
    path = POST_PATHS[wire]
    options = {"headers": {"x-stainless-retry-count": "0"}, "max_retries": 0}

    async def send(body: Body) -> None:
        sent = {**body, "stream": True} if stream else body
        reply = await client.post(
            path, cast_to=httpx2.Response, body=sent, options=options, stream=True
        )
        try:
            if stream:
                async for _ in reply.aiter_bytes():
                    pass
            else:
                json.loads(await reply.aread())
        finally:
            await reply.aclose()

    return send


def _ours(provider: Any) -> Callable[[Body], Awaitable[None]]:
    attempt = Attempt(number=1, timeout=30.0, prompt_name="bench", round=1)

    async def send(body: Body) -> None:
        await provider.send(body, attempt, _ignore)

    return send


def _ignore(text: str) -> None:
    del text


async def _run(send: Callable[[Body], Awaitable[None]], bodies: list[Body]) -> tuple[float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    for body in bodies:
        await send(body)
    return time.process_time() - cpu, time.perf_counter() - wall


async def measure(
    wire: WireName, port: int, *, stream: bool, repeats: int
) -> dict[str, tuple[float, float]]:
    """Median (CPU, wall) seconds of ``repeats`` paired runs of ours and bare."""
    client = _client(wire, port)
    bodies = await capture(wire, client, stream=stream)
    provider = _provider(wire, client, stream=stream)
    runners = {
        "ours": _ours(provider),
        "bare": _bare(wire, client, stream=stream),
        "floor": _floor(wire, client, stream=stream),
    }
    for runner in runners.values():  # warm: connections, imports, caches
        await _run(runner, bodies)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in runners}
    names = list(runners)
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(await _run(runners[name], bodies))
    await client.close()
    return {
        name: (statistics.median(s[0] for s in runs), statistics.median(s[1] for s in runs))
        for name, runs in samples.items()
    }


def table(port: int, repeats: int, label: str) -> None:
    """Measure every wire and mode against the server on ``port`` and print a row each."""
    for wire in WIRES:
        for stream in (False, True):
            result = asyncio.run(measure(wire, port, stream=stream, repeats=repeats))
            ours, bare, floor = result["ours"], result["bare"], result["floor"]
            mode = "stream" if stream else "body"
            print(
                f"{label:<10}{wire:<11}{mode:<8}{ours[0] * 1e3:>10.2f}{bare[0] * 1e3:>8.2f}"
                f"{floor[0] * 1e3:>8.2f}{ours[0] / bare[0]:>10.2f}x{ours[0] / floor[0]:>11.2f}x"
                f"{ours[1] / bare[1]:>14.2f}x{ours[1] / floor[1]:>11.2f}x",
                flush=True,
            )


def extract(ref: str, into: Path) -> Path | None:
    """The ``src`` tree of ``ref`` under ``into``, or None when git cannot provide it."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def baseline_table(ref: str, port: int, repeats: int) -> None:
    """The same rows with the ``src`` tree of ``ref``, in a subprocess on the same server."""
    with tempfile.TemporaryDirectory() as scratch:
        source = extract(ref, Path(scratch))
        if source is None:
            print(f"(baseline {ref} not available)")
            return
        command = [sys.executable, __file__, "--port", str(port), "--repeats", str(repeats)]
        environment = {**os.environ, "PYTHONPATH": str(source)}
        subprocess.run([*command, "--label", ref], env=environment, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--baseline", help="also measure the src tree of this git ref")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--label", default="current", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return 0
    if args.port is not None:
        table(args.port, args.repeats, args.label)
        return 0
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        print(f"{ROUNDS} requests of one conversation, median of {args.repeats} rotated runs")
        print(
            f"{'tree':<10}{'wire':<11}{'mode':<8}{'cpu ms: ours':>10}{'bare':>8}{'floor':>8}"
            f"{'ours/bare':>11}{'ours/floor':>12}{'wall ours/bare':>15}{'ours/floor':>12}"
        )
        if args.baseline:
            baseline_table(args.baseline, port, args.repeats)
        table(port, args.repeats, "current")
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
