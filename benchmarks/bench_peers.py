"""weakincentives beside pydantic-ai and the OpenAI Agents SDK: the same scripted work, one run.

Every row is one piece of work done by each framework and by a floor (the least any
framework could do for it), timed in the same process, rounds interleaved, best of
several; the table gives each framework's figure and its ratio to the floor.

- loop: the marginal cost of one tool call in an evaluation, on each framework's scripted
  model (our ``OfflineModel`` responder, pydantic-ai's ``FunctionModel``, an Agents SDK
  ``Model`` subclass), all scripted alike: request ``r`` calls ``ping(n=r)`` until the
  last, which answers. Floor: ``json.loads`` of the arguments and the call.
- http: the same conversation (10 calls, then the answer) over a loopback server
  speaking Chat Completions (a subprocess, so its CPU is not the client's), through the
  official ``openai`` SDK in every framework. Floor: the bare SDK sending the same
  requests. Client process time per request.
- stream: time to the first text delta of a streamed answer over the same server.
  Floor: the bare SDK's first content chunk.
- concurrency: 100 evaluations at once, each five rounds of one ``async`` tool that
  sleeps 50 ms, on the scripted models. Floor: 100 tasks that each sleep 5 x 50 ms.
- memory: what a finished 10-call evaluation keeps (tracemalloc over 20 kept runs): our
  ``PromptResponse`` and ``Session``, pydantic-ai's message history, the Agents SDK's
  ``RunResult`` items (and the whole ``RunResult``). Floor: the conversation as Chat
  Completions message dicts.
- schema: the JSON schema of a new tool's parameters (a fresh type every time, so no
  cache answers). Floor: pydantic's ``TypeAdapter(...).json_schema()``.
- validation: decode and validate one call's JSON arguments the way each framework's
  tool runtime does (ours: ``parse_json``'s one pass; the row also gives the two steps
  the runtime falls back to, ``decode_arguments`` then ``parse``). Floor: pydantic's
  ``validate_json`` for the same dataclass.
- render: bench_render's 1,000-section tree; the peers take a ready string (no tree).
  Floor: the compiled Jinja2 template of the same text.

Needs the ``bench`` and ``bench-peers`` extras: ``pip install -e '.[bench,bench-peers]'``,
then ``.venv/bin/python benchmarks/bench_peers.py``; ``--rows validation,memory`` runs only
those rows (groups: loop, http, concurrency, memory, schema, validation, render).
"""

import asyncio
import gc
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Annotated, Any, Literal

sys.path.insert(0, str(Path(__file__).parent))
if not all(importlib.util.find_spec(peer) for peer in ("agents", "pydantic_ai")):
    print("skipped: needs the bench-peers extra (pip install -e '.[bench,bench-peers]')")
    raise SystemExit(0)

import agents
import pydantic
import pydantic_ai
from agents.function_schema import function_schema as agents_function_schema
from bench_render import PARAMS as RENDER_PARAMS
from bench_render import TOP_LEVEL, build, jinja_template
from bench_serde import PAYLOAD, LineItemDataclass, OrderDataclass, OrderParams
from openai import AsyncOpenAI
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.usage import RequestUsage

from weakincentives.adapters import Adapter, LoopSettings, OfflineModel, ScriptedCall, ScriptedTurn
from weakincentives.adapters._turns import TurnRequest
from weakincentives.adapters.openai import ChatCompletions
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, Session, TextDelta, TokenUsage
from weakincentives.runtime._arguments import decode_arguments
from weakincentives.serde import _onepass, parse, parse_json, schema

REPEATS = int(os.environ.get("PEERS_REPEATS", "7"))
LOOP_ROUNDS = 50
CONVERSATION = 10
"""Tool calls in the http and memory conversations."""
CONCURRENT = 100
NAP_ROUNDS = 5
NAP = 0.05
KEPT = 20
TASK = "Ping until told to stop."

type Run = Callable[[int], Awaitable[object]]
"""One evaluation of ``n`` tool rounds; returns what a caller keeps of it."""


@dataclass(frozen=True, slots=True)
class Ping:
    """Arguments of ``ping``."""

    n: int


async def ping(n: int) -> str:
    """Answer a ping."""
    return f"pong {n}"


async def nap(n: int) -> str:
    """Sleep 50 ms."""
    await asyncio.sleep(NAP)
    return f"rested {n}"


def arguments(round_number: int) -> str:
    return json.dumps({"n": round_number})


# --- the three frameworks on scripted models ------------------------------------------------


def ours_offline(tool: Callable[[int], Awaitable[str]]) -> Callable[[int], Awaitable[object]]:
    """Our evaluation on an ``OfflineModel`` responder; keeps the response and the session."""

    async def handler(params: Ping, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=await tool(params.n))

    section = MarkdownSection(
        title="Task",
        template=TASK,
        tools=(Tool(name=tool.__name__, description=tool.__doc__ or "", handler=handler),),
    )
    prompt: Prompt[Any] = Prompt(ns="peers", key=tool.__name__, sections=[section])

    async def run(rounds: int) -> object:
        def reply(request: TurnRequest) -> ScriptedTurn:
            usage = TokenUsage(input_tokens=10, output_tokens=5)
            if request.round > rounds:
                return ScriptedTurn(text="done", usage=usage)
            call = ScriptedCall(
                name=tool.__name__,
                arguments=arguments(request.round),
                call_id=f"call_{request.round}",
            )
            return ScriptedTurn(calls=(call,), usage=usage)

        adapter = Adapter(
            OfflineModel(responder=reply), settings=LoopSettings(max_rounds=rounds + 1)
        )
        session = Session()
        response = await adapter.evaluate_async(prompt, session=session)
        assert response.text == "done"
        assert len(response.tool_executions) == rounds
        return response, session

    return run


def pydantic_offline(tool: Callable[[int], Awaitable[str]]) -> Callable[[int], Awaitable[object]]:
    """pydantic-ai on a ``FunctionModel``; keeps the message history."""

    async def run(rounds: int) -> object:
        async def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            round_number = (len(messages) + 1) // 2
            usage = RequestUsage(input_tokens=10, output_tokens=5)
            if round_number > rounds:
                return ModelResponse(parts=[TextPart("done")], usage=usage)
            call = ToolCallPart(
                tool.__name__, arguments(round_number), tool_call_id=f"call_{round_number}"
            )
            return ModelResponse(parts=[call], usage=usage)

        agent: Any = pydantic_ai.Agent(FunctionModel(reply), tools=[tool])
        limits = pydantic_ai.UsageLimits(request_limit=rounds + 1)
        result = await agent.run(TASK, usage_limits=limits)
        assert result.output == "done"
        return result.all_messages()

    return run


class ScriptedAgentsModel(agents.Model):
    """An Agents SDK model that plays the script: call ``tool`` until ``rounds``, then answer."""

    def __init__(self, tool: str, rounds: int) -> None:
        self.tool = tool
        self.rounds = rounds

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **kwargs: Any,
    ) -> agents.ModelResponse:
        items = input
        round_number = 1 if isinstance(items, str) else (len(items) - 1) // 2 + 1
        usage = agents.Usage(requests=1, input_tokens=10, output_tokens=5, total_tokens=15)
        output: list[Any]
        if round_number > self.rounds:
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            output = [
                ResponseOutputMessage(
                    id="msg", type="message", role="assistant", status="completed", content=[text]
                )
            ]
        else:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=f"call_{round_number}",
                    name=self.tool,
                    arguments=arguments(round_number),
                )
            ]
        return agents.ModelResponse(output=output, usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the scripted rows do not stream")


def agents_offline(
    tool: Callable[[int], Awaitable[str]], *, whole: bool = False
) -> Callable[[int], Awaitable[object]]:
    """The Agents SDK on ``ScriptedAgentsModel``; keeps the run's items (or the whole result)."""
    agents.set_tracing_disabled(True)
    function_tool = agents.function_tool(tool)

    async def run(rounds: int) -> object:
        model = ScriptedAgentsModel(tool.__name__, rounds)
        agent: Any = agents.Agent(name="bench", tools=[function_tool], model=model)
        result = await agents.Runner.run(agent, TASK, max_turns=rounds + 1)
        assert result.final_output == "done"
        return result if whole else result.new_items

    return run


async def floor_offline(rounds: int) -> object:
    """What any loop must do per call: decode the arguments and call the tool."""
    kept = []
    for round_number in range(1, rounds + 1):
        kept.append(await ping(**json.loads(arguments(round_number))))
    return kept


# --- the loopback Chat Completions server ---------------------------------------------------


class ChatHandler(BaseHTTPRequestHandler):
    """Plays the script from the request: ``model`` is ``rounds-<n>`` or ``stream-<pieces>``."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        kind, _, count = str(body["model"]).partition("-")
        if kind == "stream":
            self.stream(int(count))
            return
        done = sum(1 for message in body["messages"] if message["role"] == "tool")
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if done < int(count):
            call = {"name": "ping", "arguments": arguments(done + 1)}
            message["tool_calls"] = [
                {"id": f"call_{done + 1}", "type": "function", "function": call}
            ]
        else:
            message["content"] = "done"
        reason = "tool_calls" if "tool_calls" in message else "stop"
        self.send(
            "application/json",
            json.dumps(
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 1760000000,
                    "model": body["model"],
                    "choices": [{"index": 0, "message": message, "finish_reason": reason}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
            ).encode(),
        )

    def stream(self, pieces: int) -> None:
        def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": reason}
            item = {
                "id": "chatcmpl-1",
                "object": "chat.completion.chunk",
                "created": 1760000000,
                "model": "stream",
                "choices": [choice],
            }
            return f"data: {json.dumps(item)}\n\n"

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": f"word{index} "}) for index in range(pieces)]
        events += [chunk({}, "stop"), "data: [DONE]\n\n"]
        self.send("text/event-stream", "".join(events).encode())

    def send(self, content_type: str, data: bytes) -> None:
        self.send_response(200)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def serve() -> None:
    """Run the server on a free loopback port, print the port, serve until killed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ChatHandler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    port = int(process.stdout.readline())
    with socket.create_connection(("127.0.0.1", port), timeout=5):
        pass
    return process, f"http://127.0.0.1:{port}/v1"


# --- the three frameworks over HTTP ---------------------------------------------------------


def ours_http(base_url: str) -> tuple[Run, Callable[[], Awaitable[float]]]:
    async def handler(params: Ping, *, context: ToolContext) -> ToolResult[None]:
        return ToolResult(message=await ping(params.n))

    tool = Tool(name="ping", description="Answer a ping.", handler=handler)
    prompt: Prompt[Any] = Prompt(
        ns="peers",
        key="http",
        sections=[MarkdownSection(title="Task", template=TASK, tools=(tool,))],
    )

    adapters: dict[str, Adapter[ChatCompletions]] = {}

    def adapter(model: str, *, stream: bool = False) -> Adapter[ChatCompletions]:
        # One adapter (one SDK client) per model, reused as the peers reuse theirs.
        if model not in adapters:
            provider = ChatCompletions(
                model=model, base_url=base_url, api_key="local", max_retries=0, stream=stream
            )
            settings = LoopSettings(max_rounds=CONVERSATION + 1)
            adapters[model] = Adapter(provider, settings=settings)
        return adapters[model]

    async def run(rounds: int) -> object:
        return await adapter(f"rounds-{rounds}").evaluate_async(prompt)

    async def first_delta() -> float:
        bus = InProcessEventBus()
        first: list[float] = []

        def on_delta(delta: TextDelta) -> None:
            if not first:
                first.append(time.perf_counter())

        bus.subscribe(TextDelta, on_delta)
        start = time.perf_counter()
        await adapter("stream-20", stream=True).evaluate_async(prompt, bus=bus)
        return first[0] - start

    return run, first_delta


def pydantic_http(client: AsyncOpenAI) -> tuple[Run, Callable[[], Awaitable[float]]]:
    provider = OpenAIProvider(openai_client=client)

    def agent(model: str) -> Any:
        return pydantic_ai.Agent(OpenAIChatModel(model, provider=provider), tools=[ping])

    async def run(rounds: int) -> object:
        limits = pydantic_ai.UsageLimits(request_limit=rounds + 1)
        return await agent(f"rounds-{rounds}").run(TASK, usage_limits=limits)

    async def first_delta() -> float:
        start = time.perf_counter()
        first = 0.0
        async with agent("stream-20").run_stream(TASK) as streamed:
            async for _ in streamed.stream_text(delta=True, debounce_by=None):
                first = first or time.perf_counter()
        return first - start

    return run, first_delta


def agents_http(client: AsyncOpenAI) -> tuple[Run, Callable[[], Awaitable[float]]]:
    function_tool = agents.function_tool(ping)

    def agent(model: str) -> Any:
        chat = agents.OpenAIChatCompletionsModel(model=model, openai_client=client)
        return agents.Agent(name="bench", tools=[function_tool], model=chat)

    async def run(rounds: int) -> object:
        return await agents.Runner.run(agent(f"rounds-{rounds}"), TASK, max_turns=rounds + 1)

    async def first_delta() -> float:
        start = time.perf_counter()
        first = 0.0
        streamed = agents.Runner.run_streamed(agent("stream-20"), TASK)
        async for event in streamed.stream_events():
            data = getattr(event, "data", None)
            if getattr(data, "type", "") == "response.output_text.delta":
                first = first or time.perf_counter()
        return first - start

    return run, first_delta


def floor_http(client: AsyncOpenAI) -> tuple[Run, Callable[[], Awaitable[float]]]:
    """The bare SDK sending what a loop sends: the growing conversation and the tool."""
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "ping",
                "description": "Answer a ping.",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"],
                },
            },
        }
    ]

    async def run(rounds: int) -> object:
        messages: list[Any] = [{"role": "user", "content": TASK}]
        while True:
            reply = await client.chat.completions.create(
                model=f"rounds-{rounds}", messages=messages, tools=tools
            )
            message = reply.choices[0].message
            if not message.tool_calls:
                return messages
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = await ping(**json.loads(call.function.arguments))  # type: ignore[union-attr]
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

    async def first_delta() -> float:
        start = time.perf_counter()
        first = 0.0
        stream = await client.chat.completions.create(
            model="stream-20", messages=[{"role": "user", "content": TASK}], stream=True
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                first = first or time.perf_counter()
        return first - start

    return run, first_delta


# --- measuring ------------------------------------------------------------------------------


@dataclass(slots=True)
class Row:
    """One measure: a figure per framework and the floor's, in ``unit``."""

    name: str
    unit: str
    figures: dict[str, float | None] = field(default_factory=dict)


FRAMEWORKS = ("ours", "pydantic-ai", "openai-agents", "floor")


async def best_of(
    runs: dict[str, Callable[[], Awaitable[float]]], repeats: int
) -> dict[str, float]:
    """The best of ``repeats`` for each, rounds interleaved so load moves every row alike."""
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(repeats):
        for name, measure in runs.items():
            gc.collect()
            best[name] = min(best[name], await measure())
    return best


def process_time_of(run: Run, rounds: int) -> Callable[[], Awaitable[float]]:
    async def measure() -> float:
        start = time.process_time()
        await run(rounds)
        return time.process_time() - start

    return measure


async def loop_cost() -> Row:
    runs = {
        "ours": ours_offline(ping),
        "pydantic-ai": pydantic_offline(ping),
        "openai-agents": agents_offline(ping),
        "floor": floor_offline,
    }
    many = await best_of({k: process_time_of(r, LOOP_ROUNDS) for k, r in runs.items()}, REPEATS)
    one = await best_of({k: process_time_of(r, 1) for k, r in runs.items()}, REPEATS)
    per_call = {k: (many[k] - one[k]) / (LOOP_ROUNDS - 1) * 1e6 for k in runs}
    return Row("loop: one more tool call in an evaluation", "us", dict(per_call))


async def http_and_stream(base_url: str) -> list[Row]:
    client = AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
    pairs = {
        "ours": ours_http(base_url),
        "pydantic-ai": pydantic_http(client),
        "openai-agents": agents_http(client),
        "floor": floor_http(client),
    }
    requests = CONVERSATION + 1
    timed = {k: process_time_of(run, CONVERSATION) for k, (run, _) in pairs.items()}
    spent = await best_of(timed, REPEATS)
    first = await best_of({k: delta for k, (_, delta) in pairs.items()}, REPEATS * 2)
    await client.close()
    return [
        Row(
            f"http: client CPU per request, {CONVERSATION} calls + answer",
            "ms",
            {k: v / requests * 1e3 for k, v in spent.items()},
        ),
        Row(
            "stream: time to the first text delta (wall)",
            "ms",
            {k: v * 1e3 for k, v in first.items()},
        ),
    ]


async def concurrency() -> Row:
    runs: dict[str, Run] = {
        "ours": ours_offline(nap),
        "pydantic-ai": pydantic_offline(nap),
        "openai-agents": agents_offline(nap),
    }

    async def floor(rounds: int) -> object:
        for _ in range(rounds):
            await asyncio.sleep(NAP)
        return None

    runs["floor"] = floor

    def wall(run: Run) -> Callable[[], Awaitable[float]]:
        async def measure() -> float:
            start = time.perf_counter()
            await asyncio.gather(*(run(NAP_ROUNDS) for _ in range(CONCURRENT)))
            return time.perf_counter() - start

        return measure

    best = await best_of({k: wall(run) for k, run in runs.items()}, 3)
    name = f"concurrency: {CONCURRENT} runs at once of {NAP_ROUNDS} x 50 ms tools (wall)"
    return Row(name, "ms", {k: v * 1e3 for k, v in best.items()})


async def kept_bytes(run: Run) -> float:
    """Bytes per evaluation still allocated while ``KEPT`` finished runs are held."""
    await run(CONVERSATION)  # warm caches, compiled shapes and the like
    kept: list[object] = []
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for _ in range(KEPT):
        kept.append(await run(CONVERSATION))
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / KEPT


async def floor_conversation(rounds: int) -> object:
    """The conversation as the wire needs it: Chat Completions message dicts."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for number in range(1, rounds + 1):
        call = {"name": "ping", "arguments": arguments(number)}
        messages.append(
            {
                "role": "assistant",
                "tool_calls": [{"id": f"call_{number}", "type": "function", "function": call}],
            }
        )
        messages.append(
            {"role": "tool", "tool_call_id": f"call_{number}", "content": await ping(number)}
        )
    messages.append({"role": "assistant", "content": "done"})
    return messages


async def memory() -> list[Row]:
    figures: dict[str, float | None] = {
        "ours": await kept_bytes(ours_offline(ping)),
        "pydantic-ai": await kept_bytes(pydantic_offline(ping)),
        "openai-agents": await kept_bytes(agents_offline(ping)),
        "floor": await kept_bytes(floor_conversation),
    }
    whole = {"openai-agents": await kept_bytes(agents_offline(ping, whole=True))}
    return [
        Row(f"memory: kept per evaluation ({CONVERSATION} calls)", "bytes", figures),
        Row("memory: the Agents SDK's whole RunResult", "bytes", dict(whole)),
    ]


# --- schema, validation, render -------------------------------------------------------------

type Priority = Literal["low", "normal", "high"]


def fresh_types() -> tuple[type, Callable[..., str], type]:
    """OrderParams three ways, as new types: our dataclass, a peer's function, pydantic's."""

    @dataclass(frozen=True, slots=True)
    class Line:
        sku: str
        quantity: int = field(metadata={"ge": 1})
        price: float = 0.0

    @dataclass(frozen=True, slots=True)
    class Order:
        customer_id: str = field(metadata={"description": "Customer identifier", "min_length": 1})
        items: tuple[Line, ...]
        priority: Priority = "normal"
        note: str | None = None
        express: bool = False
        discount: float = field(default=0.0, metadata={"ge": 0, "le": 1})

    @dataclass(frozen=True, slots=True)
    class PeerLine:
        sku: str
        quantity: Annotated[int, pydantic.Field(ge=1)]
        price: float = 0.0

    def place_order(
        customer_id: Annotated[
            str, pydantic.Field(min_length=1, description="Customer identifier")
        ],
        items: tuple[PeerLine, ...],
        priority: Priority = "normal",
        note: str | None = None,
        express: bool = False,
        discount: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.0,
    ) -> str:
        """Place an order."""
        return customer_id

    @dataclass(frozen=True, slots=True)
    class PeerOrder:
        customer_id: Annotated[str, pydantic.Field(min_length=1, description="Customer identifier")]
        items: tuple[PeerLine, ...]
        priority: Priority = "normal"
        note: str | None = None
        express: bool = False
        discount: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.0

    return Order, place_order, PeerOrder


def place_order(
    customer_id: Annotated[str, pydantic.Field(min_length=1)],
    items: tuple[LineItemDataclass, ...],
    priority: Priority = "normal",
    note: str | None = None,
    express: bool = False,
    discount: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.0,
) -> str:
    """Place an order (the peers' form of bench_serde's ``OrderParams``)."""
    return customer_id


def per_call_us(actions: dict[str, Callable[[], object]], inner: int) -> dict[str, float]:
    """Best microseconds per call of each action, rounds interleaved, process time."""
    best = dict.fromkeys(actions, float("inf"))
    for _ in range(REPEATS * 2):
        for name, action in actions.items():
            start = time.process_time()
            for _ in range(inner):
                action()
            best[name] = min(best[name], (time.process_time() - start) / inner)
    return {name: seconds * 1e6 for name, seconds in best.items()}


def schema_row() -> Row:
    def fresh(
        build_schema: Callable[[tuple[type, Callable[..., str], type]], object],
    ) -> Callable[[], object]:
        return lambda: build_schema(fresh_types())

    def types_only() -> object:
        return fresh_types()

    timed = per_call_us(
        {
            "types": types_only,
            "ours": fresh(lambda t: schema(t[0])),
            "pydantic-ai": fresh(lambda t: pydantic_ai.Tool(t[1]).tool_def.parameters_json_schema),
            "openai-agents": fresh(lambda t: agents.function_tool(t[1]).params_json_schema),
            "floor": fresh(lambda t: pydantic.TypeAdapter(t[2]).json_schema()),
        },
        inner=20,
    )
    types = timed.pop("types")
    name = "schema: a new tool's parameters (six fields, a nested list; type creation removed)"
    return Row(name, "us", {k: v - types for k, v in timed.items()})


def validation_row() -> Row:
    pydantic_validator = pydantic_ai.Tool(place_order).function_schema.validator
    agents_schema = agents_function_schema(place_order)
    floor = pydantic.TypeAdapter(OrderDataclass)

    def two_steps() -> object:
        decoded, _ = decode_arguments(PAYLOAD)  # the runtime's reference path (fallback)
        return parse(OrderParams, decoded)

    def agents_path() -> object:
        return agents_schema.params_pydantic_model(**json.loads(PAYLOAD))

    # The route without jiter (the speedups extra): the stdlib's scanner, then the checks.
    jiter = _onepass.JITER
    _onepass.JITER = None
    stdlib_route = _onepass.one_pass_route(OrderParams, "forbid")
    _onepass.JITER = jiter
    assert stdlib_route(PAYLOAD) == parse_json(OrderParams, PAYLOAD)

    timed = per_call_us(
        {
            "ours": lambda: parse_json(OrderParams, PAYLOAD),  # as runtime/_steps.py's prepare
            "ours stdlib": lambda: stdlib_route(PAYLOAD),
            "ours two steps": two_steps,
            "pydantic-ai": lambda: pydantic_validator.validate_json(PAYLOAD),
            "openai-agents": agents_path,
            "floor": lambda: floor.validate_json(PAYLOAD),
        },
        inner=2000,
    )
    reference = timed.pop("ours two steps")
    stdlib = timed.pop("ours stdlib")
    decoder = "jiter" if jiter is not None else "the stdlib's scanner"
    return Row(
        f"validation: decode + validate one call's arguments (ours reads with {decoder}; "
        f"without jiter {stdlib:.2f} us, {stdlib / timed['floor']:.2f}x; "
        f"the two-step fallback {reference:.2f} us, {reference / timed['floor']:.2f}x)",
        "us",
        dict(timed),
    )


def render_row() -> Row:
    template = build()
    compiled = jinja_template()
    half_open = {f"topic-{i}" for i in range(1, TOP_LEVEL, 2)}
    assert compiled.render(p=RENDER_PARAMS, opened=half_open) == template.render(RENDER_PARAMS).text
    timed = per_call_us(
        {
            "ours": lambda: template.render(RENDER_PARAMS),
            "floor": lambda: compiled.render(p=RENDER_PARAMS, opened=half_open),
        },
        inner=20,
    )
    figures: dict[str, float | None] = {"ours": timed["ours"] / 1e3, "floor": timed["floor"] / 1e3}
    figures.update({"pydantic-ai": None, "openai-agents": None})
    return Row("render: 1,000-section tree, half summarized (peers: no tree)", "ms", figures)


# --- the table ------------------------------------------------------------------------------


def shown(value: float | None, floor: float | None) -> str:
    if value is None:
        return "-"
    figure = f"{value:,.0f}" if value >= 100 else f"{value:.2f}"
    if floor is None or value is floor:
        return figure
    return f"{figure} ({value / floor:.2f}x)"


def table(rows: list[Row]) -> Iterator[str]:
    yield "| measure | unit | " + " | ".join(FRAMEWORKS) + " |"
    yield "| --- | --- |" + " --- |" * len(FRAMEWORKS)
    for row in rows:
        floor = row.figures.get("floor")
        cells = [shown(row.figures.get(name), floor) for name in FRAMEWORKS]
        yield f"| {row.name} | {row.unit} | " + " | ".join(cells) + " |"


ROWS = ("loop", "http", "concurrency", "memory", "schema", "validation", "render")
"""Row groups ``--rows`` selects (``http`` is the http and stream rows, one server)."""


async def main(selected: frozenset[str]) -> None:
    rows: list[Row] = []
    if selected & {"loop", "http", "concurrency"}:
        process, base_url = start_server()
        try:
            if "loop" in selected:
                rows.append(await loop_cost())
            if "http" in selected:
                rows += await http_and_stream(base_url)
            if "concurrency" in selected:
                rows.append(await concurrency())
        finally:
            process.kill()
            process.wait()
    if "memory" in selected:
        rows += await memory()
    rows += [row() for name, row in SYNC_ROWS if name in selected]
    print(
        f"pydantic-ai {pydantic_ai.__version__ if hasattr(pydantic_ai, '__version__') else '?'}, "
        f"openai-agents {agents.__version__}, pydantic {pydantic.VERSION}"
    )
    for line in table(rows):
        print(line)


SYNC_ROWS = (("schema", schema_row), ("validation", validation_row), ("render", render_row))


def chosen(argv: list[str]) -> frozenset[str]:
    """The row groups named by ``--rows a,b`` (every group without it)."""
    if "--rows" not in argv:
        return frozenset(ROWS)
    names = frozenset(argv[argv.index("--rows") + 1].split(","))
    if unknown := names - set(ROWS):
        raise SystemExit(f"unknown rows {sorted(unknown)}; choose from {', '.join(ROWS)}")
    return names


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    else:
        asyncio.run(main(chosen(sys.argv[1:])))
