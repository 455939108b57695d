"""Open a client session and agree on a protocol revision with the server.

The client probes ``server/discover`` first, so a server that speaks the
2026-07-28 revision gets it; a server that does not (an error, or no modern
version in its answer) gets the ``initialize`` handshake of 2025-11-25 and
earlier. After that, what each era needs to deliver what the user asked for:

- 2025 era: ``logging/setLevel`` with the toolbox's ``log_level`` when the server
  offers logging;
- 2026-07-28: log messages are a per-request opt-in (the session stamps it), and
  list changes arrive only on a ``subscriptions/listen`` stream, which stays open
  for the connection's lifetime (its events reach the message handler like any
  notification, so nothing reads the stream itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcp import ClientSession, types
from mcp.client.session import MessageHandlerFnT
from mcp.client.subscriptions import listen
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp.types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from weakincentives.mcp._hooks import SessionHooks

__all__ = ["CLIENT_INFO", "PACKAGE_VERSION", "hold_listen", "is_modern", "open_session"]

logger = logging.getLogger("weakincentives.mcp")


def _package_version() -> str:
    try:
        return version("weakincentives")
    except PackageNotFoundError:  # pragma: no cover - the tests run an installed tree
        return "0+unknown"


PACKAGE_VERSION = _package_version()
"""The installed weakincentives version, sent as ``clientInfo`` and ``serverInfo`` version."""
CLIENT_INFO = types.Implementation(name="weakincentives", version=PACKAGE_VERSION)
"""How the library introduces itself to servers."""


def is_modern(session: ClientSession) -> bool:
    """Whether the session speaks the 2026-07-28 revision (or a later per-request one)."""
    return session.protocol_version in MODERN_PROTOCOL_VERSIONS


async def open_session(
    stack: contextlib.AsyncExitStack,
    streams: tuple[Any, Any],
    hooks: SessionHooks,
    *,
    log_level: types.LoggingLevel | None,
    on_message: MessageHandlerFnT,
) -> tuple[ClientSession, JSONRPCDispatcher[Any]]:
    """Enter a session over ``streams``, negotiate, and set up logging and list changes."""
    read, write = streams
    dispatcher: JSONRPCDispatcher[Any] = JSONRPCDispatcher(read, write)
    session = await stack.enter_async_context(
        ClientSession(
            dispatcher=dispatcher,
            elicitation_callback=hooks.elicit,
            sampling_callback=hooks.sample if hooks.offers_sampling else None,
            list_roots_callback=hooks.list_roots if hooks.offers_roots else None,
            logging_callback=hooks.log,
            message_handler=on_message,
            client_info=CLIENT_INFO,
            log_level=log_level,
        )
    )
    await _negotiate(session)
    if is_modern(session):
        await _listen_for_changes(stack, session)
    elif log_level is not None:
        await _set_log_level(session, log_level)
    return session, dispatcher


async def _negotiate(session: ClientSession) -> None:
    try:
        await session.discover()
    except (MCPError, RuntimeError, ValidationError) as exc:
        # Not a modern server: no server/discover, an answer that is not a discover
        # result, or no modern version in common.
        logger.debug("server/discover failed (%s); using the initialize handshake", exc)
        await session.initialize()


async def _set_log_level(session: ClientSession, level: types.LoggingLevel) -> None:
    capabilities = session.server_capabilities
    if capabilities is None or capabilities.logging is None:
        return
    try:
        await session.send_request(
            types.SetLevelRequest(params=types.SetLevelRequestParams(level=level)),
            types.EmptyResult,
        )
    except MCPError as exc:  # the server's logs stay at its own level
        logger.warning("the server refused logging/setLevel %s: %s", level, exc)


async def _listen_for_changes(stack: contextlib.AsyncExitStack, session: ClientSession) -> None:
    capabilities = session.server_capabilities
    if capabilities is None:
        return
    tools = bool(capabilities.tools and capabilities.tools.list_changed)
    prompts = bool(capabilities.prompts and capabilities.prompts.list_changed)
    resources = bool(capabilities.resources and capabilities.resources.list_changed)
    if not (tools or prompts or resources):
        return
    try:
        await stack.enter_async_context(
            listen(
                session,
                tools_list_changed=tools,
                prompts_list_changed=prompts,
                resources_list_changed=resources,
            )
        )
    except MCPError as exc:  # changes will not be followed; refresh() still works
        logger.warning("the server refused subscriptions/listen: %s", exc)


async def hold_listen(
    session: ClientSession, uri: str, started: asyncio.Future[None], stop: asyncio.Event
) -> None:
    """Hold a ``subscriptions/listen`` stream for ``uri`` open until ``stop`` is set.

    Its events reach the session's message handler like any notification, so the
    stream itself is never read.
    """
    try:
        async with listen(session, resource_subscriptions=[uri]):
            started.set_result(None)
            await stop.wait()
    except Exception as exc:
        if not started.done():
            started.set_exception(exc)
