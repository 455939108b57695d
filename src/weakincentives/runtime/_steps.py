"""The steps of one tool call: prepare, run the handler, finish into a ``ToolExecution``.

:func:`~weakincentives.runtime.execute_tool_call` (one call) and
:func:`~weakincentives.runtime.execute_tool_calls` (a turn's batch) are made of these
steps and nothing else. Preparing and finishing are plain functions, so a worker
thread can run a whole sync call without a hop back to the loop; running the handler
has an async flavour (:func:`invoke`, on the loop) and a worker-thread flavour
(:func:`run_here`), which share every rule:

- an ``Exception`` from the handler is a failed ``ToolResult`` the model reads;
- a ``CancelledError`` the handler raised itself (the evaluation was not cancelled)
  is a failed result too, so a turn never loses a call;
- so is any other ``BaseException`` it raised (``GeneratorExit``, a library's own
  signal such as pytest's ``Failed``), as the exception named in the message;
- ``KeyboardInterrupt`` and ``SystemExit`` are carried out as :class:`_Interrupted`, a
  ``BaseException`` that crosses tasks and threads without stopping the event loop
  (asyncio re-raises those two out of the loop from any task), and are raised again
  as themselves where the call was awaited.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

import weakincentives._tracing as tracing
from weakincentives._bounded import clip, exception_text, listing, quote
from weakincentives._direct import direct_constructor
from weakincentives.errors import ParseError, SerdeError, ToolValidationError
from weakincentives.prompt import (
    ExecutionScope,
    Tool,
    ToolContext,
    ToolInvocationContext,
    ToolResult,
)
from weakincentives.runtime._arguments import decode_arguments, field_problems, fresh_copy
from weakincentives.runtime._events import ArgumentsText, ToolInvoked, make_tool_invoked
from weakincentives.serde import JSONValue, detached, parse, parse_json, shares_input

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = [
    "PreparedCall",
    "ToolCall",
    "ToolExecution",
    "finish",
    "invoke",
    "prepare",
    "prepare_in_two_steps",
    "run_here",
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecution:
    """The outcome of one call: the result for the model, plus what observers need."""

    call: ToolCall
    tool: Tool[Any, Any] | None = field(default=None, compare=False, metadata={"stored": False})
    """The tool that ran; None when the name was unknown. In-process only: a stored
    execution keeps the tool's name (``call.name``), and loads with None here."""
    params: object
    """The parsed params; None when parsing failed or never happened."""
    result: ToolResult[Any]
    event: ToolInvoked
    """The event published for this call."""
    exception: BaseException | None = field(default=None, compare=False)
    """The original exception behind a failure, if any."""


class _Interrupted(BaseException):
    """A handler's ``KeyboardInterrupt`` or ``SystemExit``, on its way to the caller.

    Not an ``Exception``, so no ``except Exception`` on the way swallows it as a tool
    failure; not one of the two, so asyncio does not stop the loop when a task ends
    with it. Whoever awaited the call raises :attr:`signal` again.
    """

    def __init__(self, signal: KeyboardInterrupt | SystemExit) -> None:
        super().__init__(signal)
        self.signal = signal


class PreparedCall:
    """One call while it runs: filled in step by step, then frozen into a ToolExecution.

    Mutable and private: every step of the hot path writes here instead of building a
    frozen record of its own.
    """

    __slots__ = (
        "arguments",
        "context",
        "exception",
        "params",
        "recorded_params",
        "result",
        "span",
        "started",
        "tool",
    )

    def __init__(
        self, started: datetime, tool: Tool[Any, Any] | None, span: Span | None = None
    ) -> None:
        self.started = started
        self.tool = tool
        self.span = span
        """The call's ``execute_tool`` span (None when tracing is off)."""
        self.arguments: JSONValue | ArgumentsText = None
        """What the model sent, as recorded on the event (never the handler's copy): decoded
        JSON, or the text the params were parsed from, which the event decodes on read."""
        self.params: object = None
        """The params the handler gets."""
        self.recorded_params: object = None
        """The params as parsed, for the event: shares no list or dict with :attr:`params`."""
        self.context: ToolContext | None = None
        self.result: ToolResult[Any] | None = None
        """Set once the call has an outcome; None while the handler is still to run."""
        self.exception: BaseException | None = None

    def fail(self, message: str, exception: BaseException | None = None) -> None:
        self.result = _failure(message)
        self.exception = exception


# Every call builds these from values already checked: skip their frozen __init__.
_make_invocation = direct_constructor(ToolInvocationContext)
_make_context = direct_constructor(ToolContext)
_make_event = make_tool_invoked  # ToolInvoked.arguments is a property over its slot
_make_execution = direct_constructor(ToolExecution)


def prepare(
    call: ToolCall,
    scope: ExecutionScope,
    tools: Sequence[Tool[Any, Any]] | Mapping[str, Tool[Any, Any]] | None,
    retry_count: int = 0,
) -> PreparedCall:
    """Find the tool, parse the arguments, build the context; or fail the call.

    JSON text is parsed in one pass (``serde.parse_json``, whose value is exactly what
    decoding and then parsing give) and recorded as the text itself. Text it refuses,
    and mapping arguments, take :func:`prepare_in_two_steps`, which decides (blank text
    is ``{}`` there) and words every failure.
    """
    started = scope.clock()
    rendered = scope.rendered_prompt
    if tools is None:
        tool = rendered.tool(call.name) if rendered is not None else None
    elif isinstance(tools, Mapping):
        tool = tools.get(call.name)
    else:
        tool = next((candidate for candidate in tools if candidate.name == call.name), None)
    state = PreparedCall(started, tool, _call_span(call, tool, scope))
    text = call.arguments
    if tool is not None and tool.handler is not None and isinstance(text, str):
        try:
            # Called here, not through a helper: this is the whole cost of a valid call's
            # decoding and validation (benchmarks/bench_peers.py's validation row).
            state.params = parse_json(tool.spec.params_type, text)
        except SerdeError:
            pass  # the two steps decide, and word a failure in the model's terms
        else:
            state.arguments = ArgumentsText(text)
            _ready(state, call, scope, tool, retry_count)
            return state
    prepare_in_two_steps(state, call, scope, tools, retry_count)
    return state


def prepare_in_two_steps(
    state: PreparedCall,
    call: ToolCall,
    scope: ExecutionScope,
    tools: Sequence[Tool[Any, Any]] | Mapping[str, Tool[Any, Any]] | None,
    retry_count: int = 0,
) -> None:
    """Decode the arguments, then parse them (or fail the call): the reference path.

    :func:`prepare` comes here whenever its one pass gives up, so every failure report
    (what the model reads, the recorded arguments, the exception) is this function's.
    """
    tool = state.tool
    arguments, problem = decode_arguments(call.arguments)
    state.arguments = arguments
    if tool is None:
        rendered = scope.rendered_prompt
        available = tools if tools is not None else (rendered.tools if rendered else ())
        names = [item if isinstance(item, str) else item.name for item in available]
        named = listing(names, limit=_TOOLS_LISTED) or "none"
        state.fail(f"Unknown tool {quote(call.name, _NAME_LIMIT)}. Available tools: {named}.")
        return
    if tool.handler is None:
        state.fail(f"Tool {tool.name!r} cannot run: it has no handler.")
        return
    if problem is not None:
        state.fail(f"Invalid arguments for tool {tool.name!r}: {problem}.")
        return
    spec = tool.spec
    try:
        state.params = parse(spec.params_type, arguments)
    except ParseError as exc:
        logger.info("rejected arguments for tool %r: %s", tool.name, exc.message)
        state.fail(_invalid_arguments(tool.name, spec.params_type, arguments, exc), exc)
        return
    # The handler may change its params' dicts and lists; the record keeps what was sent.
    # Parsing builds typed containers anew, so only params that hold raw JSON (Any,
    # JSONValue fields) can share the record's containers and need a copy.
    if shares_input(spec.params_type):
        state.arguments = fresh_copy(call.arguments, arguments)
    _ready(state, call, scope, tool, retry_count)


def _ready(
    state: PreparedCall,
    call: ToolCall,
    scope: ExecutionScope,
    tool: Tool[Any, Any],
    retry_count: int,
) -> None:
    """Build the handler's context and the params to record, once the params parsed."""
    invocation = _make_invocation(
        invocation_id=call.call_id,
        timestamp=state.started,
        retry_count=retry_count,
        parent_message_id=call.parent_message_id,
    )
    state.context = _make_context(scope=scope, tool=tool, invocation=invocation)
    # The recorded params are a copy only when the params hold a list or a dict.
    state.recorded_params = detached(state.params)


def _invalid_arguments(
    name: str, params_type: type[Any], arguments: JSONValue, error: ParseError
) -> str:
    """What was wrong with the arguments: every field's problem when there are several."""
    problems = field_problems(params_type, arguments)
    if problems and not any(problem.endswith(f" at {error.path}") for problem in problems):
        # A constraint of the field's metadata (a bound, a length) only parsing sees.
        problems.insert(0, error.message)
    if len(problems) < 2:
        return f"Invalid arguments for tool {name!r}: {clip(error.message, _MESSAGE_LIMIT)}."
    listed = "; ".join(problems)
    return clip(
        f"Invalid arguments for tool {name!r}: {len(problems)} problems: {listed}.",
        _MESSAGE_LIMIT,
    )


def _handler_call(state: PreparedCall) -> Callable[[], object]:
    tool = cast("Tool[Any, Any]", state.tool)
    handler = cast("Callable[..., object]", tool.handler)
    params, context = state.params, state.context
    if tool.takes_context:
        return lambda: handler(params, context=context)
    return lambda: handler(params)


async def invoke(state: PreparedCall, scope: ExecutionScope) -> None:
    """Run the prepared call's handler from the loop: awaited, inline, or on ``scope.executor``."""
    tool = cast("Tool[Any, Any]", state.tool)
    call = _handler_call(state)
    token = tracing.enter(state.span)  # what the handler does is part of the call's span
    try:
        if tool.is_async or not tool.run_in_thread:
            produced = call()
        else:
            loop = asyncio.get_running_loop()
            context = contextvars.copy_context()
            outcome = await loop.run_in_executor(scope.executor, context.run, _settled, call)
            if isinstance(outcome, _Signal):
                raise outcome.error  # a failure or interrupt from the thread, now on the loop
            produced = outcome
        if not isinstance(produced, ToolResult) and inspect.isawaitable(produced):
            produced = await produced
    except Exception as exc:
        _raised(state, exc)
        return
    except asyncio.CancelledError as exc:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise  # the evaluation is being cancelled: not the tool's doing
        _cancelled(state, exc)
        return
    except (KeyboardInterrupt, SystemExit) as exc:
        raise _Interrupted(exc) from None
    except BaseException as exc:  # GeneratorExit, a library's own signal: the tool failed
        _raised(state, exc)
        return
    finally:
        tracing.leave(token)
    _returned(state, produced)


def run_here(state: PreparedCall, loop: asyncio.AbstractEventLoop) -> _Interrupted | None:
    """Run the prepared call's sync handler on this (worker) thread.

    A thread is never cancelled by the loop, so any ``CancelledError`` is the
    handler's own. An awaitable the handler returns is awaited on ``loop``.
    Returns the interrupt to carry to the loop, if the handler raised one.
    """
    token = tracing.enter(state.span)
    try:
        outcome = _settled(_handler_call(state))
        if not isinstance(outcome, _Signal | ToolResult) and inspect.isawaitable(outcome):
            outcome = asyncio.run_coroutine_threadsafe(_awaited(outcome), loop).result()
    finally:
        tracing.leave(token)
    if not isinstance(outcome, _Signal):
        _returned(state, outcome)
        return None
    error = outcome.error
    if isinstance(error, KeyboardInterrupt | SystemExit):
        return _Interrupted(error)
    if isinstance(error, asyncio.CancelledError):
        _cancelled(state, error)
    else:
        _raised(state, error)
    return None


@dataclass(frozen=True, slots=True)
class _Signal:
    """What a handler raised on a worker thread, returned instead of raised.

    A ``BaseException`` raised through a ``concurrent.futures`` future and awaited in a
    task would stop the loop (``KeyboardInterrupt``) or look like the task's own
    cancellation (``CancelledError``); as a value it reaches the loop intact.
    """

    error: BaseException


def _settled(call: Callable[[], object]) -> object:
    try:
        return call()
    except BaseException as exc:
        return _Signal(exc)


async def _awaited(awaitable: object) -> object:
    try:
        return await cast("asyncio.Future[object]", awaitable)
    except BaseException as exc:
        return _Signal(exc)


def _raised(state: PreparedCall, exc: BaseException) -> None:
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


def _cancelled(state: PreparedCall, exc: asyncio.CancelledError) -> None:
    name = cast("Tool[Any, Any]", state.tool).name
    logger.info("tool %r was cancelled by its own code", name)
    state.fail(f"Tool {name!r} failed: its work was cancelled before it finished.", exc)


def _returned(state: PreparedCall, produced: object) -> None:
    if produced.__class__ is ToolResult or isinstance(produced, ToolResult):
        # ToolResult checks its own fields when built, so a result here is well formed.
        state.result = produced
        return
    name = cast("Tool[Any, Any]", state.tool).name
    state.fail(f"Tool {name!r} returned {type(produced).__name__}, not a ToolResult.")


def finish(call: ToolCall, state: PreparedCall, scope: ExecutionScope) -> ToolExecution:
    """Freeze ``state`` into the execution and its (unpublished) ``ToolInvoked`` event."""
    rendered_output, recorded = _render_output(call.name, state)
    result = cast("ToolResult[Any]", state.result)
    if state.span is not None:
        _end_call_span(state.span, result, state.exception)
    event = _make_event(
        evaluation_id=scope.evaluation_id,
        prompt_name=scope.prompt.name,
        adapter=scope.adapter_name,
        session_id=scope.session.session_id,
        name=call.name,
        call_id=call.call_id,
        arguments=state.arguments,
        params=state.recorded_params,
        result=recorded,
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


def _render_output(name: str, state: PreparedCall) -> tuple[str, ToolResult[Any]]:
    """The payload's text and the result to record; a payload that fails either fails the call.

    The recorded result holds a copy of a value with lists or dicts in it, so that the
    handler, keeping its value, cannot change the record afterwards.
    """
    result = cast("ToolResult[Any]", state.result)
    try:
        # Rendering is the only step of building the model's text that can fail: it
        # fails now, as a failed result, never while the reply to the provider is built.
        rendered = result.render()
        value = result.value
        kept = detached(value)  # RecursionError for a value that contains itself
    except Exception as exc:
        description = exception_text(exc)
        logger.info("result of tool %r could not be rendered: %s", name, description)
        state.fail(f"Tool {name!r} returned a value that cannot be rendered: {description}", exc)
        return "", cast("ToolResult[Any]", state.result)
    if kept is value:
        return rendered, result
    return rendered, _copy_result(result, kept)


def _copy_result(result: ToolResult[Any], value: object) -> ToolResult[Any]:
    copied = copy.copy(result)  # every field as it is, without checking them again
    object.__setattr__(copied, "value", value)
    return copied


def _telemetry(result: ToolResult[Any]) -> Mapping[str, JSONValue]:
    value = result.value
    # The method is looked up on the type: a runtime Protocol check costs far more.
    telemetry = getattr(type(value), "telemetry", None)
    if value is None or not callable(telemetry):
        return _NO_TELEMETRY
    try:
        facts: Mapping[str, JSONValue] = telemetry(value)
        return MappingProxyType(detached(dict(facts)))
    except Exception as exc:
        logger.info("telemetry of a %s result failed: %s", type(value).__name__, exc)
        return _NO_TELEMETRY


_NO_TELEMETRY: Mapping[str, JSONValue] = MappingProxyType({})


def _call_span(call: ToolCall, tool: Tool[Any, Any] | None, scope: ExecutionScope) -> Span | None:
    """The call's ``execute_tool`` span (GenAI conventions), or None when tracing is off."""
    if not tracing.active():
        return None
    return tracing.start_span(
        f"execute_tool {call.name}",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.name,
            "gen_ai.tool.call.id": call.call_id,
            "gen_ai.tool.type": "function",
            "gen_ai.tool.description": None if tool is None else clip(tool.description, 1_000),
            "weakincentives.evaluation.id": scope.evaluation_id or None,
        },
    )


def _end_call_span(span: Span, result: ToolResult[Any], exception: BaseException | None) -> None:
    """A failed call marks its span (the exception's class, else ``tool_error``); then end it."""
    if not result.success:
        kind = "tool_error" if exception is None else type(exception).__name__
        tracing.fail_span(span, kind, clip(result.message, _MESSAGE_LIMIT))
    tracing.end_span(span)


def _failure(message: str) -> ToolResult[Any]:
    return ToolResult(message=message, value=None, success=False)
