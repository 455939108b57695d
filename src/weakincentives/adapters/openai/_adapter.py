"""The OpenAI Responses API adapter, on the official ``openai`` SDK, sync or async client.

The SDK is imported when an adapter is created, not when this module is, so the
package (and the offline adapter, which reuses the OpenAI codecs) works without the
``openai`` extra.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    ClientSettings,
    MergedOption,
    check_model,
    check_request_options,
)
from weakincentives.adapters._sdk_provider import (
    SdkAdapter,
    SdkClientKind,
    SdkProvider,
    resolve_client,
)
from weakincentives.adapters._settings import LoopSettings
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.openai._codecs import default_openai_codecs
from weakincentives.adapters.openai._stream import ResponsesStreamReader
from weakincentives.adapters.openai._wire import build_request_body, parse_response_body
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    import openai

__all__ = ["OPENAI_CLIENTS", "OpenAIAdapter", "OpenAIResponsesProvider"]

type Body = dict[str, JSONValue]

OPENAI_CLIENTS = SdkClientKind(
    module="openai",
    sync_client="OpenAI",
    async_client="AsyncOpenAI",
    error="OpenAIError",
    provider="OpenAI",
    key_variable="OPENAI_API_KEY",
)
"""The ``openai`` SDK's clients, shared by the Responses and Chat Completions adapters."""


# Request options the adapter sets itself, and why a caller cannot.
_RESERVED_OPTIONS: dict[str, str] = {
    "model": "is set by the adapter (pass model=)",
    "input": "is built from the prompt",
    "timeout": "is a client setting (pass timeout=, or evaluate(deadline=))",
    "stream": "is an adapter setting (pass stream=True)",
}
# Request options the adapter extends, and the JSON type they must have.
_MERGED_OPTIONS = (
    MergedOption(
        key="tools", expected=list, why="must be a list (it is added to the prompt's tools)"
    ),
    MergedOption(
        key="include",
        expected=list,
        why="must be a list (it is added to the hosted tools' includes)",
    ),
    MergedOption(
        key="text", expected=dict, why="must be an object (the output format is added to it)"
    ),
)


class OpenAIResponsesProvider(SdkProvider[Body, Body, "openai.OpenAI | openai.AsyncOpenAI"]):
    """The Responses API as a provider for the shared loop.

    Every attempt goes out with the SDK's own retries switched off (the loop retries,
    inside the deadline) and with a timeout no longer than the time the loop grants.
    The reply is read as raw JSON, not through the SDK's models: the SDK builds models
    without validation, so an item type it does not know yet would come back as the
    wrong class; the raw JSON is exactly what the provider said, which is what codecs
    parse, what the next round replays and what errors carry.
    """

    def __init__(
        self,
        *,
        sdk: ModuleType,
        client: openai.OpenAI | openai.AsyncOpenAI,
        model: str,
        options: Mapping[str, JSONValue],
        codecs: Mapping[str, HostedToolCodec[Any, Any]],
        stream: bool,
    ) -> None:
        super().__init__(
            name="openai",
            model=model,
            kind=OPENAI_CLIENTS,
            sdk=sdk,
            client=client,
            endpoint=lambda attempts: attempts.responses,
            codecs=codecs,
            stream=stream,
        )
        self._options = dict(options)

    def build_request(self, turn: TurnRequest) -> Body:
        """The keyword arguments of ``client.responses.create`` for ``turn``."""
        return build_request_body(turn, model=self._model, options=self._options)

    def read_turn(self, reply: Body, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in a Responses API body."""
        return parse_response_body(reply, request=request, prompt_name=turn.prompt_name)

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Body:
        """One ``responses.create`` call, streamed when the adapter streams."""
        reader = _responses_reader if self._stream else None
        return await self._transport.send(request, attempt, on_text, reader)


def _responses_reader(on_text: TextSink, prompt_name: str) -> ResponsesStreamReader:
    return ResponsesStreamReader(on_text, prompt_name=prompt_name)


class OpenAIAdapter(SdkAdapter[Body, Body, "openai.OpenAI | openai.AsyncOpenAI"]):
    """Evaluate prompts with OpenAI's Responses API (``client.responses.create``).

    Any Responses-compatible server works through ``base_url``. Pass a ready
    ``client`` (``openai.OpenAI`` or ``openai.AsyncOpenAI``; both work with ``evaluate``
    and ``evaluate_async``) to control everything yourself; otherwise a sync client is
    built from ``api_key`` (default: ``OPENAI_API_KEY``), ``base_url``, ``timeout`` and
    ``max_retries``. The client's ``max_retries`` is honoured by the loop, which
    retries inside the evaluation's deadline. ``stream=True`` streams the model's text
    as ``TextDelta`` events. ``request_options`` are added to every request (for
    example ``{"temperature": 0}``); their ``tools``, ``include`` and ``text`` are
    merged with what the prompt needs, and the keys the adapter owns (``model``,
    ``input``, ``timeout``, ``stream``) are refused at construction.
    """

    def __init__(
        self,
        *,
        model: str,
        client: openai.OpenAI | openai.AsyncOpenAI | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        stream: bool = False,
        request_options: Mapping[str, JSONValue] | None = None,
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] | None = None,
        settings: LoopSettings | None = None,
        max_rounds: int | None = None,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        check_model(model, adapter_type=OpenAIAdapter)
        options = dict(request_options or {})
        check_request_options(
            options,
            adapter_type=OpenAIAdapter,
            reserved=_RESERVED_OPTIONS,
            merged=_MERGED_OPTIONS,
        )
        sdk, resolved = resolve_client(
            OPENAI_CLIENTS,
            client,
            ClientSettings(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            ),
            adapter_type=OpenAIAdapter,
        )
        provider = OpenAIResponsesProvider(
            sdk=sdk,
            client=resolved,
            model=model,
            options=options,
            codecs=default_openai_codecs() if hosted_tool_codecs is None else hosted_tool_codecs,
            stream=bool(stream),
        )
        super().__init__(
            provider, settings=settings, max_rounds=max_rounds, clock=clock, id_factory=id_factory
        )
