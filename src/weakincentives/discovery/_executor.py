"""Execution seam: how ``call_tool`` runs a tool once its arguments are valid.

Discovery validates arguments against the tool's schema and checks access,
then hands the tool and the arguments to a :class:`ToolExecutor`. The seam is
deliberately plain (a catalogue entry and JSON arguments in, an outcome out)
so a prompt-level integration can route calls through the shared tool
execution path, an HTTP client can call a remote API, and tests can use
:class:`CallableExecutor`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from weakincentives.discovery._catalog import CatalogTool
from weakincentives.serde import JSONValue

__all__ = ["CallOutcome", "CallableExecutor", "ToolExecutor", "ToolFunction"]


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

    def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Run ``tool`` with ``arguments`` and report the outcome (raise only for bugs)."""
        ...


type ToolFunction = Callable[[Mapping[str, JSONValue]], CallOutcome]
"""What :class:`CallableExecutor` runs for one tool id.

It receives the call's arguments, already validated against the tool's
``args_schema`` (a read-only mapping of JSON values), and returns a
:class:`CallOutcome`: ``success``, a short ``message`` for the model and an
optional JSON ``value``. An exception it raises becomes a failed call whose
message names the exception; it never escapes ``call_tool``. For example::

    def forecast(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        city = str(arguments["city"])
        return CallOutcome(success=True, message=f"sunny in {city}", value={"sky": "clear"})

    executor = CallableExecutor(functions={"weather.forecast": forecast})
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class CallableExecutor:
    """Runs tools through plain functions looked up by tool id.

    Useful for tests and small scripts; a tool without a function yields a
    failed outcome rather than an exception.
    """

    functions: Mapping[str, ToolFunction] = field(default_factory=dict)
    """Tool id -> the :data:`ToolFunction` that runs it."""

    def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        """Call the function registered for ``tool.tool_id``."""
        function = self.functions.get(tool.tool_id)
        if function is None:
            return CallOutcome(
                success=False, message=f"no implementation is registered for {tool.tool_id!r}"
            )
        return function(arguments)
