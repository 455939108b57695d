"""A deterministic model with no network: scripted turns, a responder, or call-every-tool.

It is product code, not a test double: examples and the demo run on it, and it goes
through exactly the same loop, events and failure semantics as the SDK providers
(``OfflineAdapter(...)`` is ``Adapter(OfflineModel(...))``).
Its raw items use the Responses API's shapes, so hosted-tool fixtures parse with the
OpenAI codecs, which the caller passes in (``hosted_tool_codecs=default_openai_codecs()``):
the generic layer names no provider.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from weakincentives._direct import direct_constructor
from weakincentives.adapters._factory import adapter_factory
from weakincentives.adapters._history import loaded_before
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._native_search import declared_tools, native_offer, neutral_call
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._turns import (
    AssistantMessage,
    FeedbackMessage,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.prompt import DeferredTools
from weakincentives.runtime import TokenUsage, ToolCall
from weakincentives.serde import JSONValue, dump, sample

__all__ = [
    "OFFLINE_FORMAT",
    "OfflineAdapter",
    "OfflineModel",
    "Responder",
    "ScriptedCall",
    "ScriptedTurn",
]

OFFLINE_FORMAT = "offline"
"""The ``raw_format`` of offline turns (Responses-API-shaped items, but not replayable
to the Responses API as they are: they lack the ids a real reply carries)."""

# Raw items whose content the neutral fields carry; any other (a hosted-tool fixture)
# cannot be carried to another provider. A simulated native search is a neutral call.
_NEUTRAL_ITEMS = frozenset({"message", "function_call", "tool_search_call"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedCall:
    """A tool call the scripted model makes."""

    name: str
    arguments: Mapping[str, JSONValue] | str = field(default_factory=dict)
    """A mapping, or raw JSON text (which may be deliberately malformed)."""
    call_id: str | None = None
    """Defaults to ``call_<round>_<index>``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedTurn:
    """One scripted model reply."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    output: object = None
    """A structured answer (dataclass, list of dataclasses or mapping), sent as JSON text."""
    raw_items: tuple[Mapping[str, JSONValue], ...] = ()
    """Extra Responses-API items, e.g. hosted-tool fixtures (``web_search_call``, messages
    with ``url_citation`` annotations)."""
    usage: TokenUsage | None = None
    """Reported usage; estimated from text length (4 characters per token) when None."""
    refusal: str | None = None
    """The model declines to answer, with this text (as a provider's refusal)."""


type Responder = Callable[[TurnRequest], ScriptedTurn | Awaitable[ScriptedTurn]]
"""A function that plays the model: it sees the request (history included) and replies.

It may be ``async def``; it is then awaited on the evaluation's loop."""


class _ScriptState:
    """What an offline model remembers between turns: its place in the script, the requests."""

    __slots__ = ("position", "requests", "script", "usage")

    def __init__(self) -> None:
        self.script: tuple[ScriptedTurn, ...] = ()
        self.position = 0
        self.requests: list[TurnRequest] = []
        self.usage = _UsageEstimator()


@dataclass(frozen=True, slots=True, kw_only=True)
class OfflineModel:
    """A model with no network: scripted turns, a responder, or call-every-tool.

    Give it a ``script`` (turns played in order across evaluations), a ``responder``
    function (sync or async), or ``call_every_tool=True`` to call each available tool
    once with schema-valid arguments and then answer (with a schema-valid structured
    output when the prompt declares one). Its "wire" is the turn itself.
    """

    script: Sequence[ScriptedTurn] = field(default=(), kw_only=False)
    responder: Responder | None = None
    call_every_tool: bool = False
    seed: int = 0
    """Seeds the sampled arguments and answers of ``call_every_tool``."""
    name: str = "offline"
    """The adapter name in events."""
    stream_chunk_size: int | None = None
    """Stream each turn's text in chunks of this many characters, as a streaming
    provider would (None: one piece)."""
    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = field(default_factory=dict)
    """Codecs for hosted-tool fixtures; none unless given. ``default_openai_codecs()``
    reads the Responses-API-shaped items that ``ScriptedTurn.raw_items`` carries."""
    tool_search: Literal["off", "client"] = "off"
    """``client`` simulates a provider's native tool search for a catalogue the prompt
    offers (``ToolDiscoverySection``): the model is shown the catalogue deferred instead
    of the discovery tools (``ModelTurn.request``), a scripted call of the section's
    search tool is a native search, and a scripted call of a catalogue tool by its
    deferred name runs as a call of the section's call tool. ``off``: the discovery
    tools, as on any provider without native search."""
    _state: _ScriptState = field(
        init=False, repr=False, compare=False, default_factory=_ScriptState
    )

    def __post_init__(self) -> None:
        modes = sum((bool(self.script), self.responder is not None, bool(self.call_every_tool)))
        if modes != 1:
            raise ConfigValidationError(
                "OfflineModel needs exactly one of: script=..., responder=..., "
                "call_every_tool=True",
                config_type=OfflineModel,
            )
        chunk = self.stream_chunk_size
        if chunk is not None and (
            not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 1
        ):
            raise ConfigValidationError(
                f"stream_chunk_size must be a positive integer, got {chunk!r}",
                config_type=OfflineModel,
                field_name="stream_chunk_size",
                value=chunk,
            )
        if self.tool_search not in ("off", "client"):
            raise ConfigValidationError(
                f"tool_search must be 'off' or 'client', got {self.tool_search!r}",
                config_type=OfflineModel,
                field_name="tool_search",
                value=self.tool_search,
            )
        self._state.script = tuple(self.script)

    @property
    def model(self) -> str | None:
        """The offline model has no name."""
        return None

    @property
    def retry_limit(self) -> int:
        """Scripted turns never fail transiently."""
        return 0

    @property
    def requests(self) -> tuple[TurnRequest, ...]:
        """Every request sent so far, oldest first, so tests can check what the model saw."""
        return tuple(self._state.requests)

    @property
    def remaining_turns(self) -> int:
        """Scripted turns not yet played."""
        return len(self._state.script) - self._state.position

    def build_request(self, turn: TurnRequest) -> TurnRequest:
        """The request is the turn request itself."""
        return turn

    async def send(self, request: TurnRequest, attempt: Attempt, on_text: TextSink) -> ModelTurn:
        """Produce the next turn, streaming its text in chunks when asked to."""
        self._state.requests.append(request)
        scripted = self._next(request)
        if inspect.isawaitable(scripted):
            scripted = await scripted
        if not isinstance(scripted, ScriptedTurn):
            raise PromptEvaluationError(
                f"the offline responder returned {type(scripted).__name__}, not a ScriptedTurn",
                prompt_name=request.prompt_name,
                phase="response",
            )
        offer = native_offer(request, enabled=self.tool_search == "client")
        turn = _to_model_turn(scripted, request, self._state.usage, offer)
        chunk = self.stream_chunk_size
        if chunk is not None:
            for start in range(0, len(turn.text), chunk):
                on_text(turn.text[start : start + chunk])
                await asyncio.sleep(0)  # let the loop run between chunks, as a real stream does
        return turn

    def read_turn(self, reply: ModelTurn, request: TurnRequest, turn: TurnRequest) -> ModelTurn:
        """The reply already is the turn."""
        return reply

    def close(self) -> None:
        """Nothing to release: the offline model holds no connection."""

    def _next(self, request: TurnRequest) -> ScriptedTurn | Awaitable[ScriptedTurn]:
        if self.responder is not None:
            return self.responder(request)
        if self.call_every_tool:
            return self._exercise(request)
        state = self._state
        if state.position >= len(state.script):
            raise PromptEvaluationError(
                f"offline script exhausted after {len(state.script)} turns",
                prompt_name=request.prompt_name,
                phase="response",
            )
        turn = state.script[state.position]
        state.position += 1
        return turn

    def _exercise(self, request: TurnRequest) -> ScriptedTurn:
        offer = native_offer(request, enabled=self.tool_search == "client")
        tools = declared_tools(request, offer)
        if request.round == 1 and tools:
            return ScriptedTurn(
                calls=tuple(
                    ScriptedCall(
                        name=tool.name,
                        arguments=_object(sample(tool.spec.parameters_schema, seed=self.seed)),
                    )
                    for tool in tools
                )
            )
        if request.output_schema is not None:
            answer = sample(request.output_schema.schema, seed=self.seed)
            return ScriptedTurn(text=json.dumps(answer))
        outputs = [item for item in request.history if isinstance(item, ToolOutputMessage)]
        return ScriptedTurn(text=f"Called {len(outputs)} tools.")


OfflineAdapter = adapter_factory(OfflineModel, name="OfflineAdapter")


def _object(value: JSONValue) -> Mapping[str, JSONValue]:
    return value if isinstance(value, dict) else {}


# A scripted turn may hold hundreds of calls: skip the frozen __init__ of each.
_make_call = direct_constructor(ToolCall)


def _to_model_turn(
    scripted: ScriptedTurn,
    request: TurnRequest,
    estimator: _UsageEstimator,
    offer: DeferredTools | None,
) -> ModelTurn:
    text = scripted.text
    if scripted.output is not None:
        text = _output_text(scripted.output, request)
    items: list[Mapping[str, JSONValue]] = list(scripted.raw_items)
    if not text:
        text = _message_text(items)
    else:
        items.append(
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    calls: list[ToolCall] = []
    for index, call in enumerate(scripted.calls):
        call_id = call.call_id or f"call_{request.round}_{index}"
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
        made, item = _offline_call(call.name, call_id, arguments, request.round, offer)
        calls.append(made)
        items.append(item)
    usage = scripted.usage or TokenUsage(
        input_tokens=estimator.input_tokens(request),
        output_tokens=_estimate(text)
        + sum(_estimate(call.arguments) for call in calls if isinstance(call.arguments, str)),
    )
    return ModelTurn(
        text=text,
        tool_calls=tuple(calls),
        raw_items=tuple(items),
        raw_format=OFFLINE_FORMAT,
        untranslatable=tuple(
            str(item.get("type")) for item in items if item.get("type") not in _NEUTRAL_ITEMS
        ),
        usage=usage,
        response_id=f"offline_{request.round}",
        refusal=scripted.refusal,
        request=None if offer is None else _native_view(request, offer),
    )


def _offline_call(
    name: str, call_id: str, arguments: str, round_number: int, offer: DeferredTools | None
) -> tuple[ToolCall, Mapping[str, JSONValue]]:
    """A scripted call and its Responses-shaped item, the native way when simulated."""
    parent = f"offline_{round_number}"
    deferred = None if offer is None else offer.named(name)
    if offer is not None and deferred is not None:
        call = neutral_call(
            offer, deferred, call_id=call_id, arguments=arguments, parent_message_id=parent
        )
        item: dict[str, JSONValue] = {
            "type": "function_call",
            "call_id": call_id,
            "name": name,
            "namespace": deferred.group,
            "arguments": arguments,
        }
        return call, item
    call = _make_call(call_id=call_id, name=name, arguments=arguments, parent_message_id=parent)
    if offer is not None and name == offer.search_tool:
        item = {
            "type": "tool_search_call",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "arguments": dict(_object(_decoded(arguments))),
        }
        return call, item
    return call, {"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments}


def _decoded(text: str) -> JSONValue:
    try:
        value: JSONValue = json.loads(text)
    except ValueError:
        return None
    return value


def _native_view(request: TurnRequest, offer: DeferredTools) -> dict[str, JSONValue]:
    """What a provider with native tool search shows the model for ``request``.

    The declared function tools, the deferred catalogue's groups, and the catalogue
    tools the searches so far loaded (their definitions are in the context from then on).
    """
    loaded = loaded_before(request.history)
    return {
        "tools": [tool.name for tool in declared_tools(request, offer)],
        "search_tool": offer.search_tool,
        "deferred_groups": list(offer.groups),
        "deferred_tools": len(offer.tools),
        "loaded": [tool.name for tool in offer.tools if tool.tool_id in loaded],
    }


def _output_text(output: object, request: TurnRequest) -> str:
    data = output if isinstance(output, Mapping) else dump(output)
    schema = request.output_schema
    if schema is not None and schema.wrapped and isinstance(data, list):
        data = {"items": data}
    return json.dumps(data)


def _message_text(items: list[Mapping[str, JSONValue]]) -> str:
    texts: list[str] = []
    for item in items:
        content = item.get("content")
        if item.get("type") == "message" and isinstance(content, list):
            texts.extend(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, Mapping) and part.get("type") == "output_text"
            )
    return "".join(texts)


class _UsageEstimator:
    """Input tokens per request, counted once per history item (linear in the rounds).

    Each request repeats the whole history; remembering the running total of the
    current evaluation means each new round only counts what it added.
    """

    def __init__(self) -> None:
        self._key: tuple[str, str] | None = None
        self._counted = 0
        self._total = 0

    def input_tokens(self, request: TurnRequest) -> int:
        history = request.history
        head = history[0] if history else None
        prompt_text = head.text if isinstance(head, PromptMessage) else request.rendered.text
        key = (request.evaluation_id, prompt_text)
        if key != self._key or len(history) < self._counted:
            self._key, self._counted, self._total = key, 1, 0
        for item in history[self._counted :]:
            self._total += _estimate(_history_text(item))
        self._counted = max(len(history), 1)
        return _estimate(prompt_text) + self._total


def _history_text(item: object) -> str:
    if isinstance(item, ToolOutputMessage):
        return item.content
    if isinstance(item, FeedbackMessage):
        return item.text
    if isinstance(item, AssistantMessage):
        arguments = [call.arguments for call in item.turn.tool_calls]
        return item.turn.text + "".join(
            a if isinstance(a, str) else json.dumps(a) for a in arguments
        )
    return ""


def _estimate(text: str) -> int:
    return math.ceil(len(text) / 4)
