"""The one path every tool call takes: arguments -> params -> context -> handler -> result.

Adapters, discovery's ``call_tool`` and tests all run tools through
:func:`execute_tool_call_async` (the loop) or its synchronous twin
:func:`execute_tool_call`; both share every step but the handler's invocation.
Nothing a tool does, and nothing the model sends, makes them raise: every problem
becomes ``ToolResult(success=False, value=None, message=...)`` naming the tool and the
problem, and a ``ToolInvoked`` event is published either way. Only cancellation,
``KeyboardInterrupt``, ``SystemExit`` and other non-``Exception`` signals escape.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, cast

from weakincentives._bounded import clip, exception_text, listing, quote
from weakincentives._direct import direct_constructor
from weakincentives._portal import run_on_caller_loop
from weakincentives.errors import ParseError, ToolValidationError
from weakincentives.prompt import (
    EvaluatingAdapter,
    EventPublisher,
    Prompt,
    ProviderRequest,
    RenderedPrompt,
    ResponseAccumulator,
    SessionProtocol,
    Tool,
    ToolContext,
    ToolInvocationContext,
    ToolResult,
    build_tool_context,
)
from weakincentives.runtime._arguments import decode_arguments, fresh_copy
from weakincentives.runtime._bus import PublishResult
from weakincentives.runtime._events import ToolInvoked
from weakincentives.serde import JSONValue, parse, shares_input

__all__ = [
    "ExecutionScope",
    "ToolCall",
    "ToolExecution",
    "execute_tool_call",
    "execute_tool_call_async",
    "publish_tool_invoked",
    "refuse_tool_call",
]

logger = logging.getLogger("weakincentives.runtime")

_NAME_LIMIT = 120
"""Characters of an unknown tool name (the model's text) quoted back to it."""
_TOOLS_LISTED = 20
"""Tools named in an unknown-tool message before the rest are counted."""
_MESSAGE_LIMIT = 2_000
"""Characters kept of a parse error or a tool's refusal (both already bound what they
quote from the model; this is the last guard)."""


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
    bus: EventPublisher
    rendered: RenderedPrompt[Any] | None = None
    adapter: EvaluatingAdapter | None = None
    adapter_name: str = "direct"
    evaluation_id: str = ""
    request: ProviderRequest | None = None
    accumulator: ResponseAccumulator | None = None
    extras: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))
    clock: Callable[[], datetime] = _now
    executor: concurrent.futures.Executor | None = None
    """Where sync handlers run under the async path (None: the loop's default executor)."""


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


class _Call:
    """One call while it runs: filled in step by step, then frozen into a ToolExecution.

    Mutable and private: every step of the hot path writes here instead of building a
    frozen record of its own.
    """

    __slots__ = ("arguments", "context", "exception", "params", "result", "started", "tool")

    def __init__(self, started: datetime, tool: Tool[Any, Any] | None) -> None:
        self.started = started
        self.tool = tool
        self.arguments: JSONValue = None
        """What the model sent, decoded, as recorded on the event (never the handler's copy)."""
        self.params: object = None
        self.context: ToolContext | None = None
        self.result: ToolResult[Any] | None = None
        """Set once the call has an outcome; None while the handler is still to run."""
        self.exception: BaseException | None = None

    def fail(self, message: str, exception: BaseException | None = None) -> None:
        self.result = _failure(message)
        self.exception = exception


# Every call builds these from values already checked: skip their frozen __init__.
_make_invocation = direct_constructor(ToolInvocationContext)
_make_event = direct_constructor(ToolInvoked)
_make_execution = direct_constructor(ToolExecution)


def execute_tool_call(
    call: ToolCall,
    scope: ExecutionScope,
    *,
    tools: Sequence[Tool[Any, Any]] | None = None,
    retry_count: int = 0,
    publish: bool = True,
) -> ToolExecution:
    """Run ``call`` in the calling thread and publish its ``ToolInvoked``; never raises.

    ``tools`` defaults to the rendered prompt's tools. An ``async def`` handler runs on
    the evaluation's own loop when called from one of its worker threads (a sync
    handler running a nested tool), else on the library's shared background loop.
    ``publish=False`` leaves publishing the event to the caller.
    """
    state = _prepare(call, scope, tools, retry_count)
    if state.result is None:
        _invoke_sync(state)
    execution = _finish(call, state, scope)
    if publish:
        publish_tool_invoked(scope, execution.event)
    return execution


async def execute_tool_call_async(
    call: ToolCall,
    scope: ExecutionScope,
    *,
    tools: Sequence[Tool[Any, Any]] | None = None,
    retry_count: int = 0,
    publish: bool = True,
) -> ToolExecution:
    """Run ``call`` on the running loop; never raises for tool-level problems.

    Async handlers are awaited here; sync handlers run on ``scope.executor`` (a worker
    thread) unless their tool sets ``run_in_thread=False``. ``publish=False`` leaves
    publishing the event to the caller (the loop publishes a turn's events in call order).
    """
    state = _prepare(call, scope, tools, retry_count)
    if state.result is None:
        await _invoke_async(state, scope)
    execution = _finish(call, state, scope)
    if publish:
        publish_tool_invoked(scope, execution.event)
    return execution


def refuse_tool_call(call: ToolCall, scope: ExecutionScope, message: str) -> ToolExecution:
    """A call that is not run (the loop refused it): a failed result and its unpublished event.

    The event records the call like any other, so observers see what the model asked;
    publish it with :func:`publish_tool_invoked`.
    """
    state = _Call(scope.clock(), None)
    state.arguments = decode_arguments(call.arguments)[0]
    state.fail(message)
    return _finish(call, state, scope)


def publish_tool_invoked(scope: ExecutionScope, event: ToolInvoked) -> None:
    """Publish ``event`` on the scope's bus; subscriber failures are logged, never raised."""
    published = scope.bus.publish(event)
    if isinstance(published, PublishResult):
        for failure in published.errors:
            logger.warning(
                "subscriber %r failed on ToolInvoked for %r: %r",
                failure.handler,
                event.name,
                failure.error,
            )


def _prepare(
    call: ToolCall,
    scope: ExecutionScope,
    tools: Sequence[Tool[Any, Any]] | None,
    retry_count: int,
) -> _Call:
    """Find the tool, decode and parse the arguments, build the context; or fail the call."""
    started = scope.clock()
    if tools is not None:
        tool = next((candidate for candidate in tools if candidate.name == call.name), None)
    else:
        tool = scope.rendered.tool(call.name) if scope.rendered is not None else None
    state = _Call(started, tool)
    arguments, problem = decode_arguments(call.arguments)
    state.arguments = arguments
    if tool is None:
        available = tools if tools is not None else (scope.rendered.tools if scope.rendered else ())
        names = listing([tool.name for tool in available], limit=_TOOLS_LISTED) or "none"
        state.fail(f"Unknown tool {quote(call.name, _NAME_LIMIT)}. Available tools: {names}.")
        return state
    if tool.handler is None:
        state.fail(f"Tool {tool.name!r} cannot run: it has no handler.")
        return state
    if problem is not None:
        state.fail(f"Invalid arguments for tool {tool.name!r}: {problem}.")
        return state
    spec = tool.spec
    try:
        state.params = parse(spec.params_type, arguments)
    except ParseError as exc:
        logger.info("rejected arguments for tool %r: %s", tool.name, exc.message)
        state.fail(
            f"Invalid arguments for tool {tool.name!r}: {clip(exc.message, _MESSAGE_LIMIT)}.", exc
        )
        return state
    state.context = build_tool_context(
        prompt=scope.prompt,
        tool=tool,
        session=scope.session,
        event_bus=scope.bus,
        invocation=_make_invocation(
            invocation_id=call.call_id,
            timestamp=started,
            retry_count=retry_count,
            parent_message_id=call.parent_message_id,
            evaluation_id=scope.evaluation_id,
            adapter_name=scope.adapter_name,
        ),
        rendered_prompt=scope.rendered,
        adapter=scope.adapter,
        request=scope.request,
        response_accumulator=scope.accumulator,
        extras=scope.extras,
    )
    # The handler may change its params' dicts and lists; the record keeps what was sent.
    # Parsing builds typed containers anew, so only params that hold raw JSON (Any,
    # JSONValue fields) can share the record's containers and need a copy.
    if shares_input(spec.params_type):
        state.arguments = fresh_copy(call.arguments, arguments)
    return state


def _handler_call(state: _Call) -> Callable[[], object]:
    tool = cast("Tool[Any, Any]", state.tool)
    handler = cast("Callable[..., object]", tool.handler)
    params, context = state.params, state.context
    if tool.takes_context:
        return lambda: handler(params, context=context)
    return lambda: handler(params)


def _invoke_sync(state: _Call) -> None:
    tool = cast("Tool[Any, Any]", state.tool)
    handler = cast("Callable[..., object]", tool.handler)
    try:
        if tool.takes_context:
            produced = handler(state.params, context=state.context)
        else:
            produced = handler(state.params)
        if not isinstance(produced, ToolResult) and inspect.isawaitable(produced):
            produced = run_on_caller_loop(_awaited(produced))
    except Exception as exc:
        _raised(state, exc)
        return
    _returned(state, produced)


async def _invoke_async(state: _Call, scope: ExecutionScope) -> None:
    tool = cast("Tool[Any, Any]", state.tool)
    call = _handler_call(state)
    try:
        if tool.is_async or not tool.run_in_thread:
            produced = call()
        else:
            loop = asyncio.get_running_loop()
            context = contextvars.copy_context()
            produced = await loop.run_in_executor(scope.executor, context.run, call)
        if not isinstance(produced, ToolResult) and inspect.isawaitable(produced):
            produced = await produced
    except Exception as exc:
        _raised(state, exc)
        return
    _returned(state, produced)


async def _awaited(awaitable: object) -> object:
    return await cast("asyncio.Future[object]", awaitable)


def _raised(state: _Call, exc: Exception) -> None:
    name = cast("Tool[Any, Any]", state.tool).name
    if isinstance(exc, ToolValidationError):
        logger.info("tool %r rejected the call: %s", name, exc.message)
        state.fail(
            f"Tool {name!r} rejected the call: {clip(str(exc.message), _MESSAGE_LIMIT)}", exc
        )
        return
    # Handlers failing is part of the contract (the model reads why); it is news to an
    # operator only when they ask for it, so the traceback goes to DEBUG.
    description = exception_text(exc)
    logger.info("tool %r failed: %s", name, description)
    logger.debug("traceback of tool %r", name, exc_info=exc)
    state.fail(f"Tool {name!r} failed: {description}", exc)


def _returned(state: _Call, produced: object) -> None:
    if produced.__class__ is ToolResult or isinstance(produced, ToolResult):
        # ToolResult checks its own fields when built, so a result here is well formed.
        state.result = produced
        return
    name = cast("Tool[Any, Any]", state.tool).name
    state.fail(f"Tool {name!r} returned {type(produced).__name__}, not a ToolResult.")


def _finish(call: ToolCall, state: _Call, scope: ExecutionScope) -> ToolExecution:
    rendered_output = _render_output(call.name, state)
    result = cast("ToolResult[Any]", state.result)
    event = _make_event(
        evaluation_id=scope.evaluation_id,
        prompt_name=scope.prompt.name,
        adapter=scope.adapter_name,
        session_id=scope.session.session_id,
        name=call.name,
        call_id=call.call_id,
        arguments=state.arguments,
        params=state.params,
        result=result,
        rendered_output=rendered_output,
        started_at=state.started,
        finished_at=scope.clock(),
        telemetry=_telemetry(result),
        exception=state.exception,
    )
    return _make_execution(
        call=call,
        tool=state.tool,
        params=state.params,
        result=result,
        event=event,
        exception=state.exception,
    )


def _render_output(name: str, state: _Call) -> str:
    """The payload's text; a payload that cannot be rendered fails the call instead."""
    result = cast("ToolResult[Any]", state.result)
    try:
        # Rendering is the only step of building the model's text that can fail: it
        # fails now, as a failed result, never while the reply to the provider is built.
        rendered = result.render()
    except Exception as exc:
        description = exception_text(exc)
        logger.info("result of tool %r could not be rendered: %s", name, description)
        state.fail(f"Tool {name!r} returned a value that cannot be rendered: {description}", exc)
        return ""
    return rendered


def _telemetry(result: ToolResult[Any]) -> Mapping[str, JSONValue]:
    value = result.value
    # The method is looked up on the type: a runtime Protocol check costs far more.
    telemetry = getattr(type(value), "telemetry", None)
    if value is None or not callable(telemetry):
        return _NO_TELEMETRY
    try:
        facts: Mapping[str, JSONValue] = telemetry(value)
        return MappingProxyType(dict(facts))
    except Exception as exc:
        logger.info("telemetry of a %s result failed: %s", type(value).__name__, exc)
        return _NO_TELEMETRY


_NO_TELEMETRY: Mapping[str, JSONValue] = MappingProxyType({})


def _failure(message: str) -> ToolResult[Any]:
    return ToolResult(message=message, value=None, success=False)
