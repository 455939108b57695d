"""OpenAI's Responses API as a provider, on the official ``openai`` SDK, sync or async client.

The SDK is imported when a provider is created, not when this module is, so the
package (and the offline model, which reuses the OpenAI codecs) works without the
``openai`` extra.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
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
from weakincentives.adapters._sdk_senders import RawPost
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.openai._codecs import default_openai_codecs
from weakincentives.adapters.openai._stream import ResponsesStreamReader
from weakincentives.adapters.openai._tool_search import ResponsesToolSearch
from weakincentives.adapters.openai._wire import build_request_body, parse_response_body
from weakincentives.serde import JSONValue

if TYPE_CHECKING:
    import openai

__all__ = ["OPENAI_CLIENTS", "OpenAIAdapter", "OpenAIClient", "OpenAIResponses"]

type Body = dict[str, JSONValue]

type OpenAIClient = openai.OpenAI | openai.AsyncOpenAI
"""Either ``openai`` client (evaluated only by type checkers: the SDK is optional)."""

OPENAI_CLIENTS = SdkClients.generated(module="openai", vendor="OpenAI")
"""The ``openai`` SDK's clients, shared by Responses and Chat Completions."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIResponses(SdkProvider[OpenAIClient]):
    """OpenAI's Responses API (``client.responses.create``); any compatible server via ``base_url``.

    Every attempt goes out with the SDK's own retries switched off (the loop retries,
    inside the deadline) and with a timeout no longer than the time the loop grants.
    The body, already in wire shape, is posted through the client as ``create`` posts
    it (same path, auth, headers and options) but without ``create``'s walk over it
    against the SDK's type definitions, which would cost more than the rest of the
    request and change nothing in a JSON body. The reply is read as raw JSON, not
    through the SDK's models: the SDK builds models without validation, so an item type
    it does not know yet would come back as the wrong class; the raw JSON is exactly
    what the provider said, which is what codecs parse, what the next round replays and
    what errors carry. ``request_options``' ``tools``, ``include`` and ``text`` are
    merged with what the prompt needs.

    A catalogue the prompt offers for deferred loading (``ToolDiscoverySection``) is
    declared as deferred namespaces with OpenAI's ``tool_search`` (``tool_search``:
    ``client``, searched by our ranker; ``server``, by OpenAI; ``off``, the discovery
    tools instead).
    """

    tool_search: ResponsesToolSearch = "client"
    """How a catalogue offered by the prompt is loaded: ``client``, ``server`` or ``off``."""

    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = field(
        default_factory=default_openai_codecs
    )
    """Codecs by hosted-tool kind (default: web search and code interpreter)."""

    CLIENTS: ClassVar[SdkClients] = OPENAI_CLIENTS
    ENDPOINT: ClassVar[str] = "responses"
    RAW_POST: ClassVar[RawPost | None] = RawPost(
        path="/responses", options={"security": {"bearer_auth": True}}
    )
    ADAPTER_NAME: ClassVar[str] = "openai"
    RESERVED_OPTIONS: ClassVar[Mapping[str, str]] = reserved_options("input")
    MERGED_OPTIONS: ClassVar[tuple[MergedOption, ...]] = merged_options(
        lists={"include": "it is added to the hosted tools' includes"},
        objects={"text": "the output format is added to it"},
    )

    def build_request(self, turn: TurnRequest) -> Body:
        """The JSON body of ``POST /responses`` for ``turn`` (``create``'s fields, as sent)."""
        return build_request_body(
            turn, model=self.model, options=self.request_options, tool_search=self.tool_search
        )

    def read_turn(self, reply: Body, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in a Responses API body."""
        offer = native_offer(turn, enabled=self.tool_search != "off")
        return parse_response_body(
            reply, request=request, prompt_name=turn.prompt_name, offer=offer
        )

    def _check_options(self) -> None:
        option_choice(type(self), "tool_search", self.tool_search, ("client", "server", "off"))

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Body:
        """One ``POST /responses``, streamed when the provider streams."""
        return await self._send(request, attempt, on_text, ResponsesStreamReader)


OpenAIAdapter = adapter_factory(OpenAIResponses, name="OpenAIAdapter")
