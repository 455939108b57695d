"""``expand_tool`` and ``call_tool``: schemas, argument validation and the executor seam."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Mapping
from typing import cast

import pytest

from weakincentives._bounded import TEXT_LIMIT
from weakincentives.discovery import (
    CallableExecutor,
    CallOutcome,
    CallResponse,
    CatalogTool,
    DiscoveryCalled,
    DiscoveryError,
    ExpandedTool,
    ToolDiscovery,
    blocking_executor,
)
from weakincentives.discovery._executor import ToolFunction
from weakincentives.errors import ConfigValidationError
from weakincentives.serde import JSONValue, SchemaViolation

from .conftest import RENAME_SCHEMA, ServiceFactory

GOOD_ARGS: dict[str, JSONValue] = {"project_root": "/repo", "symbol": "old", "new_name": "new"}


class _RecordingExecutor:
    def __init__(self, outcome: CallOutcome | Exception) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, Mapping[str, JSONValue]]] = []

    async def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        self.calls.append((tool.tool_id, arguments))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


class TestExpand:
    def test_expansion_returns_the_full_schema(self, service: ToolDiscovery) -> None:
        """Only expand_tool reveals argument and result schemas."""
        assert service.expand_tool("refactor.rename_symbol") == ExpandedTool(
            tool_id="refactor.rename_symbol",
            name="rename_symbol",
            path=("Coding", "Refactoring"),
            summary="Renames a symbol project-wide and updates references",
            args_schema=RENAME_SCHEMA,
            result_schema={
                "type": "object",
                "properties": {"changed_files": {"type": "integer"}},
                "required": ["changed_files"],
            },
        )

    def test_an_unknown_id_suggests_near_ids(self, service: ToolDiscovery) -> None:
        """TOOL_NOT_FOUND offers did-you-mean tools drawn from ids, names and search."""
        with pytest.raises(DiscoveryError, match=r"^TOOL_NOT_FOUND: no tool with id") as info:
            service.expand_tool("storage.put_objct")
        error = info.value
        assert error.message == "no tool with id 'storage.put_objct' is available"
        assert error.tool_id == "storage.put_objct"
        assert error.hints[0].tool_id == "storage.put_object"
        assert error.hints[0].kind == "tool"
        assert error.hints[0].path == ("Storage", "Buckets")
        assert len(error.hints) <= 3
        assert error.next_action.startswith("use a tool_id exactly as returned")

    def test_a_tool_name_instead_of_an_id_is_corrected(self, service: ToolDiscovery) -> None:
        """Passing a tool's name finds the id it belongs to."""
        with pytest.raises(DiscoveryError) as info:
            service.expand_tool("oauth_login")
        assert info.value.hints[0].tool_id == "auth.oauth_login"

    def test_a_non_string_id_is_not_found(self, service: ToolDiscovery) -> None:
        """Garbage ids from a model are handled as unknown ids."""
        with pytest.raises(DiscoveryError, match="TOOL_NOT_FOUND"):
            service.expand_tool(cast("str", 42))


class TestCall:
    def test_valid_arguments_reach_the_executor(self, make_service: ServiceFactory) -> None:
        """The executor receives the catalogue tool and the arguments unchanged."""
        executor = _RecordingExecutor(CallOutcome(success=True, message="done", value={"n": 2}))
        service = make_service(executor=executor)
        response = service.call_tool("refactor.rename_symbol", GOOD_ARGS)
        assert response == CallResponse(
            tool_id="refactor.rename_symbol", success=True, message="done", value={"n": 2}
        )
        assert executor.calls == [("refactor.rename_symbol", GOOD_ARGS)]

    def test_invalid_arguments_never_reach_the_executor(self, make_service: ServiceFactory) -> None:
        """INVALID_ARGUMENTS lists every problem with its JSON path and nothing runs."""
        executor = _RecordingExecutor(CallOutcome(success=True))
        service = make_service(executor=executor)
        with pytest.raises(DiscoveryError, match=r"^INVALID_ARGUMENTS: arguments for") as info:
            service.call_tool("refactor.rename_symbol", {"symbol": 1, "dry_run": "yes"})
        error = info.value
        assert error.violations == (
            SchemaViolation(path="$", message="missing required property 'project_root'"),
            SchemaViolation(path="$", message="missing required property 'new_name'"),
            SchemaViolation(path="$.symbol", message="expected string, got integer"),
            SchemaViolation(path="$.dry_run", message="expected boolean, got string"),
        )
        assert "$.symbol: expected string, got integer" in error.message
        assert error.next_action == (
            "fix every listed argument using expand_tool('refactor.rename_symbol') and call again"
        )
        assert error.to_failure().violations == error.violations
        assert executor.calls == []

    def test_arguments_must_be_an_object(self, make_service: ServiceFactory) -> None:
        """A non-mapping argument payload is one violation at the root."""
        service = make_service(executor=_RecordingExecutor(CallOutcome(success=True)))
        with pytest.raises(DiscoveryError) as info:
            service.call_tool("refactor.rename_symbol", cast("dict[str, JSONValue]", ["x"]))
        assert info.value.violations == (
            SchemaViolation(path="$", message="expected object, got list"),
        )

    def test_without_an_executor_calls_are_not_supported(self, service: ToolDiscovery) -> None:
        """CALL_NOT_SUPPORTED tells the caller to run the tool elsewhere."""
        with pytest.raises(DiscoveryError, match=r"^CALL_NOT_SUPPORTED") as info:
            service.call_tool("refactor.rename_symbol", GOOD_ARGS)
        assert info.value.next_action == (
            "run 'refactor.rename_symbol' through your own runtime with the schema from expand_tool"
        )

    def test_an_unknown_tool_cannot_be_called(self, make_service: ServiceFactory) -> None:
        """Calling a missing id is TOOL_NOT_FOUND, checked before the arguments."""
        service = make_service(executor=_RecordingExecutor(CallOutcome(success=True)))
        with pytest.raises(DiscoveryError, match="TOOL_NOT_FOUND"):
            service.call_tool("nope", {})

    def test_an_executor_exception_becomes_a_failed_call(
        self, make_service: ServiceFactory, events: list[object]
    ) -> None:
        """A raising executor yields success=False and the exception type in the event."""
        service = make_service(executor=_RecordingExecutor(RuntimeError("backend down")))
        response = service.call_tool("refactor.rename_symbol", GOOD_ARGS)
        assert response == CallResponse(
            tool_id="refactor.rename_symbol",
            success=False,
            message="refactor.rename_symbol failed: RuntimeError: backend down",
        )
        called = events[-1]
        assert isinstance(called, DiscoveryCalled)
        assert called.error_type == "RuntimeError"
        assert called.success is False

    def test_a_huge_executor_message_is_cut_in_the_failed_call(
        self, make_service: ServiceFactory, events: list[object]
    ) -> None:
        """The executor's exception text is bounded (TEXT_LIMIT), whatever its size."""
        huge = "x" * 1_000_000
        service = make_service(executor=_RecordingExecutor(RuntimeError(huge)))
        response = service.call_tool("refactor.rename_symbol", GOOD_ARGS)
        kept = "x" * (TEXT_LIMIT - 3) + "..."
        assert response.message == f"refactor.rename_symbol failed: RuntimeError: {kept}"
        assert response.success is False
        called = events[-1]
        assert isinstance(called, DiscoveryCalled)
        assert called.message == response.message


class _BlockingExecutor:
    """A legacy executor: ``execute`` is a plain method that blocks."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def execute(self, tool: CatalogTool, arguments: Mapping[str, JSONValue]) -> CallOutcome:
        self.threads.append(threading.current_thread())
        return CallOutcome(success=True, message=f"blocked for {arguments['symbol']}")


class TestBlockingExecutors:
    def test_a_blocking_executor_is_refused_with_the_fix(
        self, make_service: ServiceFactory
    ) -> None:
        """A plain execute would fail every call later; it is refused when configured."""
        with pytest.raises(ConfigValidationError, match=r"^_BlockingExecutor.execute must be a co"):
            make_service(executor=_BlockingExecutor())  # type: ignore[arg-type]  # the mistake under test
        with pytest.raises(ConfigValidationError, match=r"blocking_executor\(executor\)$") as info:
            make_service().bind(executor=_BlockingExecutor())  # type: ignore[arg-type]  # the mistake under test
        assert info.value.field_name == "executor"

    def test_blocking_executor_runs_it_on_a_worker_thread(
        self, make_service: ServiceFactory
    ) -> None:
        """The one wrapper for sync executors: the call blocks a worker thread, not the loop."""
        legacy = _BlockingExecutor()
        service = make_service(executor=blocking_executor(legacy))

        async def main() -> tuple[str, threading.Thread]:
            response = await service.call_tool_async("refactor.rename_symbol", GOOD_ARGS)
            return response.message, threading.current_thread()

        message, loop_thread = asyncio.run(main())
        assert message == "blocked for old"
        (thread,) = legacy.threads
        assert thread is not loop_thread


class TestCallableExecutor:
    def test_functions_are_looked_up_by_tool_id(self, make_service: ServiceFactory) -> None:
        """A registered function runs with the validated arguments."""
        executor = CallableExecutor(
            functions={
                "refactor.rename_symbol": lambda args: CallOutcome(
                    success=True, message=f"renamed {args['symbol']}"
                )
            }
        )
        service = make_service(executor=executor)
        assert service.call_tool("refactor.rename_symbol", GOOD_ARGS).message == "renamed old"

    def test_async_functions_are_awaited_on_the_callers_loop(
        self, make_service: ServiceFactory
    ) -> None:
        """An async ToolFunction runs on the loop awaiting call_tool_async, not a thread."""
        loops: list[asyncio.AbstractEventLoop] = []

        async def rename(arguments: Mapping[str, JSONValue]) -> CallOutcome:
            loops.append(asyncio.get_running_loop())
            return CallOutcome(success=True, message=f"renamed {arguments['symbol']}")

        service = make_service(
            executor=CallableExecutor(functions={"refactor.rename_symbol": rename})
        )

        async def main() -> tuple[str, asyncio.AbstractEventLoop]:
            response = await service.call_tool_async("refactor.rename_symbol", GOOD_ARGS)
            return response.message, asyncio.get_running_loop()

        message, loop = asyncio.run(main())
        assert (message, loops) == ("renamed old", [loop])

    def test_a_plain_function_returning_a_coroutine_is_awaited(
        self, make_service: ServiceFactory
    ) -> None:
        """A sync callable that hands back a coroutine (a partial, a lambda) still works."""

        async def rename(arguments: Mapping[str, JSONValue]) -> CallOutcome:
            return CallOutcome(success=True, message=f"late {arguments['symbol']}")

        def later(arguments: Mapping[str, JSONValue]) -> Awaitable[CallOutcome]:
            return rename(arguments)

        service = make_service(
            executor=CallableExecutor(functions={"refactor.rename_symbol": later})
        )
        assert service.call_tool("refactor.rename_symbol", GOOD_ARGS).message == "late old"

    def test_a_tool_without_a_function_fails_softly(self, make_service: ServiceFactory) -> None:
        """No registered function gives a failed outcome, not an exception."""
        service = make_service(executor=CallableExecutor())
        response = service.call_tool("storage.put_object", {})
        assert response.success is False
        assert response.message == "no implementation is registered for 'storage.put_object'"


def test_a_tool_function_gets_validated_arguments_and_returns_an_outcome(
    make_service: ServiceFactory,
) -> None:
    """ToolFunction is the public type of CallableExecutor's functions (see its docstring)."""
    seen: list[Mapping[str, JSONValue]] = []

    def rename(arguments: Mapping[str, JSONValue]) -> CallOutcome:
        seen.append(arguments)
        return CallOutcome(success=True, message="renamed", value={"changed_files": 3})

    function: ToolFunction = rename
    service = make_service(
        executor=CallableExecutor(functions={"refactor.rename_symbol": function})
    )
    arguments: dict[str, JSONValue] = {"project_root": "/src", "symbol": "a", "new_name": "b"}
    response = service.call_tool("refactor.rename_symbol", arguments)
    assert (response.success, response.message, response.value) == (
        True,
        "renamed",
        {"changed_files": 3},
    )
    assert seen == [arguments]
