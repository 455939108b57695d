"""The one path every tool call takes: arguments -> params -> context -> handler -> result.

Adapters, discovery's ``call_tool`` and tests all run tools through
:func:`execute_tool_call`, a coroutine (a turn's batch goes through
:func:`~weakincentives.runtime.execute_tool_calls`, made of the same steps): async
handlers are awaited on the running loop, sync ones run on a worker thread (or
inline, for ``run_in_thread=False``). Nothing a tool does, and nothing the model
sends, makes it raise: every problem becomes ``ToolResult(success=False, value=None,
message=...)`` naming the tool and the problem, and a ``ToolInvoked`` event is
published either way. Only the cancellation of the caller, ``KeyboardInterrupt`` and
``SystemExit`` escape.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from weakincentives.prompt import ExecutionScope, Tool
from weakincentives.runtime._arguments import decode_arguments
from weakincentives.runtime._bus import PublishResult
from weakincentives.runtime._events import ToolInvoked
from weakincentives.runtime._steps import (
    PreparedCall,
    ToolCall,
    ToolExecution,
    _Interrupted,
    finish,
    invoke,
    prepare,
)

__all__ = [
    "execute_tool_call",
    "publish_tool_invoked",
    "refuse_tool_call",
]

logger = logging.getLogger("weakincentives.runtime")


async def execute_tool_call(
    call: ToolCall,
    scope: ExecutionScope,
    *,
    tools: Sequence[Tool[Any, Any]] | None = None,
    retry_count: int = 0,
    publish: bool = True,
) -> ToolExecution:
    """Run ``call`` on the running loop; never raises for tool-level problems.

    ``tools`` defaults to the rendered prompt's tools. Async handlers are awaited here;
    sync handlers run on ``scope.executor`` (a worker thread) unless their tool sets
    ``run_in_thread=False``. ``publish=False`` leaves publishing the event to the caller
    (the loop publishes a turn's events in call order). A handler's own
    ``CancelledError`` is a failed result; ``KeyboardInterrupt`` and ``SystemExit``
    propagate, with no event published.
    """
    state = prepare(call, scope, tools, retry_count)
    if state.result is None:
        try:
            await invoke(state, scope)
        except _Interrupted as carried:
            raise carried.signal from None
    execution = finish(call, state, scope)
    if publish:
        publish_tool_invoked(scope, execution.event)
    return execution


def refuse_tool_call(call: ToolCall, scope: ExecutionScope, message: str) -> ToolExecution:
    """A call that is not run (the loop refused it): a failed result and its unpublished event.

    The event records the call like any other, so observers see what the model asked;
    publish it with :func:`publish_tool_invoked`.
    """
    state = PreparedCall(scope.clock(), None)
    state.arguments = decode_arguments(call.arguments)[0]
    state.fail(message)
    return finish(call, state, scope)


def publish_tool_invoked(scope: ExecutionScope, event: ToolInvoked) -> None:
    """Publish ``event`` on the scope's bus; subscriber failures are logged, never raised."""
    published = scope.event_bus.publish(event)
    if isinstance(published, PublishResult):
        for failure in published.errors:
            logger.warning(
                "subscriber %r failed on ToolInvoked for %r: %r",
                failure.handler,
                event.name,
                failure.error,
            )
