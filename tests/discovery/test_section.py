"""ToolDiscoverySection: a catalogue behind five tools, run end to end on the offline adapter."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pytest

from tests.discovery.test_toolbench import DATA
from weakincentives.adapters import OfflineAdapter, PromptResponse, ScriptedCall, ScriptedTurn
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CallResponse,
    CatalogNode,
    DiscoveryCalled,
    DiscoveryExpanded,
    DiscoveryFailure,
    DiscoverySearched,
    ExpandedTool,
    IdAccessPolicy,
    SearchToolsResponse,
    ToolCatalog,
    ToolDiscovery,
    ToolDiscoverySection,
    audit_chain,
)
from weakincentives.errors import CatalogError
from weakincentives.prompt import MarkdownSection, Prompt, Tool, ToolContext, ToolResult
from weakincentives.runtime import InProcessEventBus, Session, ToolInvoked
from weakincentives.serde import JSONValue


@dataclass(frozen=True)
class RollbackParams:
    service: str = field(metadata={"description": "Service to roll back"})
    version: str = field(metadata={"description": "Version to return to"})


@dataclass(frozen=True)
class RollbackResult:
    service: str
    version: str


def rollback(params: RollbackParams, *, context: ToolContext) -> ToolResult[RollbackResult]:
    """Roll a service back to an earlier version."""
    return ToolResult(
        message="rolled back", value=RollbackResult(service=params.service, version=params.version)
    )


@dataclass(frozen=True)
class ScaleParams:
    service: str
    replicas: int = field(metadata={"ge": 1})


def scale(params: ScaleParams, *, context: ToolContext) -> ToolResult[None]:
    """Change the number of replicas of a service."""
    return ToolResult(message=f"scaled to {params.replicas}")


ROLLBACK = Tool.wrap(rollback, name="deploy_rollback")
SCALE = Tool.wrap(scale, name="scale_service")


def ops_catalog() -> ToolCatalog:
    return ToolCatalog.from_tools(
        [
            (("Ops", "Deploys"), ROLLBACK),
            (("Ops", "Capacity"), SCALE),
            (("Ops", "Emergency"), ROLLBACK),
        ],
        nodes=[CatalogNode(name="Ops", path=("Ops",), summary="Run production services")],
    )


def prompt_with(discovery: ToolDiscovery) -> Prompt[None]:
    return Prompt(
        ns="tests/discovery",
        key="section",
        sections=[
            MarkdownSection(title="Task", template="Roll checkout back to v411."),
            ToolDiscoverySection(discovery),
        ],
    )


def call(name: str, **arguments: JSONValue) -> ScriptedCall:
    return ScriptedCall(name=name, arguments=arguments)


def run(discovery: ToolDiscovery, *turns: ScriptedTurn) -> tuple[PromptResponse[None], Session]:
    bus = InProcessEventBus()
    session = Session(bus=bus)
    adapter = OfflineAdapter([*turns, ScriptedTurn(text="done")])
    return adapter.evaluate(prompt_with(discovery), bus=bus, session=session), session


class TestRendering:
    def test_the_model_sees_five_tools_and_the_rules(self) -> None:
        """The catalogue's tools stay hidden; the section explains how to find them."""
        rendered = prompt_with(ToolDiscovery(ops_catalog())).render()
        assert [tool.name for tool in rendered.tools] == [
            "list",
            "search_tool_by_category",
            "search_nodes",
            "expand_tool",
            "call_tool",
        ]
        assert "catalogue of 2 tools" in rendered.text
        assert "Always `expand_tool` before `call_tool`" in rendered.text
        assert "Top-level categories: Ops." in rendered.text

    def test_the_text_counts_and_names_only_what_the_caller_may_see(self) -> None:
        """A policy hiding tools changes the count, and an all-hidden category is not named."""
        catalog = ToolCatalog.from_tools(
            [(("Ops", "Deploys"), ROLLBACK), (("Secret",), SCALE)],
            nodes=[CatalogNode(name="Ops", path=("Ops",), summary="Run production services")],
        )
        hidden = IdAccessPolicy(hidden=frozenset({"scale_service"}))
        text = prompt_with(ToolDiscovery(catalog, access=hidden)).render().text
        assert "catalogue of 1 tool that" in text
        assert "Top-level categories: Ops." in text
        assert "Secret" not in text


class TestEndToEnd:
    def test_search_expand_call_runs_the_weakincentives_tool(self) -> None:
        """A tool found and expanded by the model runs in the same evaluation."""
        discovery = ToolDiscovery(ops_catalog(), require_expansion=True)
        response, session = run(
            discovery,
            ScriptedTurn(calls=(call("search_tool_by_category", query="roll back a deploy"),)),
            ScriptedTurn(calls=(call("expand_tool", tool_id="deploy_rollback"),)),
            ScriptedTurn(
                calls=(
                    call(
                        "call_tool",
                        tool_id="deploy_rollback",
                        arguments={"service": "checkout", "version": "v411"},
                    ),
                )
            ),
        )
        search, expand, called = (execution.result for execution in response.tool_executions)
        assert isinstance(search.value, SearchToolsResponse)
        assert search.value.results[0].tool_id == "deploy_rollback"
        assert isinstance(expand.value, ExpandedTool)
        assert expand.value.args_schema["required"] == ["service", "version"]
        assert isinstance(called.value, CallResponse)
        assert called.value.value == {"service": "checkout", "version": "v411"}
        inner = [event for event in session.select(ToolInvoked) if event.name == "deploy_rollback"]
        assert len(inner) == 1
        assert inner[0].params == RollbackParams(service="checkout", version="v411")
        assert inner[0].evaluation_id == response.evaluation_id
        assert inner[0].adapter == "offline"

    def test_the_chain_behind_each_call_is_in_the_session(self) -> None:
        """Search, choose/expand and call are recorded and linked."""
        discovery = ToolDiscovery(ops_catalog())
        _, session = run(
            discovery,
            ScriptedTurn(calls=(call("search_tool_by_category", query="scale replicas"),)),
            ScriptedTurn(calls=(call("expand_tool", tool_id="scale_service"),)),
            ScriptedTurn(
                calls=(
                    call(
                        "call_tool",
                        tool_id="scale_service",
                        arguments={"service": "a", "replicas": 3},
                    ),
                )
            ),
        )
        events = [
            *session.select(DiscoverySearched),
            *session.select(DiscoveryExpanded),
            *session.select(DiscoveryCalled),
        ]
        (called,) = session.select(DiscoveryCalled)
        chain = audit_chain(events, called)
        assert [type(step).__name__ for step in chain] == [
            "DiscoverySearched",
            "DiscoveryExpanded",
            "DiscoveryCalled",
        ]
        (expanded,) = session.select(DiscoveryExpanded)
        assert expanded.chosen

    def test_a_dag_tool_is_listed_under_each_category(self) -> None:
        """A tool filed under two categories appears in both listings."""
        discovery = ToolDiscovery(ops_catalog())
        deploys = discovery.list(path=("Ops", "Deploys"))
        emergency = discovery.list(path=("Ops", "Emergency"))
        assert (
            [p.tool_id for p in deploys.tools]
            == [p.tool_id for p in emergency.tools]
            == ["deploy_rollback"]
        )


class TestFailures:
    def test_calling_without_expanding_is_refused_when_required(self) -> None:
        """require_expansion turns rule 4 into a NOT_EXPANDED failure with the next step."""
        response, _ = run(
            ToolDiscovery(ops_catalog(), require_expansion=True),
            ScriptedTurn(
                calls=(
                    call(
                        "call_tool",
                        tool_id="scale_service",
                        arguments={"service": "a", "replicas": 2},
                    ),
                )
            ),
        )
        (result,) = response.tool_results
        assert result.success is False
        assert isinstance(result.value, DiscoveryFailure)
        assert result.value.code == "NOT_EXPANDED"
        assert result.value.next_action.startswith("call expand_tool with tool_id 'scale_service'")

    def test_unknown_tools_fail_with_hints(self) -> None:
        """TOOL_NOT_FOUND comes back as a failed result whose payload suggests tools."""
        response, _ = run(
            ToolDiscovery(ops_catalog()),
            ScriptedTurn(calls=(call("expand_tool", tool_id="deploy_rolback"),)),
        )
        (result,) = response.tool_results
        assert result.message.startswith("TOOL_NOT_FOUND: ")
        assert isinstance(result.value, DiscoveryFailure)
        assert (
            next(hint.tool_id for hint in result.value.hints if hint.kind == "tool")
            == "deploy_rollback"
        )

    def test_invalid_arguments_are_reported_with_paths(self) -> None:
        """Arguments are validated against args_schema before anything runs."""
        response, session = run(
            ToolDiscovery(ops_catalog()),
            ScriptedTurn(
                calls=(
                    call(
                        "call_tool",
                        tool_id="scale_service",
                        arguments={"service": "a", "replicas": 0},
                    ),
                )
            ),
        )
        (result,) = response.tool_results
        assert isinstance(result.value, DiscoveryFailure)
        assert result.value.code == "INVALID_ARGUMENTS"
        assert [v.path for v in result.value.violations] == ["$.replicas"]
        assert [event.name for event in session.select(ToolInvoked)] == ["call_tool"]

    def test_bad_list_limit_is_a_failure_not_a_crash(self) -> None:
        """Schema limits on the discovery tools' own params come back to the model."""
        response, _ = run(
            ToolDiscovery(ops_catalog()), ScriptedTurn(calls=(call("list", limit=99),))
        )
        (result,) = response.tool_results
        assert result.success is False
        assert "$.limit" in result.message

    def test_records_without_implementation_fail_cleanly(self) -> None:
        """Plain records need an executor; without one the call fails with a message."""
        catalog = ToolCatalog.from_records(
            [
                {
                    "tool_id": "x/y/z",
                    "name": "z",
                    "path": ["X", "Y"],
                    "args_schema": {"type": "object"},
                }
            ]
        )
        response, _ = run(
            ToolDiscovery(catalog, executor=CallableExecutor()),
            ScriptedTurn(calls=(call("call_tool", tool_id="x/y/z", arguments={}),)),
        )
        (result,) = response.tool_results
        assert result.success is False
        assert result.message == "no implementation is registered for 'x/y/z'"

    def test_two_tools_with_one_name_cannot_share_a_catalogue(self) -> None:
        """Tool names are catalogue ids, so they must be unique."""
        twin = Tool.wrap(scale, name="deploy_rollback")
        with pytest.raises(CatalogError, match="two different tools are named 'deploy_rollback'"):
            ToolCatalog.from_tools([(("A",), ROLLBACK), (("B",), twin)])

    def test_list_and_search_nodes_answer(self) -> None:
        """The navigation tools return listings and category matches."""
        response, _ = run(
            ToolDiscovery(ops_catalog()),
            ScriptedTurn(
                calls=(call("list", path=["Ops"]), call("search_nodes", query="capacity"))
            ),
        )
        listing, nodes = response.tool_results
        assert listing.message == "3 categories and 0 tools."
        assert nodes.message.endswith("matching categories.")

    def test_messages_count_one_thing_in_the_singular(self) -> None:
        """One category, one tool and one match are not written as plurals."""
        catalog = ToolCatalog.from_tools([(("Ops", "Deploys"), ROLLBACK), (("Ops",), SCALE)])
        response, _ = run(
            ToolDiscovery(catalog),
            ScriptedTurn(
                calls=(
                    call("list", path=["Ops"]),
                    call("search_tool_by_category", query="scale service replicas", limit=1),
                    call("search_nodes", query="deploys", limit=1),
                )
            ),
        )
        assert [result.message for result in response.tool_results] == [
            "1 category and 1 tool.",
            "1 matching tool.",
            "1 matching category.",
        ]


def toolbench_executor() -> CallableExecutor:
    def players(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        return CallOutcome(success=True, message="found players", value={"players": ["Messi"]})

    return CallableExecutor(functions={"data/theclique/transfermarkt_search": players})


@pytest.fixture(scope="module")
def toolbench_catalog() -> ToolCatalog:
    if not (DATA / "catalog.jsonl").exists():
        pytest.skip(f"ToolBench data is not available at {DATA} (it is not part of the repository)")
    return ToolCatalog.from_jsonl(DATA / "catalog.jsonl")


def test_toolbench_end_to_end_discovers_expands_and_calls(toolbench_catalog: ToolCatalog) -> None:
    """Over the 2,490 ToolBench endpoints the model finds, expands and calls an endpoint."""
    discovery = ToolDiscovery(
        toolbench_catalog, executor=toolbench_executor(), require_expansion=True
    )
    query = "search football players on transfermarkt"
    found = discovery.search_tool_by_category(query, limit=10).results
    tool_id = "data/theclique/transfermarkt_search"
    assert tool_id in [pointer.tool_id for pointer in found]
    schema = discovery.expand_tool(tool_id).args_schema
    required = schema.get("required")
    assert isinstance(required, list)
    arguments: dict[str, JSONValue] = {str(name): "Messi" for name in required}
    response, _ = run(
        ToolDiscovery(toolbench_catalog, executor=toolbench_executor(), require_expansion=True),
        ScriptedTurn(calls=(call("search_tool_by_category", query=query, limit=10),)),
        ScriptedTurn(calls=(call("expand_tool", tool_id=tool_id),)),
        ScriptedTurn(calls=(call("call_tool", tool_id=tool_id, arguments=arguments),)),
    )
    called = response.tool_results[-1]
    assert called.success, called.message
    assert isinstance(called.value, CallResponse)
    assert called.value.value == {"players": ["Messi"]}
    assert len(response.rendered.tools if response.rendered else ()) == 5
