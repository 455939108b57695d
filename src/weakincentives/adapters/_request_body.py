"""What every SDK provider's request body starts from and the ``tools`` list it ends with.

:class:`WireOptions` holds what a provider adds to every request (its model and the
caller's request options); formats with options of their own extend it.

Each format declares the prompt's own tools its way (and, with a native tool search,
its search declarations); after them come the hosted tools the codecs serialized, then
any ``tools`` the caller's request options add. A turn that may not call tools (the
loop's tools-free final turn) still lists them, as earlier turns refer to them, and
says so with ``tool_choice``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from weakincentives.adapters._turns import TurnRequest
from weakincentives.serde import JSONValue

__all__ = ["WireOptions", "attach_tools"]


@dataclass(frozen=True, slots=True, kw_only=True)
class WireOptions:
    """What the adapter adds to every request."""

    model: str
    options: Mapping[str, JSONValue]
    """Caller's request options, already checked."""


def attach_tools(
    body: dict[str, JSONValue],
    declared: list[JSONValue],
    request: TurnRequest,
    options: Mapping[str, JSONValue],
    *,
    no_calls: JSONValue,
) -> None:
    """Set ``body["tools"]`` to ``declared``, the hosted tools and the options' tools.

    Nothing is set when the list is empty. ``no_calls`` is the format's ``tool_choice``
    that forbids a call, sent when ``request.allow_tool_calls`` is False.
    """
    declared.extend(dict(spec) for spec in request.hosted_tools)
    extra = options.get("tools")
    declared.extend(extra if isinstance(extra, list) else [])
    if declared:
        body["tools"] = declared
        if not request.allow_tool_calls:
            body["tool_choice"] = no_calls
