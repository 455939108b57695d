"""The loop's settings: limits, retries, disclosure and injectable time and identity."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from weakincentives.adapters._answer import OutputInstructions, render_output_instructions
from weakincentives.errors import ConfigValidationError

__all__ = ["AnswerSchemaMode", "Disclosure", "DisclosurePolicy", "LoopSettings", "RetryPolicy"]

type AnswerSchemaMode = Literal["without_tools", "always", "never"]
"""When a structured prompt's answer schema goes in the request's format field.

- ``without_tools``: only in requests that let the model call no tool: a prompt
  without tools, and the tools-free final turn the loop asks for when an answer does
  not fit. A server that enforces the schema as a grammar over the whole reply
  (llama.cpp) then never keeps the model from calling tools.
- ``always``: in every request, for services that let the model call tools while a
  schema is set (OpenAI, Anthropic).
- ``never``: only the prompt text states the answer's shape.
"""

type DisclosurePolicy = Literal["eager", "conservative", "batched"]
"""How many requested sections to open per re-render.

- ``eager``: every section the model asked for, at once (fewest round trips).
- ``conservative``: only the first one per re-render (smallest prompts; more round trips).
- ``batched``: like eager, and the sections opened so far are kept in the session, so
  later evaluations of the same prompt start with them open.
"""


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True, kw_only=True)
class Disclosure:
    """What ``evaluate`` does when the model calls the halting ``open_sections`` tool.

    By default the loop opens the requested sections, re-renders and carries the
    conversation on, up to ``max_retries`` re-renders, so a prompt with summarized
    sections returns a final answer (or raises). ``policy="manual"`` returns the halt
    to the caller instead (``response.halt``), for callers who drive retries themselves.
    """

    policy: DisclosurePolicy | Literal["manual"] = "eager"
    max_retries: int = 3
    """Re-renders allowed in one evaluation; one more request to open sections fails
    with phase ``tool``."""
    continue_conversation: bool = True
    """Carry the conversation on after a re-render (False: start over with the new render)."""

    def __post_init__(self) -> None:
        if self.policy not in ("eager", "conservative", "batched", "manual"):
            raise ConfigValidationError(
                "disclosure policy must be 'eager', 'conservative', 'batched' or 'manual', "
                f"got {self.policy!r}",
                config_type=Disclosure,
                field_name="policy",
                value=self.policy,
            )
        _check_count(Disclosure, "max_retries", self.max_retries, minimum=0)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPolicy:
    """Back-off between resends of a request that failed with a retryable error.

    The delay before retry ``n`` (1-based) is ``initial_delay * 2 ** (n - 1)``, capped at
    ``max_delay`` and shortened by up to ``jitter`` (a fraction) at random; a delay the
    provider asked for (``Retry-After``) is used instead when it is at most
    ``max_retry_after``. No retry starts if its delay would pass the deadline.
    """

    initial_delay: float = 0.5
    max_delay: float = 8.0
    jitter: float = 0.25
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        for name in ("initial_delay", "max_delay", "max_retry_after"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value < 0:
                raise ConfigValidationError(
                    f"RetryPolicy.{name} must be a number >= 0, got {value!r}",
                    config_type=RetryPolicy,
                    field_name=name,
                    value=value,
                )
        if not 0 <= self.jitter <= 1:
            raise ConfigValidationError(
                f"RetryPolicy.jitter must be between 0 and 1, got {self.jitter!r}",
                config_type=RetryPolicy,
                field_name="jitter",
                value=self.jitter,
            )

    def delay(self, retry: int, retry_after: float | None, random: float) -> float:
        """Seconds to wait before retry number ``retry``; ``random`` is in [0, 1)."""
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after:
            return retry_after
        backoff = min(self.initial_delay * 2.0 ** min(retry - 1, 64), self.max_delay)
        return backoff * (1 - self.jitter * random)


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopSettings:
    """Limits, policies and injectable sources of time and identity for the loop."""

    max_rounds: int = 16
    """Requests allowed per evaluation before giving up with phase ``tool``."""
    max_concurrency: int = 16
    """Tool calls of one turn that may run at the same time."""
    output_retries: int = 1
    """Times a final answer that does not fit the output type is sent back to the model
    with the parse error before the evaluation fails with phase ``parse`` (0: never)."""
    max_output_tokens: int | None = 4096
    """The cap on tokens the model may write per request (None: the provider's default)."""
    max_identical_calls: int = 3
    """How often one tool may be called with the same arguments in an evaluation; one
    more identical call fails the evaluation with phase ``tool`` (a model stuck in a loop)."""
    disclosure: Disclosure = field(default_factory=Disclosure)
    """What happens when the model opens summarized sections."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """Back-off for resending requests after retryable provider errors."""
    answer_schema: AnswerSchemaMode = "without_tools"
    """When the answer's schema is sent in the request's format field (see
    :data:`AnswerSchemaMode`). The answer is validated against it in every mode."""
    recover_text_tool_calls: bool = False
    """Read tool calls the model wrote as JSON text (fenced, tagged or the whole reply)
    as calls, for models that do not produce structured calls; streamed text that may
    be such a call is held back until the turn is read."""
    output_instructions: OutputInstructions | None = render_output_instructions
    """Renders the expected answer shape, appended to the prompt text when the prompt
    declares a structured output, so servers that ignore the request's schema field
    still show it to the model (None: only the request's schema field carries it)."""
    clock: Callable[[], datetime] = _now
    new_id: Callable[[], str] = _new_id
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    """Waits out a retry back-off (injectable so tests record delays instead of waiting)."""

    def __post_init__(self) -> None:
        _check_count(LoopSettings, "max_rounds", self.max_rounds, minimum=1)
        _check_count(LoopSettings, "max_concurrency", self.max_concurrency, minimum=1)
        _check_count(LoopSettings, "output_retries", self.output_retries, minimum=0)
        _check_count(LoopSettings, "max_identical_calls", self.max_identical_calls, minimum=1)
        if self.max_output_tokens is not None:
            _check_count(LoopSettings, "max_output_tokens", self.max_output_tokens, minimum=1)
        if self.answer_schema not in ("without_tools", "always", "never"):
            raise ConfigValidationError(
                "LoopSettings.answer_schema must be 'without_tools', 'always' or 'never', "
                f"got {self.answer_schema!r}",
                config_type=LoopSettings,
                field_name="answer_schema",
                value=self.answer_schema,
            )


def _check_count(owner: type[object], name: str, value: object, *, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigValidationError(
            f"{owner.__name__}.{name} must be an integer >= {minimum}, got {value!r}",
            config_type=owner,
            field_name=name,
            value=value,
        )
