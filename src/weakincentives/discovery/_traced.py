"""Spans for the discovery operations: ``discovery <operation>``, one per call.

The operations are what a model (or an MCP client) does to find a tool, so a trace
shows the search before the call: ``list``, ``search_tool_by_category``,
``search_nodes``, ``expand_tool`` and ``call_tool``. A refused operation carries its
``DiscoveryError`` code as ``error.type``; a call whose tool failed is a
``tool_error``. With tracing off the decorated methods run as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate

import weakincentives._tracing as tracing
from weakincentives.discovery._errors import DiscoveryError

__all__ = ["traced", "traced_async"]


def _span(operation: str, arguments: tuple[Any, ...]) -> Any:
    tool_id = arguments[0] if operation in {"expand_tool", "call_tool"} and arguments else None
    return tracing.start_span(
        f"discovery {operation}",
        attributes={
            "weakincentives.discovery.operation": operation,
            "weakincentives.discovery.tool_id": tool_id if isinstance(tool_id, str) else None,
        },
    )


def _failed(span: Any, error: BaseException) -> None:
    code = error.code if isinstance(error, DiscoveryError) else type(error).__name__
    tracing.fail_span(span, code, str(error))


def traced[S, **P, R](
    operation: str,
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Wrap a synchronous discovery operation in its span."""

    def decorate(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        @functools.wraps(method)
        def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            span = _span(operation, args)
            if span is None:
                return method(self, *args, **kwargs)
            try:
                with tracing.current(span):
                    return method(self, *args, **kwargs)
            except Exception as error:
                _failed(span, error)
                raise
            finally:
                tracing.end_span(span)

        return run

    return decorate


type _Async[S, **P, R] = Callable[Concatenate[S, P], Coroutine[Any, Any, R]]


def traced_async[S, **P, R](
    operation: str,
) -> Callable[[_Async[S, P, R]], _Async[S, P, R]]:
    """Wrap an async discovery operation in its span; an unsuccessful call is a tool error."""

    def decorate(method: _Async[S, P, R]) -> _Async[S, P, R]:
        @functools.wraps(method)
        async def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            span = _span(operation, args)
            if span is None:
                return await method(self, *args, **kwargs)
            try:
                with tracing.current(span):
                    result = await method(self, *args, **kwargs)
            except Exception as error:
                _failed(span, error)
                raise
            else:
                if getattr(result, "success", True) is False:
                    tracing.fail_span(span, "tool_error", str(getattr(result, "message", "")))
                return result
            finally:
                tracing.end_span(span)

        return run

    return decorate
