"""Anthropic's Messages API as a provider, on the official ``anthropic`` SDK, sync or async.

The SDK is imported when a provider is created, not when this module is, so the
package works without the ``anthropic`` extra.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from weakincentives.adapters._factory import adapter_factory
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._native_search import native_offer
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    MergedOption,
    SdkClients,
    merged_options,
    reserved_options,
)
from weakincentives.adapters._sdk_provider import SdkProvider, option_choice
from weakincentives.adapters._sdk_transport import timed_out
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.anthropic._codecs import default_anthropic_codecs
from weakincentives.adapters.anthropic._stream import MessagesStreamReader
from weakincentives.adapters.anthropic._tool_search import MessagesToolSearch
from weakincentives.adapters.anthropic._wire import (
    MessagesWireOptions,
    OutputFormatMode,
    build_messages_body,
    parse_messages_reply,
)
from weakincentives.errors import ConfigValidationError, PromptEvaluationError
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicAdapter", "AnthropicMessages"]

type Body = dict[str, JSONValue]
type Reply = tuple[Body, ...]

type AnthropicClient = anthropic.Anthropic | anthropic.AsyncAnthropic
"""Either ``anthropic`` client (evaluated only by type checkers: the SDK is optional)."""

MAX_CONTINUATIONS = 8
"""How often one turn may be continued after ``pause_turn`` before it is an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AnthropicMessages(SdkProvider[AnthropicClient]):
    """Anthropic's Messages API (``client.messages.create``).

    ``send`` continues a turn the API paused (``stop_reason: "pause_turn"``, which a
    long server-tool turn may end with) by sending the paused content back as the
    assistant's message, as Anthropic documents, until the turn ends; the loop sees one
    reply per turn. Streamed text of every part reaches ``on_text`` in order.
    ``request_options`` (e.g. ``{"temperature": 0}`` or ``{"system": "..."}``) have
    their ``tools`` and ``output_config`` merged with what the prompt needs.
    """

    tool_search: MessagesToolSearch = "client"
    """How a catalogue the prompt offers for deferred loading (``ToolDiscoverySection``)
    is loaded: ``client`` (our ranker answers the model's searches with tool references),
    ``bm25`` or ``regex`` (Anthropic's own tool search), ``off`` (the discovery tools)."""
    output_format: OutputFormatMode = "json_schema"
    """``prompt`` never sends ``output_config.format`` (for models without JSON outputs);
    the answer shape is in the prompt text either way."""
    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = field(
        default_factory=default_anthropic_codecs
    )
    """Codecs by hosted-tool kind (default: web search and code execution)."""

    CLIENTS: ClassVar[SdkClients] = SdkClients.generated(module="anthropic", vendor="Anthropic")
    ENDPOINT: ClassVar[str] = "messages"
    ADAPTER_NAME: ClassVar[str] = "anthropic"
    RESERVED_OPTIONS: ClassVar[Mapping[str, str]] = reserved_options("messages")
    MERGED_OPTIONS: ClassVar[tuple[MergedOption, ...]] = merged_options(
        objects={"output_config": "the output format is added to it"}
    )

    def build_request(self, turn: TurnRequest) -> Body:
        """The keyword arguments of ``client.messages.create`` for ``turn``."""
        return build_messages_body(turn, self._wire)

    def read_turn(self, reply: Reply, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in the reply's messages."""
        offer = native_offer(turn, enabled=self.tool_search != "off")
        return parse_messages_reply(reply, request=request, turn=turn, offer=offer)

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Reply:
        """``messages.create``, repeated while the API pauses the turn; one attempt's time."""
        ends = None if attempt.timeout is None else time.monotonic() + attempt.timeout
        replies: list[Body] = []
        body = request
        while True:
            left = None if ends is None else ends - time.monotonic()
            if left is not None and left <= 0:
                raise timed_out(attempt.prompt_name)
            reply = await self._send(
                body, replace(attempt, timeout=left), on_text, MessagesStreamReader
            )
            replies.append(reply)
            if reply.get("stop_reason") != "pause_turn":
                return tuple(replies)
            if len(replies) > MAX_CONTINUATIONS:
                raise PromptEvaluationError(
                    f"the provider paused the turn {len(replies)} times; giving up after "
                    f"{MAX_CONTINUATIONS} continuations",
                    prompt_name=attempt.prompt_name,
                    phase="response",
                    provider_payload=reply,
                )
            body = _continued(request, replies)

    @property
    def _wire(self) -> MessagesWireOptions:
        return MessagesWireOptions(
            model=self.model,
            options=self.request_options,
            output_format=self.output_format,
            tool_search=self.tool_search,
        )

    def _check_options(self) -> None:
        option_choice(type(self), "output_format", self.output_format, ("json_schema", "prompt"))
        option_choice(
            type(self), "tool_search", self.tool_search, ("client", "bm25", "regex", "off")
        )

    def _check_built(self, client: Any) -> None:
        """Refuse a built client with no way to authenticate.

        The SDK builds such a client without complaint and only fails, with a bare
        ``TypeError``, when the first request is made.
        """
        if all(
            getattr(client, name, None) is None for name in ("api_key", "auth_token", "credentials")
        ):
            raise ConfigValidationError(
                "could not create the Anthropic client: no credentials were found; pass "
                "api_key= or set ANTHROPIC_API_KEY",
                config_type=type(self),
                field_name="api_key",
            )


def _continued(request: Body, replies: list[Body]) -> Body:
    """``request`` with the paused turn so far appended as the assistant's message."""
    content: list[JSONValue] = []
    for reply in replies:
        blocks = reply.get("content")
        content.extend(blocks if isinstance(blocks, list) else [])
    messages = request.get("messages")
    body: Body = {
        **request,
        "messages": [
            *(messages if isinstance(messages, list) else []),
            {"role": "assistant", "content": content},
        ],
    }
    container = replies[-1].get("container")
    if isinstance(container, dict) and isinstance(container.get("id"), str):
        body["container"] = container["id"]
    return body


AnthropicAdapter = adapter_factory(AnthropicMessages, name="AnthropicAdapter")
