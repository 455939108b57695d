"""What every adapter on an official SDK shares: its client, how it is built, its codecs.

The OpenAI Responses, Chat Completions and Anthropic Messages adapters differ in their
wire formats (``build_request``, ``read_turn``) and constructor options; everything
around the client is the same and lives here: resolving the ``client=`` argument (or
building one from ``api_key``, ``base_url``, ``timeout``, ``max_retries``), sending
through :class:`SdkTransport`, and the properties both the provider and the adapter
expose.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Any

from weakincentives.adapters._adapter import Adapter, merged_settings
from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    ClientSettings,
    build_client,
    check_client,
    require_sdk,
)
from weakincentives.adapters._sdk_transport import SdkTransport
from weakincentives.adapters._settings import LoopSettings
from weakincentives.adapters._turns import ModelTurn, TurnRequest

__all__ = ["SdkAdapter", "SdkClientKind", "SdkProvider", "resolve_client"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkClientKind:
    """Which SDK an adapter runs on and how its clients are named and built."""

    module: str
    """The SDK's import name, which is also the extra that installs it."""
    sync_client: str
    async_client: str
    error: str
    """The SDK's base exception, raised when a client cannot be built."""
    provider: str
    """The provider's name in messages."""
    key_variable: str
    """Where the SDK reads its key from, as told to the user when there is none."""


def resolve_client(
    kind: SdkClientKind,
    client: object | None,
    settings: ClientSettings,
    *,
    adapter_type: type[object],
) -> tuple[ModuleType, Any]:
    """The SDK module and the client to use: ``client`` once checked, else a new sync one.

    Raises ``ConfigValidationError`` when the SDK is missing, ``client`` is not one of
    the SDK's clients, or the SDK cannot build a client from ``settings``.
    """
    sdk = require_sdk(kind.module, adapter=adapter_type.__name__, extra=kind.module)
    check_client(
        client,
        accepted=(getattr(sdk, kind.sync_client), getattr(sdk, kind.async_client)),
        names=f"{kind.module}.{kind.sync_client} or {kind.module}.{kind.async_client}",
        adapter_type=adapter_type,
    )
    if client is not None:
        return sdk, client
    built = build_client(
        getattr(sdk, kind.sync_client),
        getattr(sdk, kind.error),
        settings,
        adapter_type=adapter_type,
        provider=kind.provider,
        key_variable=kind.key_variable,
    )
    return sdk, built


class SdkProvider[RequestT, ReplyT, ClientT](ABC):
    """The provider half every SDK adapter shares; subclasses add the wire format.

    Subclasses send through ``self._transport`` and read ``self._stream``.
    """

    def __init__(
        self,
        *,
        name: str,
        model: str,
        kind: SdkClientKind,
        sdk: ModuleType,
        client: ClientT,
        endpoint: Callable[[Any], Any],
        codecs: Mapping[str, HostedToolCodec[Any, Any]],
        stream: bool,
    ) -> None:
        self._name = name
        self._model = model
        self._client = client
        self._transport = SdkTransport(
            sdk=sdk,
            client=client,
            is_async=isinstance(client, getattr(sdk, kind.async_client)),
            endpoint=endpoint,
        )
        self._codecs = dict(codecs)
        self._stream = stream

    @property
    def name(self) -> str:
        """Adapter name used in events and errors."""
        return self._name

    @property
    def model(self) -> str:
        """The model every request asks for."""
        return self._model

    @property
    def max_retries(self) -> int:
        """The client's ``max_retries``: how often the loop resends a retryable failure."""
        return self._transport.max_retries

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs by hosted-tool kind."""
        return self._codecs

    @property
    def client(self) -> ClientT:
        """The SDK client as given (or built)."""
        return self._client

    @abstractmethod
    def build_request(self, turn: TurnRequest) -> RequestT:
        """The SDK call's keyword arguments for ``turn``."""

    @abstractmethod
    async def send(self, request: RequestT, attempt: Attempt, on_text: TextSink) -> ReplyT:
        """One attempt of the SDK call (through ``self._transport``)."""

    @abstractmethod
    def read_turn(self, reply: ReplyT, request: RequestT, turn: TurnRequest) -> ModelTurn:
        """The model's turn in ``reply``."""


class SdkAdapter[RequestT, ReplyT, ClientT](Adapter[RequestT, ReplyT]):
    """An :class:`Adapter` over an :class:`SdkProvider`, exposing its client and codecs."""

    def __init__(
        self,
        provider: SdkProvider[RequestT, ReplyT, ClientT],
        *,
        settings: LoopSettings | None,
        max_rounds: int | None,
        clock: Callable[[], datetime] | None,
        id_factory: Callable[[], str] | None,
    ) -> None:
        self._sdk_provider = provider
        super().__init__(
            provider,
            settings=merged_settings(
                settings, max_rounds=max_rounds, clock=clock, id_factory=id_factory
            ),
        )

    @property
    def model(self) -> str:
        """The model every request asks for."""
        return self._sdk_provider.model

    @property
    def client(self) -> ClientT:
        """The SDK client (for tracing or nested use by tools)."""
        return self._sdk_provider.client

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs by hosted-tool kind; extend by passing ``hosted_tool_codecs=``."""
        return self._sdk_provider.hosted_tool_codecs
