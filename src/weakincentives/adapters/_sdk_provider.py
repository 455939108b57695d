"""What every provider on an official SDK shares: its options, its client, how it sends.

``OpenAIResponses``, ``ChatCompletions`` and ``AnthropicMessages`` differ in their wire
formats (``build_request``, ``read_turn``) and in a few options of their own; the options
around the client are declared once, here, on :class:`SdkProvider`: a ready ``client``
(sync or async), or ``api_key``/``base_url``/``timeout``/``max_retries`` to build one;
``stream``; ``request_options`` merged into every request; the hosted-tool codecs.

A provider checks its options and resolves its client when it is created, so a mistake
surfaces at construction, naming the provider class. A client it built is its own and
``close()`` closes it; a client passed in belongs to the caller and is never closed.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, ClassVar

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._provider import Attempt, TextSink
from weakincentives.adapters._sdk_config import (
    MergedOption,
    SdkClients,
    build_client,
    check_client,
    check_model,
    check_request_options,
    field_error,
    require_sdk,
)
from weakincentives.adapters._sdk_senders import RawPost
from weakincentives.adapters._sdk_transport import SdkTransport, StreamReaderFactory
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue

__all__ = ["SdkProvider", "option_choice"]

type Body = dict[str, JSONValue]

_CLIENT_OPTIONS = ("api_key", "base_url", "timeout", "max_retries")


class _Connection:
    """The SDK, the client and the transport of one provider; filled in at construction."""

    __slots__ = ("client", "owned", "sdk", "transport")

    def __init__(self) -> None:
        self.sdk: ModuleType | None = None
        self.client: Any = None
        self.owned = False
        self.transport: SdkTransport | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SdkProvider[ClientT]:
    """The options every provider on an official SDK takes; subclasses add the wire format."""

    model: str
    """The model every request asks for."""
    client: ClientT | None = None
    """A ready SDK client (sync or async; both serve ``evaluate`` and ``evaluate_async``),
    used as given and never closed by the provider. Without it, a sync client is built
    from the four options below, and closed with the adapter."""
    api_key: str | None = field(default=None, repr=False)
    """Default: the SDK's environment variable (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``)."""
    base_url: str | None = None
    timeout: float | None = None
    max_retries: int | None = None
    """How often the loop resends a request after a retryable failure, inside the
    deadline (default: the SDK's). With ``client=``, the client's own setting counts."""
    stream: bool = False
    """Stream the reply, publishing its text as ``TextDelta`` events as it arrives."""
    request_options: Mapping[str, JSONValue] = field(default_factory=dict)
    """Added to every request (e.g. ``{"temperature": 0}``); the keys the provider owns
    are refused and the list or object options it extends are merged."""
    hosted_tool_codecs: Mapping[str, HostedToolCodec[Any, Any]] = field(default_factory=dict)
    """Codecs by hosted-tool kind; a prompt's hosted tool of another kind fails before
    anything is sent."""
    _connection: _Connection = field(
        init=False, repr=False, compare=False, default_factory=_Connection
    )

    CLIENTS: ClassVar[SdkClients]
    ADAPTER_NAME: ClassVar[str]
    RESERVED_OPTIONS: ClassVar[Mapping[str, str]]
    """Request options the provider sets itself, and why a caller cannot."""
    MERGED_OPTIONS: ClassVar[tuple[MergedOption, ...]]
    ENDPOINT: ClassVar[str]
    """The client attribute path of the resource that sends, e.g. ``chat.completions``."""
    RAW_POST: ClassVar[RawPost | None] = None
    """Where ``ENDPOINT.create`` posts, for an endpoint whose ``create`` only walks the
    body against the SDK's types: the body is then posted as built, without that walk.
    None: requests go through ``create``."""

    def __post_init__(self) -> None:
        owner = type(self)
        sdk = require_sdk(self.CLIENTS.module, owner=owner.__name__)
        check_model(self.model, owner=owner)
        check_request_options(
            self.request_options,
            owner=owner,
            reserved=self.RESERVED_OPTIONS,
            merged=self.MERGED_OPTIONS,
        )
        self._check_options()
        check_client(sdk, self.CLIENTS, self.client, owner=owner)
        given = {
            name: getattr(self, name) for name in _CLIENT_OPTIONS if getattr(self, name) is not None
        }
        if self.client is not None and given:
            raise ConfigValidationError(
                f"{owner.__name__} takes either client= or the options to build one "
                f"({', '.join(_CLIENT_OPTIONS)}), not both: set {', '.join(given)} on the client",
                config_type=owner,
                field_name="client",
            )
        connection = self._connection
        connection.sdk = sdk
        connection.owned = self.client is None
        connection.client = (
            self.client
            if self.client is not None
            else build_client(sdk, self.CLIENTS, given, owner=owner)
        )
        if connection.owned:
            self._check_built(connection.client)
        connection.transport = SdkTransport(
            sdk=sdk,
            client=connection.client,
            is_async=isinstance(connection.client, getattr(sdk, self.CLIENTS.async_client)),
            endpoint=self._endpoint_of,
            raw_post=self.RAW_POST,
        )

    @property
    def name(self) -> str:
        """The adapter name in events and errors."""
        return self.ADAPTER_NAME

    @property
    def sdk_client(self) -> ClientT:
        """The SDK client requests go through: ``client`` as given, or the one built."""
        client: ClientT = self._connection.client
        return client

    @property
    def retry_limit(self) -> int:
        """The client's ``max_retries``: how often the loop resends a retryable failure."""
        return self._transport.max_retries

    def close(self) -> None:
        """Close the client this provider built; a client passed in is left open."""
        connection = self._connection
        if connection.owned:
            connection.owned = False
            connection.client.close()

    @property
    def _transport(self) -> SdkTransport:
        transport = self._connection.transport
        assert transport is not None
        return transport

    async def _send(
        self, request: Body, attempt: Attempt, on_text: TextSink, reader: StreamReaderFactory
    ) -> Body:
        """One SDK call; streamed through ``reader`` when the provider streams."""
        return await self._transport.send(
            request, attempt, on_text, reader if self.stream else None
        )

    def _check_options(self) -> None:
        """Refuse options of the subclass's own (the shared ones are checked already)."""

    def _check_built(self, client: Any) -> None:
        """Refuse a client the SDK built but that could not work (default: accept)."""

    def _endpoint_of(self, client: Any) -> Any:
        """The SDK resource whose ``create`` sends requests (``client.responses``...)."""
        return functools.reduce(getattr, self.ENDPOINT.split("."), client)


def option_choice(
    owner: type[object], field_name: str, value: object, allowed: tuple[str, ...]
) -> None:
    """Refuse ``value`` for ``field_name`` unless it is one of ``allowed``."""
    if value not in allowed:
        shown = ", ".join(repr(choice) for choice in allowed)
        raise field_error(owner, field_name, f"must be one of {shown}, got {value!r}", value)
