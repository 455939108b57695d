"""What the toolbox answers when a server asks the client something, and where reports go.

Every capability a server may use on the client is routed to something the user
controls, given to :class:`MCPToolbox`:

- elicitation (``elicitation/create``): the ``elicitation`` callback; without one,
  every request is declined. An accepted form gets the schema's defaults for the
  fields the callback left out (SEP-1034);
- sampling (``sampling/createMessage``): an adapter (the request becomes an
  evaluation on it) or a function; without one, sampling is not offered;
- roots (``roots/list``): the given list; without one, roots are not offered;
- log messages and progress reports: :class:`MCPNotice` events on the given bus.

During a served call (``wink mcp serve``) the upstream's requests and reports go to
the MCP client whose call is in flight instead, when it offers the capability:
see :mod:`weakincentives.mcp._relay`.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from mcp import types
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from pydantic import ValidationError

from weakincentives.errors import ConfigValidationError
from weakincentives.mcp._events import MCPNotice
from weakincentives.mcp._relay import Relay
from weakincentives.mcp._results import plain
from weakincentives.mcp._sampling import sample_with
from weakincentives.prompt import EvaluatingAdapter, EventPublisher

__all__ = [
    "ClientHooks",
    "ElicitationHandler",
    "SamplingHandler",
    "SessionHooks",
    "roots_of",
    "sampler_of",
]

logger = logging.getLogger("weakincentives.mcp")

type ElicitationHandler = Callable[
    [str, types.ElicitRequestParams], types.ElicitResult | Awaitable[types.ElicitResult]
]
"""``(server, request) -> answer``: a plain or async function; it may ask a person."""
type SamplingHandler = Callable[
    [str, types.CreateMessageRequestParams],
    types.CreateMessageResult
    | types.ErrorData
    | Awaitable[types.CreateMessageResult | types.ErrorData],
]
"""``(server, request) -> assistant message`` (or an error), for sampling without an adapter."""
type Sampler = Callable[
    [str, types.CreateMessageRequestParams],
    Awaitable[types.CreateMessageResult | types.ErrorData],
]

_ELICITATION = types.ClientCapabilities(elicitation=types.ElicitationCapability())
_SAMPLING = types.ClientCapabilities(sampling=types.SamplingCapability())


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientHooks:
    """The user's answers to server requests, and where server reports go."""

    elicitation: ElicitationHandler | None = None
    sampling: Sampler | None = None
    roots: tuple[types.Root, ...] | None = None
    bus: EventPublisher | None = None
    log_level: types.LoggingLevel | None = None


def roots_of(roots: Sequence[str] | None) -> tuple[types.Root, ...] | None:
    """Roots from directories or ``file://`` URIs (a directory becomes its absolute URI)."""
    if roots is None:
        return None
    found: list[types.Root] = []
    for root in roots:
        uri = root if "://" in root else Path(root).resolve().as_uri()
        try:
            found.append(types.Root.model_validate({"uri": uri}))
        except ValidationError as exc:
            raise ConfigValidationError(
                f"root {root!r} is not a directory or a file:// URI",
                field_name="roots",
                value=root,
            ) from exc
    return tuple(found)


def sampler_of(
    sampling: EvaluatingAdapter | SamplingHandler | None, bus: EventPublisher | None
) -> Sampler | None:
    """What answers sampling: an evaluation on the adapter, or the user's function."""
    if sampling is None:
        return None
    evaluate = getattr(sampling, "evaluate_async", None)
    if callable(evaluate):
        adapter = cast(EvaluatingAdapter, sampling)

        async def evaluated(
            server: str, params: types.CreateMessageRequestParams
        ) -> types.CreateMessageResult | types.ErrorData:
            return await sample_with(adapter, server, params, bus=bus)

        return evaluated
    function = cast(SamplingHandler, sampling)

    async def called(
        server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        try:
            return await _settled(function(server, params))
        except Exception as exc:  # the user's function failed: the server hears why
            return _callback_error("sampling", exc)

    return called


class SessionHooks:
    """One connection's SDK callbacks over :class:`ClientHooks` and its calls in flight."""

    def __init__(
        self,
        hooks: ClientHooks,
        *,
        server: Callable[[], str],
        relay: Callable[[], Relay | None],
    ) -> None:
        self._hooks = hooks
        self._server = server
        self._relay = relay

    @property
    def offers_sampling(self) -> bool:
        """Whether sampling is advertised (an adapter or a function was given)."""
        return self._hooks.sampling is not None

    @property
    def offers_roots(self) -> bool:
        """Whether roots are advertised (a list was given)."""
        return self._hooks.roots is not None

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The relay's client answers when it can; else the callback, else a decline."""
        relay = self._relay()
        if relay is not None and relay.offers(_ELICITATION):
            return await relay.elicit(params)
        handler = self._hooks.elicitation
        if handler is None:
            return types.ElicitResult(action="decline")
        try:
            answer = await _settled(handler(self._server(), params))
        except Exception as exc:  # the user's callback failed: the server hears why
            return _callback_error("elicitation", exc)
        return _with_defaults(answer, params)

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        """The relay's client answers when it can; else the adapter or function given."""
        relay = self._relay()
        if relay is not None and relay.offers(_SAMPLING):
            return await relay.sample(params)
        sampler = self._hooks.sampling
        if sampler is None:  # the SDK's own refusal is installed instead (offers_sampling)
            raise AssertionError("sample() is only installed when sampling is offered")
        return await sampler(self._server(), params)

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        """The roots the user gave."""
        return types.ListRootsResult(roots=list(self._hooks.roots or ()))

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        """Publish a log message on the bus and pass it to the relay's client."""
        data = plain(params.data)
        self._publish(
            MCPNotice(
                server=self._server(),
                kind="log",
                message=data if isinstance(data, str) else str(data),
                level=params.level,
                logger=params.logger,
                data=data,
            )
        )
        relay = self._relay()
        if relay is not None:
            await relay.log(params)

    def progress(self, tool: str, relay: Relay | None) -> ProgressFnT:
        """The progress callback of one call: bus event, then the call's relay."""

        async def report(progress: float, total: float | None, message: str | None) -> None:
            self._publish(
                MCPNotice(
                    server=self._server(),
                    kind="progress",
                    message=message or "",
                    tool=tool,
                    progress=progress,
                    total=total,
                )
            )
            if relay is not None:
                await relay.progress(progress, total, message)

        return report

    def _publish(self, notice: MCPNotice) -> None:
        bus = self._hooks.bus
        if bus is not None:
            bus.publish(notice)


async def _settled[T](value: T | Awaitable[T]) -> T:
    if inspect.isawaitable(value):
        return await value
    return value


def _callback_error(what: str, exc: Exception) -> types.ErrorData:
    logger.warning("the %s callback raised %s: %s", what, type(exc).__name__, exc)
    return types.ErrorData(
        code=types.INTERNAL_ERROR,
        message=f"the client's {what} handler failed: {type(exc).__name__}: {exc}",
    )


def _with_defaults(
    answer: types.ElicitResult, params: types.ElicitRequestParams
) -> types.ElicitResult:
    """An accepted form answer with the schema's defaults for the fields it left out."""
    if answer.action != "accept" or not isinstance(params, types.ElicitRequestFormParams):
        return answer
    properties: Any = params.requested_schema.get("properties")
    if not isinstance(properties, dict):  # a hostile schema: no defaults to fill
        return answer
    content = dict(answer.content or {})
    for name, field in properties.items():
        if name not in content and isinstance(field, dict) and "default" in field:
            content[name] = field["default"]
    return types.ElicitResult(action="accept", content=content)
