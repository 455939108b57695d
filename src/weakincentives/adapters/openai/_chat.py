"""Chat Completions (``client.chat.completions.create``) as a provider, on the ``openai`` SDK.

The API every OpenAI-compatible server speaks: vLLM, Ollama, llama.cpp's server, LM
Studio. Hosted tools are not part of it, so none are offered (a prompt with one fails
before anything is sent, naming the kind and this adapter).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar, get_args

from weakincentives.adapters._factory import adapter_factory
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    MergedOption,
    SdkClients,
    merged_options,
    reserved_options,
)
from weakincentives.adapters._sdk_provider import SdkProvider, option_choice
from weakincentives.adapters._sdk_senders import RawPost
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.openai._chat_stream import ChatStreamReader
from weakincentives.adapters.openai._chat_wire import (
    ChatWireOptions,
    ResponseFormatMode,
    TokenCapField,
    build_chat_body,
    parse_chat_body,
)
from weakincentives.adapters.openai._responses import OPENAI_CLIENTS, OpenAIClient
from weakincentives.serde import JSONValue

__all__ = ["ChatCompletions", "ChatCompletionsAdapter"]

type Body = dict[str, JSONValue]


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatCompletions(SdkProvider[OpenAIClient]):
    """Chat Completions, with OpenAI or any compatible server.

    Point ``base_url`` at a local server (``http://localhost:8080/v1`` for llama.cpp,
    ``http://localhost:11434/v1`` for Ollama, ``http://localhost:8000/v1`` for vLLM,
    ``http://localhost:1234/v1`` for LM Studio). ``request_options``' ``tools`` and
    ``stream_options`` are merged with what the prompt needs. The options below are
    for servers that behave differently from OpenAI.
    """

    response_format: ResponseFormatMode = "json_schema"
    """``json_schema`` sends the output schema, ``json_object`` only asks for JSON,
    ``none`` sends neither; the answer shape is in the prompt text either way, and the
    answer is always validated."""
    token_cap_field: TokenCapField = "max_completion_tokens"
    """``max_tokens`` for servers that do not read ``max_completion_tokens``."""

    CLIENTS: ClassVar[SdkClients] = replace(
        OPENAI_CLIENTS, key_variable="OPENAI_API_KEY (local servers accept any value)"
    )
    ENDPOINT: ClassVar[str] = "chat.completions"
    RAW_POST: ClassVar[RawPost | None] = RawPost(
        path="/chat/completions", options={"security": {"bearer_auth": True}}
    )
    ADAPTER_NAME: ClassVar[str] = "openai-chat"
    RESERVED_OPTIONS: ClassVar[Mapping[str, str]] = reserved_options(
        "messages",
        n="must stay 1: the provider reads one choice",
        response_format="follows the prompt's output type (pass response_format= instead)",
    )
    MERGED_OPTIONS: ClassVar[tuple[MergedOption, ...]] = merged_options(
        objects={"stream_options": "include_usage is added to it when streaming"}
    )

    def build_request(self, turn: TurnRequest) -> Body:
        """The JSON body of ``POST /chat/completions`` for ``turn`` (``create``'s fields)."""
        body = build_chat_body(turn, self._wire)
        if self.stream:
            # Without include_usage a streamed reply reports no token counts at all.
            extra = self.request_options.get("stream_options")
            body["stream_options"] = {
                **(extra if isinstance(extra, dict) else {}),
                "include_usage": True,
            }
        return body

    def read_turn(self, reply: Body, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in a ``chat.completion`` body."""
        return parse_chat_body(reply, request=request, turn=turn)

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Body:
        """One ``POST /chat/completions`` (posted as built), streamed when the provider streams."""
        return await self._send(request, attempt, on_text, ChatStreamReader)

    @property
    def _wire(self) -> ChatWireOptions:
        return ChatWireOptions(
            model=self.model,
            options=self.request_options,
            response_format=self.response_format,
            token_cap_field=self.token_cap_field,
        )

    def _check_options(self) -> None:
        owner = type(self)
        option_choice(owner, "response_format", self.response_format, _choices(ResponseFormatMode))
        option_choice(owner, "token_cap_field", self.token_cap_field, _choices(TokenCapField))


def _choices(alias: Any) -> tuple[str, ...]:
    choices: tuple[str, ...] = get_args(alias.__value__)
    return choices


ChatCompletionsAdapter = adapter_factory(ChatCompletions, name="ChatCompletionsAdapter")
