"""The spans of one evaluation: ``invoke_agent`` for the evaluation, ``chat`` per request.

Named and attributed as the OpenTelemetry GenAI conventions say (``specs/TRACING.md``):
the evaluation is an in-process agent invocation (``invoke_agent <prompt name>``,
kind ``INTERNAL``), each round's request a model call (``chat <model>``, kind
``CLIENT``) whose retries are span events. The evaluation span is current while the
loop runs, so tool calls (``execute_tool``, in ``runtime``), nested evaluations and
MCP calls become its children, on worker threads too (each call copies the context).
With tracing off every method returns at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import weakincentives._tracing as tracing
from weakincentives.errors import PromptEvaluationError, ProviderError
from weakincentives.prompt import Prompt
from weakincentives.runtime import TokenUsage

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from weakincentives.adapters._provider import Provider
    from weakincentives.adapters._turns import ModelTurn

__all__ = ["EvaluationSpans", "error_type", "provider_system"]

_SYSTEMS = {"openai": "openai", "openai-chat": "openai", "anthropic": "anthropic"}
"""Adapter names whose ``gen_ai.provider.name`` is a well-known value of the conventions."""


def provider_system(adapter_name: str) -> str:
    """``gen_ai.provider.name`` for an adapter: the conventions' value, or the adapter's name."""
    return _SYSTEMS.get(adapter_name, adapter_name)


def error_type(error: BaseException) -> str:
    """``error.type``: the HTTP status a provider answered with, else the exception's class."""
    if isinstance(error, ProviderError) and error.status_code is not None:
        return str(error.status_code)
    return type(error).__name__


class EvaluationSpans:
    """The evaluation's span and its requests' spans; inert when tracing is off."""

    __slots__ = ("_model", "_request", "_server", "_span", "_system")

    def __init__(
        self,
        provider: Provider[Any, Any],
        prompt: Prompt[Any],
        *,
        evaluation_id: str,
        session_id: object,
    ) -> None:
        self._system = provider_system(provider.name)
        self._model = provider.model
        self._server = _server_of(provider)
        self._request: Span | None = None
        self._span = tracing.start_span(
            f"invoke_agent {prompt.name}",
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.provider.name": self._system,
                "gen_ai.agent.name": prompt.name,
                "gen_ai.request.model": self._model,
                "gen_ai.conversation.id": None if session_id is None else str(session_id),
                "weakincentives.evaluation.id": evaluation_id,
                "weakincentives.prompt.ns": prompt.ns,
                "weakincentives.prompt.key": prompt.key,
            },
        )

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Make the evaluation span current while the loop runs; end it afterwards."""
        try:
            with tracing.current(self._span):
                yield
        finally:
            tracing.end_span(self._span)

    def finished(self, *, usage: TokenUsage, rounds: int, tool_calls: int) -> None:
        """The evaluation answered (or halted): its totals."""
        tracing.set_attributes(self._span, _totals(usage, rounds, tool_calls))

    def failed(self, phase: str, error: BaseException, *, usage: TokenUsage, rounds: int) -> None:
        """The evaluation raised: ``error.type``, the phase and the message."""
        if self._span is None:
            return
        tracing.set_attributes(
            self._span, {**_totals(usage, rounds, None), "weakincentives.error.phase": phase}
        )
        reason = error.reason if isinstance(error, PromptEvaluationError) else str(error)
        tracing.fail_span(self._span, error_type(error), reason or type(error).__name__)

    @contextlib.contextmanager
    def request(self, round_number: int, max_tokens: int | None) -> Iterator[None]:
        """The span of one round's request: current while it is sent and read, then ended.

        An exception leaving the block fails the span with its ``error.type``.
        """
        span = tracing.start_span(
            f"chat {self._model}" if self._model else "chat",
            kind="client",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": self._system,
                "gen_ai.request.model": self._model,
                "gen_ai.request.max_tokens": max_tokens,
                "server.address": self._server[0],
                "server.port": self._server[1],
                "weakincentives.round": round_number,
            },
        )
        self._request = span
        try:
            with tracing.current(span):
                yield
        except BaseException as error:
            reason = error.reason if isinstance(error, PromptEvaluationError) else str(error)
            tracing.fail_span(span, error_type(error), reason or type(error).__name__)
            raise
        finally:
            self._request = None
            tracing.end_span(span)

    def replied(self, turn: ModelTurn, reply: object) -> None:
        """The round's reply was read: response id and model, and its token usage."""
        model = reply.get("model") if isinstance(reply, Mapping) else None
        usage = turn.usage
        tracing.set_attributes(
            self._request,
            {
                "gen_ai.response.id": turn.response_id,
                "gen_ai.response.model": model if isinstance(model, str) else None,
                "gen_ai.usage.input_tokens": usage.input_tokens,
                "gen_ai.usage.output_tokens": usage.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": usage.cached_input_tokens or None,
                "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens or None,
                "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens or None,
            },
        )
        if isinstance(model, str):
            tracing.set_attributes(self._span, {"gen_ai.response.model": model})

    def retried(self, attempt: int, delay: float, failure: ProviderError) -> None:
        """An attempt of the current request failed and is sent again: a ``retry`` event."""
        tracing.add_event(
            self._request,
            "retry",
            {
                "weakincentives.retry.attempt": attempt,
                "weakincentives.retry.delay_s": delay,
                "error.type": error_type(failure),
                "error.message": failure.reason,
            },
        )


def _totals(usage: TokenUsage, rounds: int, tool_calls: int | None) -> dict[str, int | None]:
    return {
        "gen_ai.usage.input_tokens": usage.input_tokens,
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "weakincentives.rounds": rounds,
        "weakincentives.tool_calls": tool_calls,
    }


def _server_of(provider: object) -> tuple[str | None, int | None]:
    """The host and port an SDK provider's client talks to (``server.address``/``port``)."""
    url = getattr(getattr(provider, "sdk_client", None), "base_url", None)
    host = getattr(url, "host", None)
    if not isinstance(host, str) or not host:
        return None, None
    port = getattr(url, "port", None)
    if not isinstance(port, int):
        port = {"https": 443, "http": 80}.get(str(getattr(url, "scheme", "")))
    return host, port
