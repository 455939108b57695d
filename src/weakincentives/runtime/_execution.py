"""The one path every tool call takes: arguments -> params -> context -> handler -> result.

Adapters, discovery's ``call_tool`` and tests all run tools through
:func:`execute_tool_call`. Nothing a tool does, and nothing the model sends, makes it
raise: every problem becomes ``ToolResult(success=False, value=None, message=...)``
naming the tool and the problem, and a ``ToolInvoked`` event is published either way.
Only ``KeyboardInterrupt``, ``SystemExit`` and other non-``Exception`` signals escape.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from weakincentives.errors import ParseError, ToolValidationError
from weakincentives.prompt import (
    Prompt,
    ProviderRequest,
    RenderedPrompt,
    ResponseAccumulator,
    Tool,
    ToolInvocationContext,
    ToolResult,
    build_tool_context,
)
from weakincentives.runtime._events import ToolInvoked
from weakincentives.serde import JSONValue, parse

if TYPE_CHECKING:
    from weakincentives.adapters import ProviderAdapter
    from weakincentives.runtime._bus import EventBus
    from weakincentives.runtime._session import SessionProtocol

__all__ = ["ExecutionScope", "ToolCall", "ToolExecution", "execute_tool_call"]

logger = logging.getLogger("weakincentives.runtime")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call as the model requested it, independent of any provider's wire format."""

    call_id: str
    """The provider's id for the call, echoed back with the result."""
    name: str
    """The tool name the model asked for."""
    arguments: str | Mapping[str, JSONValue]
    """JSON text (as most providers send it) or an already-decoded mapping."""
    parent_message_id: str | None = None
    """The provider response or message that contained the call."""


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExecutionScope:
    """What stays the same for every tool call of one evaluation."""

    prompt: Prompt[Any]
    session: SessionProtocol
    bus: EventBus
    rendered: RenderedPrompt[Any] | None = None
    adapter: ProviderAdapter | None = None
    adapter_name: str = "direct"
    evaluation_id: str = ""
    request: ProviderRequest | None = None
    accumulator: ResponseAccumulator | None = None
    extras: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    clock: Callable[[], datetime] = _now


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecution:
    """The outcome of one call: the result for the model, plus what observers need."""

    call: ToolCall
    tool: Tool[Any, Any] | None
    """The tool that ran; None when the name was unknown."""
    params: object
    """The parsed params; None when parsing failed or never happened."""
    result: ToolResult[Any]
    event: ToolInvoked
    """The event published for this call."""
    exception: BaseException | None = field(default=None, compare=False)
    """The original exception behind a failure, if any."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    params: object
    result: ToolResult[Any]
    exception: BaseException | None = None


def execute_tool_call(
    call: ToolCall,
    scope: ExecutionScope,
    *,
    tools: Sequence[Tool[Any, Any]] | None = None,
    retry_count: int = 0,
) -> ToolExecution:
    """Run ``call`` against ``tools`` (default: the rendered prompt's tools) and publish it.

    Never raises for tool-level problems; see the module docstring.
    """
    started = scope.clock()
    available = tools if tools is not None else (scope.rendered.tools if scope.rendered else ())
    tool = next((candidate for candidate in available if candidate.name == call.name), None)
    arguments, json_problem = _decoded_arguments(call.arguments)
    if tool is None:
        names = ", ".join(candidate.name for candidate in available) or "none"
        outcome = _Outcome(None, _failure(f"Unknown tool {call.name!r}. Available tools: {names}."))
    else:
        outcome = _run(
            tool,
            call=call,
            arguments=arguments,
            json_problem=json_problem,
            scope=scope,
            started=started,
            retry_count=retry_count,
        )
    rendered_output, outcome = _render_output(call.name, outcome)
    event = ToolInvoked(
        evaluation_id=scope.evaluation_id,
        prompt_name=scope.prompt.name,
        adapter=scope.adapter_name,
        session_id=scope.session.session_id,
        name=call.name,
        call_id=call.call_id,
        arguments=arguments,
        params=outcome.params,
        result=outcome.result,
        rendered_output=rendered_output,
        started_at=started,
        finished_at=scope.clock(),
        telemetry=_telemetry(outcome.result),
        exception=outcome.exception,
    )
    published = scope.bus.publish(event)
    for failure in published.errors:
        logger.warning(
            "subscriber %r failed on ToolInvoked for %r: %r",
            failure.handler,
            call.name,
            failure.error,
        )
    return ToolExecution(
        call=call,
        tool=tool,
        params=outcome.params,
        result=outcome.result,
        event=event,
        exception=outcome.exception,
    )


def _run(
    tool: Tool[Any, Any],
    *,
    call: ToolCall,
    arguments: JSONValue,
    json_problem: str | None,
    scope: ExecutionScope,
    started: datetime,
    retry_count: int,
) -> _Outcome:
    handler = tool.handler
    if handler is None:
        return _Outcome(None, _failure(f"Tool {tool.name!r} cannot run: it has no handler."))
    if json_problem is not None:
        return _Outcome(
            None,
            _failure(
                f"Invalid arguments for tool {tool.name!r}: arguments are not valid JSON "
                f"({json_problem})."
            ),
        )
    try:
        params = parse(tool.params_type, arguments)
    except ParseError as exc:
        logger.info("rejected arguments for tool %r: %s", tool.name, exc.message)
        return _Outcome(
            None, _failure(f"Invalid arguments for tool {tool.name!r}: {exc.message}."), exc
        )
    context = build_tool_context(
        prompt=scope.prompt,
        tool=tool,
        session=scope.session,
        event_bus=scope.bus,
        invocation=ToolInvocationContext(
            invocation_id=call.call_id,
            timestamp=started,
            retry_count=retry_count,
            parent_message_id=call.parent_message_id,
        ),
        rendered_prompt=scope.rendered,
        adapter=scope.adapter,
        request=scope.request,
        response_accumulator=scope.accumulator,
        extras=scope.extras,
    )
    try:
        if tool.takes_context:
            produced = cast("Callable[..., object]", handler)(params, context=context)
        else:
            produced = cast("Callable[[object], object]", handler)(params)
        if not isinstance(produced, ToolResult) and inspect.isawaitable(produced):
            produced = _await(produced)
    except ToolValidationError as exc:
        logger.info("tool %r rejected the call: %s", tool.name, exc.message)
        return _Outcome(
            params, _failure(f"Tool {tool.name!r} rejected the call: {exc.message}"), exc
        )
    except Exception as exc:
        logger.warning("tool %r raised", tool.name, exc_info=exc)
        return _Outcome(
            params, _failure(f"Tool {tool.name!r} failed: {type(exc).__name__}: {exc}"), exc
        )
    if not isinstance(produced, ToolResult):
        return _Outcome(
            params,
            _failure(f"Tool {tool.name!r} returned {type(produced).__name__}, not a ToolResult."),
        )
    return _Outcome(params, produced)


def _render_output(name: str, outcome: _Outcome) -> tuple[str, _Outcome]:
    try:
        return outcome.result.render(), outcome
    except Exception as exc:
        logger.warning("result of tool %r could not be rendered", name, exc_info=exc)
        failed = _failure(
            f"Tool {name!r} returned a value that cannot be rendered: {type(exc).__name__}: {exc}"
        )
        return "", _Outcome(outcome.params, failed, exc)


def _decoded_arguments(arguments: str | Mapping[str, JSONValue]) -> tuple[JSONValue, str | None]:
    """Decode JSON text; undecodable text is kept as is, with the decoder's complaint."""
    if not isinstance(arguments, str):
        return dict(arguments), None
    if not arguments.strip():
        return {}, None
    try:
        decoded: JSONValue = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return arguments, f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    return decoded, None


def _await(awaitable: Awaitable[object]) -> object:
    async def runner() -> object:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(runner())
    # Called from inside a running loop (a sync evaluate inside async code): a loop
    # cannot be re-entered, so the coroutine runs to completion on a worker thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, runner()).result()


def _telemetry(result: ToolResult[Any]) -> Mapping[str, JSONValue]:
    value = result.value
    # The method is looked up on the type: a runtime Protocol check costs far more.
    telemetry = getattr(type(value), "telemetry", None)
    if value is None or not callable(telemetry):
        return _NO_TELEMETRY
    facts: Mapping[str, JSONValue] = telemetry(value)
    return MappingProxyType(dict(facts))


_NO_TELEMETRY: Mapping[str, JSONValue] = MappingProxyType({})


def _failure(message: str) -> ToolResult[Any]:
    return ToolResult(message=message, value=None, success=False)
