"""Discovery errors: one exception for Python callers, one value for models.

Every failed operation raises :class:`DiscoveryError`. It carries a stable
``code`` from the protocol, a ``message`` saying what went wrong and how to
recover, ``hints`` (categories or tools to try instead) and a
``next_action`` naming the operation to call next. ``to_failure()`` turns it
into a :class:`DiscoveryFailure`, the frozen payload a tool-facing section
hands back to the model instead of raising.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from weakincentives.discovery._catalog import TreePath
from weakincentives.errors import WinkError
from weakincentives.serde import SchemaViolation

__all__ = ["DiscoveryError", "DiscoveryFailure", "ErrorCode", "Hint", "HintKind"]

type ErrorCode = Literal[
    "NO_MATCH_IN_CATEGORY",
    "UNKNOWN_PATH",
    "TOOL_NOT_FOUND",
    "NOT_AUTHORIZED",
    "INVALID_ARGUMENTS",
    "INVALID_CURSOR",
    "INVALID_REQUEST",
    "CALL_NOT_SUPPORTED",
    "NOT_EXPANDED",
]
"""Why an operation failed.

The first four come from the protocol. ``INVALID_ARGUMENTS``: ``call_tool``
arguments break the tool's schema. ``INVALID_CURSOR``: a cursor is
malformed, altered or belongs to another request. ``INVALID_REQUEST``: a
request field is out of range (limit, empty query). ``CALL_NOT_SUPPORTED``:
the service has no executor, so tools must be run elsewhere. ``NOT_EXPANDED``: the
service requires ``expand_tool`` before ``call_tool`` and the tool was not expanded.
"""

type HintKind = Literal["category", "tool"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Hint:
    """A place to try instead: a category path or a tool."""

    kind: HintKind
    """``category`` (use ``path`` with ``list`` or a search) or ``tool`` (expand ``tool_id``)."""
    path: TreePath
    """The category path, or the tool's category path."""
    tool_id: str | None = None
    """The suggested tool, for ``tool`` hints."""
    summary: str = ""
    """What the suggestion holds or does."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscoveryFailure:
    """The structured error payload returned to a model (``DiscoveryError.to_failure``)."""

    code: ErrorCode
    message: str
    hints: tuple[Hint, ...] = ()
    next_action: str = ""
    violations: tuple[SchemaViolation, ...] = ()
    """For ``INVALID_ARGUMENTS``: every argument problem with its JSON path."""


class DiscoveryError(WinkError):
    """A discovery operation failed; see ``code`` for why and ``next_action`` for recovery."""

    code: ErrorCode
    hints: tuple[Hint, ...]
    next_action: str
    tool_id: str | None
    path: TreePath | None
    violations: tuple[SchemaViolation, ...]

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode,
        hints: tuple[Hint, ...] = (),
        next_action: str = "",
        tool_id: str | None = None,
        path: TreePath | None = None,
        violations: tuple[SchemaViolation, ...] = (),
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.message = message
        self.code = code
        self.hints = hints
        self.next_action = next_action
        self.tool_id = tool_id
        self.path = path
        self.violations = violations

    def to_failure(self) -> DiscoveryFailure:
        """Return the model-facing payload with the same fields."""
        return DiscoveryFailure(
            code=self.code,
            message=self.message,
            hints=self.hints,
            next_action=self.next_action,
            violations=self.violations,
        )
