"""A deterministic adapter with no network: scripted turns, a responder, or call-every-tool.

It is product code, not a test double: examples and the demo run on it, and it goes
through exactly the same loop, events and failure semantics as the OpenAI adapter.
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
from datetime import datetime
from typing import Any

from weakincentives._direct import direct_constructor
from weakincentives.adapters._adapter import Adapter, merged_settings
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._settings import LoopSettings
from weakincentives.adapters._turns import (
    AssistantMessage,
    FeedbackMessage,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.runtime import TokenUsage, ToolCall
from weakincentives.serde import JSONValue, dump, sample

__all__ = ["OfflineAdapter", "OfflineProvider", "Responder", "ScriptedCall", "ScriptedTurn"]


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
    tool_calls: tuple[ScriptedCall, ...] = ()
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


class OfflineProvider:
    """The offline model as a provider: its "wire" is the turn itself."""

    def __init__(
        self,
        script: Sequence[ScriptedTurn],
        *,
        responder: Responder | None,
        call_every_tool: bool,
        seed: int,
        name: str,
        stream_chunk_size: int | None,
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]],
    ) -> None:
        self._script = list(script)
        self._position = 0
        self._responder = responder
        self._call_every_tool = call_every_tool
        self._seed = seed
        self._name = name
        self._chunk = stream_chunk_size
        self._codecs = dict(hosted_tool_codecs)
        self._requests: list[TurnRequest] = []
        self._usage = _UsageEstimator()

    @property
    def name(self) -> str:
        """Adapter name used in events."""
        return self._name

    @property
    def model(self) -> str | None:
        """The offline model has no name."""
        return None

    @property
    def max_retries(self) -> int:
        """Scripted turns never fail transiently."""
        return 0

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs for hosted-tool fixtures."""
        return self._codecs

    @property
    def requests(self) -> tuple[TurnRequest, ...]:
        """Every request sent so far, oldest first."""
        return tuple(self._requests)

    @property
    def remaining_turns(self) -> int:
        """Scripted turns not yet played."""
        return len(self._script) - self._position

    def build_request(self, turn: TurnRequest) -> TurnRequest:
        """The request is the turn request itself."""
        return turn

    async def send(self, request: TurnRequest, attempt: Attempt, on_text: TextSink) -> ModelTurn:
        """Produce the next turn, streaming its text in chunks when asked to."""
        self._requests.append(request)
        scripted = self._next(request)
        if inspect.isawaitable(scripted):
            scripted = await scripted
        if not isinstance(scripted, ScriptedTurn):
            raise PromptEvaluationError(
                f"the offline responder returned {type(scripted).__name__}, not a ScriptedTurn",
                prompt_name=request.prompt_name,
                phase="response",
            )
        turn = _to_model_turn(scripted, request, self._usage)
        if self._chunk is not None:
            for start in range(0, len(turn.text), self._chunk):
                on_text(turn.text[start : start + self._chunk])
                await asyncio.sleep(0)  # let the loop run between chunks, as a real stream does
        return turn

    def read_turn(self, reply: ModelTurn, request: TurnRequest, turn: TurnRequest) -> ModelTurn:
        """The reply already is the turn."""
        return reply

    def _next(self, request: TurnRequest) -> ScriptedTurn | Awaitable[ScriptedTurn]:
        if self._responder is not None:
            return self._responder(request)
        if self._call_every_tool:
            return self._exercise(request)
        if self._position >= len(self._script):
            raise PromptEvaluationError(
                f"offline script exhausted after {len(self._script)} turns",
                prompt_name=request.prompt_name,
                phase="response",
            )
        turn = self._script[self._position]
        self._position += 1
        return turn

    def _exercise(self, request: TurnRequest) -> ScriptedTurn:
        if request.round == 1 and request.rendered.tools:
            return ScriptedTurn(
                tool_calls=tuple(
                    ScriptedCall(
                        name=tool.name,
                        arguments=_object(sample(tool.spec.parameters_schema, seed=self._seed)),
                    )
                    for tool in request.rendered.tools
                )
            )
        if request.output_schema is not None:
            answer = sample(request.output_schema.schema, seed=self._seed)
            return ScriptedTurn(text=json.dumps(answer))
        outputs = [item for item in request.history if isinstance(item, ToolOutputMessage)]
        return ScriptedTurn(text=f"Called {len(outputs)} tools.")


class OfflineAdapter(Adapter[TurnRequest, ModelTurn]):
    """Evaluate prompts without a model.

    Give it a ``script`` (turns played in order across evaluations), a ``responder``
    function (sync or async), or ``call_every_tool=True`` to call each available tool
    once with schema-valid arguments and then answer (with a schema-valid structured
    output when the prompt declares one). ``stream_chunk_size`` streams each turn's text
    in chunks of that many characters, as a streaming provider would. ``requests``
    records every request, so tests can check what the model was shown.
    """

    def __init__(
        self,
        script: Sequence[ScriptedTurn] = (),
        *,
        responder: Responder | None = None,
        call_every_tool: bool = False,
        seed: int = 0,
        name: str = "offline",
        stream_chunk_size: int | None = None,
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] | None = None,
        settings: LoopSettings | None = None,
        max_rounds: int | None = None,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        modes = sum((bool(script), responder is not None, call_every_tool))
        if modes != 1:
            raise ConfigValidationError(
                "OfflineAdapter needs exactly one of: script=..., responder=..., "
                "call_every_tool=True",
                config_type=OfflineAdapter,
            )
        if stream_chunk_size is not None and (
            not isinstance(stream_chunk_size, int) or stream_chunk_size < 1
        ):
            raise ConfigValidationError(
                f"stream_chunk_size must be a positive integer, got {stream_chunk_size!r}",
                config_type=OfflineAdapter,
                field_name="stream_chunk_size",
                value=stream_chunk_size,
            )
        self._offline = OfflineProvider(
            script,
            responder=responder,
            call_every_tool=call_every_tool,
            seed=seed,
            name=name,
            stream_chunk_size=stream_chunk_size,
            hosted_tool_codecs={} if hosted_tool_codecs is None else hosted_tool_codecs,
        )
        super().__init__(
            self._offline,
            settings=merged_settings(
                settings, max_rounds=max_rounds, clock=clock, id_factory=id_factory
            ),
        )

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs for hosted-tool fixtures; none unless given.

        ``default_openai_codecs()`` reads the Responses-API-shaped items that
        ``ScriptedTurn.raw_items`` carries.
        """
        return self._offline.hosted_tool_codecs

    @property
    def requests(self) -> tuple[TurnRequest, ...]:
        """Every request sent so far, oldest first."""
        return self._offline.requests

    @property
    def remaining_turns(self) -> int:
        """Scripted turns not yet played."""
        return self._offline.remaining_turns


def _object(value: JSONValue) -> Mapping[str, JSONValue]:
    return value if isinstance(value, dict) else {}


# A scripted turn may hold hundreds of calls: skip the frozen __init__ of each.
_make_call = direct_constructor(ToolCall)


def _to_model_turn(
    scripted: ScriptedTurn, request: TurnRequest, estimator: _UsageEstimator
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
    for index, call in enumerate(scripted.tool_calls):
        call_id = call.call_id or f"call_{request.round}_{index}"
        arguments = (
            call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        )
        calls.append(
            _make_call(
                call_id=call_id,
                name=call.name,
                arguments=arguments,
                parent_message_id=f"offline_{request.round}",
            )
        )
        items.append(
            {"type": "function_call", "call_id": call_id, "name": call.name, "arguments": arguments}
        )
    usage = scripted.usage or TokenUsage(
        input_tokens=estimator.input_tokens(request),
        output_tokens=_estimate(text)
        + sum(_estimate(call.arguments) for call in calls if isinstance(call.arguments, str)),
    )
    return ModelTurn(
        text=text,
        tool_calls=tuple(calls),
        raw_items=tuple(items),
        usage=usage,
        response_id=f"offline_{request.round}",
        refusal=scripted.refusal,
    )


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
