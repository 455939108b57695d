"""The Anthropic Messages API adapter, on the official ``anthropic`` SDK, sync or async.

The SDK is imported when an adapter is created, not when this module is, so the
package works without the ``anthropic`` extra.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
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
from weakincentives.adapters._sdk_transport import timed_out
from weakincentives.adapters._settings import LoopSettings
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.adapters.anthropic._codecs import default_anthropic_codecs
from weakincentives.adapters.anthropic._stream import MessagesStreamReader
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

__all__ = ["AnthropicAdapter", "AnthropicMessagesProvider"]

type Body = dict[str, JSONValue]
type Reply = tuple[Body, ...]

ANTHROPIC_CLIENTS = SdkClientKind(
    module="anthropic",
    sync_client="Anthropic",
    async_client="AsyncAnthropic",
    error="AnthropicError",
    provider="Anthropic",
    key_variable="ANTHROPIC_API_KEY",
)
"""The ``anthropic`` SDK's clients."""

MAX_CONTINUATIONS = 8
"""How often one turn may be continued after ``pause_turn`` before it is an error."""

_RESERVED_OPTIONS: dict[str, str] = {
    "model": "is set by the adapter (pass model=)",
    "messages": "is built from the prompt",
    "timeout": "is a client setting (pass timeout=, or evaluate(deadline=))",
    "stream": "is an adapter setting (pass stream=True)",
}
_MERGED_OPTIONS = (
    MergedOption(
        key="tools", expected=list, why="must be a list (it is added to the prompt's tools)"
    ),
    MergedOption(
        key="output_config",
        expected=dict,
        why="must be an object (the output format is added to it)",
    ),
)


class AnthropicMessagesProvider(
    SdkProvider[Body, Reply, "anthropic.Anthropic | anthropic.AsyncAnthropic"]
):
    """The Messages API as a provider for the shared loop.

    ``send`` continues a turn the API paused (``stop_reason: "pause_turn"``, which a
    long server-tool turn may end with) by sending the paused content back as the
    assistant's message, as Anthropic documents, until the turn ends; the loop sees one
    reply per turn. Streamed text of every part reaches ``on_text`` in order.
    """

    def __init__(
        self,
        *,
        sdk: ModuleType,
        client: anthropic.Anthropic | anthropic.AsyncAnthropic,
        wire: MessagesWireOptions,
        codecs: Mapping[str, HostedToolCodec[Any, Any]],
        stream: bool,
    ) -> None:
        super().__init__(
            name="anthropic",
            model=wire.model,
            kind=ANTHROPIC_CLIENTS,
            sdk=sdk,
            client=client,
            endpoint=lambda attempts: attempts.messages,
            codecs=codecs,
            stream=stream,
        )
        self._wire = wire

    def build_request(self, turn: TurnRequest) -> Body:
        """The keyword arguments of ``client.messages.create`` for ``turn``."""
        return build_messages_body(turn, self._wire)

    def read_turn(self, reply: Reply, request: Body, turn: TurnRequest) -> ModelTurn:
        """The turn in the reply's messages."""
        return parse_messages_reply(reply, request=request, turn=turn)

    async def send(self, request: Body, attempt: Attempt, on_text: TextSink) -> Reply:
        """``messages.create``, repeated while the API pauses the turn; one attempt's time."""
        reader = _messages_reader if self._stream else None
        ends = None if attempt.timeout is None else time.monotonic() + attempt.timeout
        replies: list[Body] = []
        body = request
        while True:
            left = None if ends is None else ends - time.monotonic()
            if left is not None and left <= 0:
                raise timed_out(attempt.prompt_name)
            reply = await self._transport.send(
                body, replace(attempt, timeout=left), on_text, reader
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


def _messages_reader(on_text: TextSink, prompt_name: str) -> MessagesStreamReader:
    return MessagesStreamReader(on_text, prompt_name=prompt_name)


class AnthropicAdapter(SdkAdapter[Body, Reply, "anthropic.Anthropic | anthropic.AsyncAnthropic"]):
    """Evaluate prompts with Anthropic's Messages API (``client.messages.create``).

    Pass a ready ``client`` (``anthropic.Anthropic`` or ``anthropic.AsyncAnthropic``;
    both work with ``evaluate`` and ``evaluate_async``), or let one be built from
    ``api_key`` (default: ``ANTHROPIC_API_KEY``), ``base_url``, ``timeout`` and
    ``max_retries``. The client's ``max_retries`` is honoured by the loop. ``stream=True``
    streams the text as ``TextDelta`` events. ``request_options`` are added to every
    request (for example ``{"temperature": 0}`` or ``{"system": "..."}``); their
    ``tools`` and ``output_config`` are merged with what the prompt needs.
    ``output_format="prompt"`` never sends ``output_config.format`` (for models without
    JSON outputs); the answer shape is in the prompt text either way.
    """

    def __init__(
        self,
        *,
        model: str,
        client: anthropic.Anthropic | anthropic.AsyncAnthropic | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        stream: bool = False,
        request_options: Mapping[str, JSONValue] | None = None,
        output_format: OutputFormatMode = "json_schema",
        hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] | None = None,
        settings: LoopSettings | None = None,
        max_rounds: int | None = None,
        clock: Callable[[], datetime] | None = None,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        check_model(model, adapter_type=AnthropicAdapter)
        if output_format not in ("json_schema", "prompt"):
            raise ConfigValidationError(
                "AnthropicAdapter output_format must be 'json_schema' or 'prompt', got "
                f"{output_format!r}",
                config_type=AnthropicAdapter,
                field_name="output_format",
                value=output_format,
            )
        options = dict(request_options or {})
        check_request_options(
            options,
            adapter_type=AnthropicAdapter,
            reserved=_RESERVED_OPTIONS,
            merged=_MERGED_OPTIONS,
        )
        sdk, resolved = resolve_client(
            ANTHROPIC_CLIENTS,
            client,
            ClientSettings(
                api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
            ),
            adapter_type=AnthropicAdapter,
        )
        if client is None:
            _check_credentials(resolved)
        provider = AnthropicMessagesProvider(
            sdk=sdk,
            client=resolved,
            wire=MessagesWireOptions(model=model, options=options, output_format=output_format),
            codecs=default_anthropic_codecs() if hosted_tool_codecs is None else hosted_tool_codecs,
            stream=bool(stream),
        )
        super().__init__(
            provider, settings=settings, max_rounds=max_rounds, clock=clock, id_factory=id_factory
        )


def _check_credentials(client: Any) -> None:
    """Refuse a built client with no way to authenticate.

    The SDK builds such a client without complaint and only fails, with a bare
    ``TypeError``, when the first request is made.
    """
    if all(
        getattr(client, name, None) is None for name in ("api_key", "auth_token", "credentials")
    ):
        raise ConfigValidationError(
            "could not create the Anthropic client: no credentials were found; pass api_key= "
            "or set ANTHROPIC_API_KEY",
            config_type=AnthropicAdapter,
            field_name="api_key",
        )
