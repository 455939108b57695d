"""ToolContext names its collaborators through protocols that the real classes satisfy."""

from __future__ import annotations

import dataclasses
import typing

from weakincentives.adapters import OfflineAdapter, ScriptedTurn
from weakincentives.prompt import (
    EvaluatingAdapter,
    EventPublisher,
    ExecutionScope,
    SessionProtocol,
    ToolContext,
)
from weakincentives.runtime import InProcessEventBus, Session


def test_tool_context_type_hints_resolve_at_run_time() -> None:
    """get_type_hints works on the context and its scope: nothing hides behind TYPE_CHECKING."""
    assert set(typing.get_type_hints(ToolContext)) == {"scope", "tool", "invocation"}
    hints = typing.get_type_hints(ExecutionScope)
    assert hints["session"] is SessionProtocol
    assert hints["event_bus"] is EventPublisher
    assert set(hints) == {
        "prompt",
        "rendered_prompt",
        "adapter",
        "adapter_name",
        "evaluation_id",
        "session",
        "event_bus",
        "request",
        "response_accumulator",
        "extras",
        "clock",
        "new_id",
        "executor",
    }


def test_the_context_offers_every_seed_field_from_its_scope() -> None:
    """Seed 004's fields read through the context, one fact under one name."""
    seed_fields = (
        "prompt",
        "rendered_prompt",
        "adapter",
        "session",
        "event_bus",
        "request",
        "response_accumulator",
        "extras",
    )
    scope_fields = {field.name for field in dataclasses.fields(ExecutionScope)}
    for name in seed_fields:
        assert name in scope_fields
        assert isinstance(getattr(ToolContext, name), property)


def test_the_runtime_and_adapters_satisfy_the_protocols() -> None:
    """Sessions, buses and adapters are what ToolContext expects (checked by mypy, run here)."""
    bus: EventPublisher = InProcessEventBus()
    session: SessionProtocol = Session()
    adapter: EvaluatingAdapter = OfflineAdapter([ScriptedTurn(text="x")])
    assert adapter.name == "offline"
    assert session.storage.keys() == ()
    assert bus.publish(object()) is not None
