"""Execution seam: how ``call_tool`` runs a tool once its arguments are valid.

Discovery validates arguments against the tool's schema and checks access,
then hands the tool and the arguments to a :class:`ToolExecutor`. The seam is
deliberately plain (a catalogue entry and JSON arguments in, an outcome out)
and async, like the loop it runs under: an MCP call or an HTTP request is
awaited where it starts, with no thread or loop hop. Code that can only block
(a sync client, a legacy executor) goes through :func:`blocking_executor`,
which runs it on a worker thread; tests and small scripts use
:class:`CallableExecutor`, which takes sync or async functions.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from weakincentives.discovery._catalog import CatalogTool
from weakincentives.serde import JSONValue

__all__ = ["CallOutcome", "CallableExecutor", "ToolExecutor", "ToolFunction", "blocking_executor"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    """What running a tool produced."""

    success: bool
    """False when the tool failed; ``message`` then says why."""
    message: str = ""
    """Short text for the model."""
    value: JSONValue = None
    """The JSON result, when there is one."""


class ToolExecutor(Protocol):
    """Runs catalogue tools whose arguments already passed validation."""

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Run ``tool`` with ``arguments`` and report the outcome (raise only for bugs)."""
        ...


class _BlockingExecutor(Protocol):
    """An executor whose ``execute`` blocks (what :func:`blocking_executor` adapts)."""

    def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Run ``tool`` with ``arguments``, blocking the calling thread."""
        ...


type ToolFunction = Callable[[Mapping[str, JSONValue]], CallOutcome | Awaitable[CallOutcome]]
"""What :class:`CallableExecutor` runs for one tool id: a plain or an ``async def`` function.

It receives the call's arguments, already validated against the tool's
``args_schema`` (a read-only mapping of JSON values), and returns a
:class:`CallOutcome`: ``success``, a short ``message`` for the model and an
optional JSON ``value``. A plain function runs on a worker thread, so it may
block; an ``async def`` one is awaited on the caller's loop. An exception it
raises becomes a failed call whose message names the exception; it never
escapes ``call_tool``. For example::

    def forecast(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        city = str(arguments["city"])
        return CallOutcome(success=True, message=f"sunny in {city}", value={"sky": "clear"})

    executor = CallableExecutor(functions={"weather.forecast": forecast})
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallableExecutor:
    """Runs tools through plain or async functions looked up by tool id.

    Useful for tests and small scripts; a tool without a function yields a
    failed outcome rather than an exception.
    """

    functions: Mapping[str, ToolFunction] = field(default_factory=dict)
    """Tool id -> the :data:`ToolFunction` that runs it."""

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Call the function registered for ``tool.tool_id``."""
        function = self.functions.get(tool.tool_id)
        if function is None:
            return CallOutcome(
                success=False, message=f"no implementation is registered for {tool.tool_id!r}"
            )
        produced: CallOutcome | Awaitable[CallOutcome]
        if _is_async(function):
            produced = function(arguments)
        else:  # a plain function may block: it runs on a worker thread
            produced = await asyncio.to_thread(function, arguments)
        if isinstance(produced, CallOutcome):
            return produced
        return await produced


def _is_async(function: ToolFunction) -> bool:
    return inspect.iscoroutinefunction(function)


@dataclass(frozen=True, slots=True)
class _OnWorkerThread:
    blocking: _BlockingExecutor

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        return await asyncio.to_thread(self.blocking.execute, tool, arguments)


def blocking_executor(executor: _BlockingExecutor) -> ToolExecutor:
    """A :class:`ToolExecutor` over an executor whose ``execute`` is a plain, blocking method.

    Each call runs on a worker thread of the running loop, so a blocking client never
    stalls the loop (and the other calls of the turn) while it waits.
    """
    return _OnWorkerThread(executor)
