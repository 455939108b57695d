"""The Chat Completions adapter (``client.chat.completions.create``) on the ``openai`` SDK.

The API every OpenAI-compatible server speaks: vLLM, Ollama, llama.cpp's server, LM
Studio. Hosted tools are not part of it, so none are offered (a prompt with one fails
before anything is sent, naming the kind and this adapter).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, get_args

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    ClientSettings,
    MergedOption,
    check_model,
    check_request_options,
)
from weakincentives.adapters._sdk_provider import SdkAdapter, SdkProvider, resolve_client
from weakincentives.adapters._settings import LoopSettings
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.openai._adapter import OPENAI_CLIENTS
from weakincentives.adapters.openai._chat_stream import ChatStreamReader
from weakincentives.adapters.openai._chat_wire import (
    ChatWireOptions,
    ResponseFormatMode,
    TokenCapField,
    build_chat_body,
    parse_chat_body,
)
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    import openai

__all__ = ["ChatCompletionsAdapter", "ChatCompletionsProvider"]

type Body = dict[str, JSONValue]

_CHAT_CLIENTS = replace(
    OPENAI_CLIENTS, key_variable="OPENAI_API_KEY (local servers accept any value)"
)

_RESERVED_OPTIONS: dict[str, str] = {
    "model": "is set by the adapter (pass model=)",
    "messages": "is built from the prompt",
    "timeout": "is a client setting (pass timeout=, or evaluate(deadline=))",
    "stream": "is an adapter setting (pass stream=True)",
    "n": "must stay 1: the adapter reads one choice",
    "response_format": "follows the prompt's output type (pass response_format= instead)",
}
_MERGED_OPTIONS = (
    MergedOption(
        key="tools", expected=list, why="must be a list (it is added to the prompt's tools)"
    ),
    MergedOption(
        key="stream_options",
        expected=dict,
        why="must be an object (include_usage is added to it when streaming)",
    ),
)


class ChatCompletionsProvider(SdkProvider[Body, Body, "openai.OpenAI | openai.AsyncOpenAI"]):
    """Chat Completions as a provider for the shared loop (see ``SdkTransport`` for sending)."""

    def __init__(
        self,
        *,
        sdk: ModuleType,
        client: openai.OpenAI | openai.AsyncOpenAI,
        wire: ChatWireOptions,
        codecs: Mapping[str, HostedToolCodec[Any, Any]],
        stream: bool,
    ) -> None:
        super().__init__(
            name="openai-chat",
            model=wire.model,
            kind=OPENAI_CLIENTS,
            sdk=sdk,
            client=client,
            endpoint=lambda attempts: attempts.chat.completions,
            codecs=codecs,
            stream=stream,
        )
        self._wire = wire

    def build_request(self, turn: TurnRequest) -> Body:
        """The keyword arguments of ``client.chat.completions.create`` for ``turn``."""
        body = build_chat_body(turn, self._wire)
        if self._stream:
            # Without include_usage a streamed reply reports no token counts at all.
            extra = self._wire.options.get("stream_options")
            body["stream_options"] = {
                **(extra if isinstance(extra, dict) else {}),
                "include_usage": True,
            }
        return body

    def read_turn(self, reply: Body, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in a ``chat.completion`` body."""
        return parse_chat_body(reply, request=request, turn=turn, wire=self._wire)

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Body:
        """One ``chat.completions.create`` call, streamed when the adapter streams."""
        reader = _chat_reader if self._stream else None
        return await self._transport.send(request, attempt, on_text, reader)


def _chat_reader(on_text: TextSink, prompt_name: str) -> ChatStreamReader:
    return ChatStreamReader(on_text, prompt_name=prompt_name)


class ChatCompletionsAdapter(SdkAdapter[Body, Body, "openai.OpenAI | openai.AsyncOpenAI"]):
    """Evaluate prompts over Chat Completions, with OpenAI or any compatible server.

    Point ``base_url`` at a local server (``http://localhost:8080/v1`` for llama.cpp,
    ``http://localhost:11434/v1`` for Ollama, ``http://localhost:8000/v1`` for vLLM,
    ``http://localhost:1234/v1`` for LM Studio). Client arguments, ``stream`` and
    ``request_options`` work as for :class:`OpenAIAdapter`. For servers that behave
    differently from OpenAI:

    - ``response_format``: ``"json_schema"`` (default) sends the output schema,
      ``"json_object"`` only asks for JSON, ``"none"`` sends neither; the answer shape
      is in the prompt text either way, and the answer is always validated.
    - ``token_cap_field``: ``"max_tokens"`` for servers that do not read
      ``max_completion_tokens``.
    - ``recover_text_tool_calls``: read tool calls a model wrote as JSON text.
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
        response_format: ResponseFormatMode = "json_schema",
        token_cap_field: TokenCapField = "max_completion_tokens",
        recover_text_tool_calls: bool = False,
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] | None = None,
        settings: LoopSettings | None = None,
        max_rounds: int | None = None,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        check_model(model, adapter_type=ChatCompletionsAdapter)
        _check_choice("response_format", response_format, ResponseFormatMode)
        _check_choice("token_cap_field", token_cap_field, TokenCapField)
        options = dict(request_options or {})
        check_request_options(
            options,
            adapter_type=ChatCompletionsAdapter,
            reserved=_RESERVED_OPTIONS,
            merged=_MERGED_OPTIONS,
        )
        sdk, resolved = resolve_client(
            _CHAT_CLIENTS,
            client,
            ClientSettings(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            ),
            adapter_type=ChatCompletionsAdapter,
        )
        provider = ChatCompletionsProvider(
            sdk=sdk,
            client=resolved,
            wire=ChatWireOptions(
                model=model,
                options=options,
                response_format=response_format,
                token_cap_field=token_cap_field,
                recover_text_tool_calls=bool(recover_text_tool_calls),
            ),
            codecs={} if hosted_tool_codecs is None else hosted_tool_codecs,
            stream=bool(stream),
        )
        super().__init__(
            provider, settings=settings, max_rounds=max_rounds, clock=clock, id_factory=id_factory
        )


def _check_choice(field_name: str, value: object, choices: Any) -> None:
    allowed: tuple[str, ...] = get_args(choices.__value__)
    if value not in allowed:
        raise ConfigValidationError(
            f"ChatCompletionsAdapter {field_name} must be one of "
            f"{', '.join(repr(choice) for choice in allowed)}, got {value!r}",
            config_type=ChatCompletionsAdapter,
            field_name=field_name,
            value=value,
        )
