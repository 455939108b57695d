"""Send what an upstream server asks and reports during a served call back to the caller.

When ``wink mcp serve`` (or :func:`build_server`) runs an upstream tool for an MCP
client, the upstream server may ask that client something (elicitation, sampling)
or report progress and log messages. The served call sets :data:`CURRENT_RELAY`
to a :class:`Relay` for the client's request; the upstream connection notes the
relay of every call in flight and hands requests and notifications to it, so they
reach the client whose call caused them, on that call's stream.
"""

from __future__ import annotations

import contextlib
import typing
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from mcp import types
from mcp.server.connection import allowed_log_levels
from mcp.server.context import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata

__all__ = ["CURRENT_RELAY", "LEVELS", "Relay", "relayed"]

LEVELS: tuple[types.LoggingLevel, ...] = typing.get_args(types.LoggingLevel)
"""Log levels from the least to the most severe."""


class Relay:
    """The MCP client request a served call is answering (its session and request id)."""

    def __init__(
        self, context: ServerRequestContext[Any, Any], *, minimum: types.LoggingLevel | None
    ) -> None:
        self._session = context.session
        self._request_id = context.request_id
        floor = LEVELS.index(minimum) if minimum is not None else 0
        self._log_levels = allowed_log_levels(context.protocol_version, context.meta) & set(
            LEVELS[floor:]
        )
        self._progress_token = (context.meta or {}).get("progress_token")

    def offers(self, capability: types.ClientCapabilities) -> bool:
        """Whether the client declared ``capability`` and its request can carry a request back."""
        return self._session.can_send_request and self._session.check_client_capability(capability)

    async def elicit(self, params: types.ElicitRequestParams) -> types.ElicitResult:
        """Ask the client (its user) for input, on the stream of the served call."""
        return await self._session.send_request(
            types.ElicitRequest(params=params),
            types.ElicitResult,
            metadata=ServerMessageMetadata(related_request_id=self._request_id),
        )

    async def sample(self, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        """Ask the client for a model completion, on the stream of the served call."""
        return await self._session.send_request(
            types.CreateMessageRequest(params=params),
            types.CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=self._request_id),
        )

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Pass a log message on, if the client's request allows that level."""
        if params.level not in self._log_levels:
            return
        await self._session.send_notification(
            types.LoggingMessageNotification(params=params), related_request_id=self._request_id
        )

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Pass a progress report on, if the client asked for progress on its request."""
        if self._progress_token is None:
            return
        await self._session.send_notification(
            types.ProgressNotification(
                params=types.ProgressNotificationParams(
                    progress_token=self._progress_token,
                    progress=progress,
                    total=total,
                    message=message,
                )
            ),
            related_request_id=self._request_id,
        )


CURRENT_RELAY: ContextVar[Relay | None] = ContextVar("weakincentives_mcp_relay", default=None)
"""The relay of the served call running in this context, if any."""


@contextlib.contextmanager
def relayed(
    context: ServerRequestContext[Any, Any], minimum: types.LoggingLevel | None
) -> Iterator[None]:
    """Run the block as a served call: upstream requests and reports go to its client."""
    token = CURRENT_RELAY.set(Relay(context, minimum=minimum))
    try:
        yield
    finally:
        CURRENT_RELAY.reset(token)
