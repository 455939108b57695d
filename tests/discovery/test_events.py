"""Audit events and reconstruction of the search -> expand -> call chain."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    DiscoveryCalled,
    DiscoveryError,
    DiscoveryExpanded,
    DiscoveryFailed,
    DiscoverySearched,
    ToolDiscovery,
    audit_chain,
)

from .conftest import ServiceFactory

ARGS = {"project_root": "/repo", "symbol": "a", "new_name": "b"}


@pytest.fixture
def runner(make_service: ServiceFactory) -> ToolDiscovery:
    """A service that can call the rename tool."""
    executor = CallableExecutor(
        functions={"refactor.rename_symbol": lambda args: CallOutcome(success=True, message="ok")}
    )
    return make_service(executor=executor)


def test_the_chain_search_expand_call_is_reconstructed(
    runner: ToolDiscovery, events: list[object]
) -> None:
    """caused_by links lead from the call back through the expansion to the search."""
    runner.list()
    runner.search_tool_by_category("rename a symbol", limit=2)
    runner.expand_tool("refactor.rename_symbol")
    runner.call_tool("refactor.rename_symbol", ARGS)
    listed, searched, expanded, called = events
    assert isinstance(called, DiscoveryCalled)
    assert audit_chain(events, called) == (searched, expanded, called)
    assert searched == DiscoverySearched(
        step_id="step-2",
        occurred_at=datetime(2025, 1, 1, 0, 0, 1, tzinfo=UTC),
        operation="search_tool_by_category",
        path=(),
        query="rename a symbol",
        tags=(),
        tool_ids=("refactor.rename_symbol", "refactor.extract_function"),
        node_paths=(),
        offset=0,
    )
    assert expanded == DiscoveryExpanded(
        step_id="step-3",
        occurred_at=datetime(2025, 1, 1, 0, 0, 2, tzinfo=UTC),
        tool_id="refactor.rename_symbol",
        caused_by="step-2",
        chosen=True,
    )
    assert called == DiscoveryCalled(
        step_id="step-4",
        occurred_at=datetime(2025, 1, 1, 0, 0, 3, tzinfo=UTC),
        tool_id="refactor.rename_symbol",
        caused_by="step-3",
        arguments=ARGS,
        success=True,
        message="ok",
    )
    assert isinstance(listed, DiscoverySearched)
    assert listed.node_paths[0] == ("Coding",)


def test_the_latest_surfacing_step_is_the_cause(
    runner: ToolDiscovery, events: list[object]
) -> None:
    """A listing after a search becomes the cause of the expansion."""
    runner.search_tool_by_category("rename symbol")
    runner.list(path=["Coding", "Refactoring"], limit=5)
    runner.expand_tool("refactor.rename_symbol")
    expanded = events[-1]
    assert isinstance(expanded, DiscoveryExpanded)
    assert expanded.caused_by == "step-2"


def test_only_the_first_expansion_is_a_choice(runner: ToolDiscovery, events: list[object]) -> None:
    """Re-expanding a tool is recorded but not as a new choice; calls link to the latest one."""
    runner.search_tool_by_category("rename symbol")
    runner.expand_tool("refactor.rename_symbol")
    runner.expand_tool("refactor.rename_symbol")
    runner.call_tool("refactor.rename_symbol", ARGS)
    first, second, called = events[1:]
    assert isinstance(first, DiscoveryExpanded)
    assert isinstance(second, DiscoveryExpanded)
    assert isinstance(called, DiscoveryCalled)
    assert (first.chosen, second.chosen) == (True, False)
    assert called.caused_by == second.step_id
    assert audit_chain(events, called) == (events[0], second, called)


def test_blind_expansion_and_call_have_no_cause(
    runner: ToolDiscovery, events: list[object]
) -> None:
    """Skipping discovery is allowed but shows up in the audit trail."""
    runner.call_tool("refactor.rename_symbol", ARGS)
    runner.expand_tool("refactor.rename_symbol")
    called, expanded = events
    assert isinstance(called, DiscoveryCalled)
    assert isinstance(expanded, DiscoveryExpanded)
    assert called.caused_by is None
    assert (expanded.caused_by, expanded.chosen) == (None, False)
    assert audit_chain(events, called) == (called,)


def test_failures_are_published(runner: ToolDiscovery, events: list[object]) -> None:
    """Every DiscoveryError is also an event naming the operation and code."""
    with pytest.raises(DiscoveryError):
        runner.expand_tool("nope")
    with pytest.raises(DiscoveryError):
        runner.list(path=["Nowhere"])
    assert events == [
        DiscoveryFailed(
            step_id="step-1",
            occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
            operation="expand_tool",
            code="TOOL_NOT_FOUND",
            message="no tool with id 'nope' is available",
            tool_id="nope",
        ),
        DiscoveryFailed(
            step_id="step-2",
            occurred_at=datetime(2025, 1, 1, 0, 0, 1, tzinfo=UTC),
            operation="list",
            code="UNKNOWN_PATH",
            message="category ['Nowhere'] does not exist; the deepest existing part is []",
            path=("Nowhere",),
        ),
    ]


def test_audit_chain_ignores_foreign_events_and_cycles() -> None:
    """Unrelated objects are skipped and a self-referencing link cannot loop."""
    when = datetime(2025, 1, 1, tzinfo=UTC)
    looping = DiscoveryCalled(
        step_id="c",
        occurred_at=when,
        tool_id="t",
        caused_by="c",
        arguments={},
        success=True,
        message="",
    )
    assert audit_chain(["noise", looping], looping) == (looping,)


def test_a_service_without_a_sink_still_works(catalog_service: ToolDiscovery) -> None:
    """events=None simply publishes nowhere."""
    assert catalog_service.search_nodes("bucket").results


@pytest.fixture
def catalog_service(service: ToolDiscovery) -> ToolDiscovery:
    """A service built with all defaults (random ids, wall clock, random secret)."""
    return ToolDiscovery(service.catalog)
