"""ToolContext names its collaborators through protocols that the real classes satisfy."""

from __future__ import annotations

import typing

from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.prompt import (
    EvaluatingAdapter,
    EventPublisher,
    SessionProtocol,
    ToolContext,
)
from weakincentives.runtime import InProcessEventBus, Session


def test_tool_context_type_hints_resolve_at_run_time() -> None:
    """typing.get_type_hints(ToolContext) works: no name is hidden behind TYPE_CHECKING."""
    hints = typing.get_type_hints(ToolContext)
    assert hints["session"] is SessionProtocol
    assert hints["event_bus"] is EventPublisher
    assert set(hints) == {
        "prompt",
        "rendered_prompt",
        "adapter",
        "session",
        "event_bus",
        "tool",
        "invocation",
        "request",
        "response_accumulator",
        "extras",
    }


def test_the_runtime_and_adapters_satisfy_the_protocols() -> None:
    """Sessions, buses and adapters are what ToolContext expects (checked by mypy, run here)."""
    bus: EventPublisher = InProcessEventBus()
    session: SessionProtocol = Session()
    adapter: EvaluatingAdapter = OfflineAdapter([ScriptedTurn(text="x")])
    assert adapter.name == "offline"
    assert session.storage.keys() == ()
    assert bus.publish(object()) is not None
