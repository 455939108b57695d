"""The one concrete adapter: the shared loop over a provider, async at the core.

``evaluate_async`` runs the loop on the caller's event loop; ``evaluate`` is the thin
synchronous entry that runs the same coroutine on the library's background loop, so
it also works from inside a running event loop (the caller's thread waits; prefer
``evaluate_async`` there, which does not block the loop).
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from weakincentives._portal import run_sync
from weakincentives.adapters._channels import resolve_channels
from weakincentives.adapters._disclosure import resume_items
from weakincentives.adapters._loop import Evaluation
from weakincentives.adapters._provider import Provider
from weakincentives.adapters._response import PromptResponse
from weakincentives.adapters._settings import Disclosure, DisclosurePolicy, LoopSettings
from weakincentives.adapters._turns import ConversationItem
from weakincentives.errors import ConfigValidationError, PromptValidationError
from weakincentives.prompt import (
    EventPublisher,
    Prompt,
    PromptTemplate,
    SessionProtocol,
    VisibilityOverrides,
)

__all__ = ["Adapter", "ProviderAdapter", "evaluate_with_disclosure", "merged_settings"]


def merged_settings(
    settings: LoopSettings | None,
    *,
    max_rounds: int | None = None,
    clock: Callable[[], datetime] | None = None,
    id_factory: Callable[[], str] | None = None,
) -> LoopSettings:
    """``settings`` (or the defaults) with the adapters' shorthand keywords applied."""
    base = settings if settings is not None else LoopSettings()
    changes: dict[str, Any] = {}
    if max_rounds is not None:
        changes["max_rounds"] = max_rounds
    if clock is not None:
        changes["clock"] = clock
    if id_factory is not None:
        changes["new_id"] = id_factory
    return replace(base, **changes) if changes else base


class Adapter[RequestT, ReplyT]:
    """Evaluates prompts by running the shared tool loop over ``provider``."""

    def __init__(
        self, provider: Provider[RequestT, ReplyT], *, settings: LoopSettings | None = None
    ) -> None:
        self._provider = provider
        self._settings = settings if settings is not None else LoopSettings()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._executor_lock = threading.Lock()

    @property
    def name(self) -> str:
        """Adapter name used in events and errors."""
        return self._provider.name

    @property
    def settings(self) -> LoopSettings:
        """The loop's limits and policies for this adapter."""
        return self._settings

    @property
    def provider(self) -> Provider[RequestT, ReplyT]:
        """The provider the loop drives."""
        return self._provider

    def evaluate[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
        disclosure: Disclosure | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> PromptResponse[OutputT]:
        """Evaluate ``prompt`` and wait for the response; see :meth:`evaluate_async`."""
        return run_sync(
            self.evaluate_async(
                prompt,
                *params,
                bus=bus,
                session=session,
                visibility_overrides=visibility_overrides,
                deadline=deadline,
                continue_from=continue_from,
                disclosure=disclosure,
                extras=extras,
            )
        )

    async def evaluate_async[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
        disclosure: Disclosure | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> PromptResponse[OutputT]:
        """Render, run the tool loop to a final answer and parse it, on the running loop.

        ``deadline`` (timezone-aware) bounds the whole evaluation, provider retries
        included. ``continue_from`` carries an earlier response's exchange on after the
        new render. ``disclosure`` overrides ``settings.disclosure`` for this call.
        ``extras`` reach every handler as ``context.extras`` (snake_case keys, else
        ``PromptValidationError``).
        """
        _check_deadline(deadline)
        if disclosure is not None and not isinstance(disclosure, Disclosure):
            raise ConfigValidationError(
                f"disclosure must be a Disclosure, got {type(disclosure).__name__}",
                config_type=Disclosure,
                field_name="disclosure",
                value=disclosure,
            )
        channels = resolve_channels(bus, session)
        evaluation = Evaluation[RequestT, ReplyT, OutputT](
            provider=self._provider,
            adapter=self,
            prompt=_as_prompt(prompt),
            params=params,
            channels=channels,
            settings=self._settings,
            disclosure=disclosure if disclosure is not None else self._settings.disclosure,
            overrides=visibility_overrides,
            deadline=deadline,
            earlier=_continuation(continue_from),
            executor=self._thread_pool(),
            extras=extras,
        )
        return await evaluation.run()

    def _thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """Worker threads for sync handlers, started on demand and reused when idle.

        Not the concurrency limit: ``max_concurrency`` bounds each evaluation's calls.
        A pool that small would deadlock a nested evaluation (a sync handler calling
        ``context.adapter.evaluate``), whose calls would wait for the thread its caller
        holds.
        """
        with self._executor_lock:
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=_MAX_WORKER_THREADS,
                    thread_name_prefix=f"weakincentives-{self.name}-tool",
                )
            return self._executor


_MAX_WORKER_THREADS = 1024
"""A bound on the adapter's worker threads across all its evaluations (nested included)."""


type ProviderAdapter = Adapter[Any, Any]
"""Any adapter: every adapter is the shared loop (:class:`Adapter`) over its provider."""


def _check_deadline(deadline: object) -> None:
    if deadline is None:
        return
    if not isinstance(deadline, datetime):
        raise ConfigValidationError(
            f"deadline must be a timezone-aware datetime, got {type(deadline).__name__}",
            field_name="deadline",
            value=deadline,
        )
    if deadline.tzinfo is None or deadline.utcoffset() is None:
        raise ConfigValidationError(
            f"deadline {deadline.isoformat()} has no timezone; pass an aware datetime, "
            "e.g. datetime.now(UTC) + timedelta(seconds=30)",
            field_name="deadline",
            value=deadline,
        )


def _continuation(previous: PromptResponse[Any] | None) -> tuple[ConversationItem, ...]:
    if previous is None:
        return ()
    return resume_items(previous.conversation, previous.skipped_calls, previous.halt)


def _as_prompt[OutputT](prompt: Prompt[OutputT] | PromptTemplate[OutputT]) -> Prompt[OutputT]:
    if isinstance(prompt, PromptTemplate):
        return Prompt(prompt)
    if not isinstance(prompt, Prompt):
        raise PromptValidationError(
            f"evaluate() needs a Prompt or PromptTemplate, got {type(prompt).__name__}"
        )
    return prompt


def evaluate_with_disclosure[OutputT](
    adapter: Adapter[Any, Any],
    prompt: Prompt[OutputT] | PromptTemplate[OutputT],
    *params: object,
    bus: EventPublisher | None = None,
    session: SessionProtocol | None = None,
    visibility_overrides: VisibilityOverrides | None = None,
    policy: DisclosurePolicy = "eager",
    max_retries: int = 3,
    deadline: datetime | None = None,
    continue_conversation: bool = True,
) -> PromptResponse[OutputT]:
    """Evaluate, reopening requested sections until the model answers, with this policy.

    ``evaluate`` already does this with the adapter's ``LoopSettings.disclosure``; this
    helper chooses the policy and retry limit for one call. Raises
    ``PromptEvaluationError(phase="tool")`` when the model still asks to open sections
    after ``max_retries`` re-renders, and ``ConfigValidationError`` for an unknown policy.
    """
    disclosure = Disclosure(
        policy=policy, max_retries=max_retries, continue_conversation=continue_conversation
    )
    return adapter.evaluate(
        prompt,
        *params,
        bus=bus,
        session=session,
        visibility_overrides=visibility_overrides,
        deadline=deadline,
        disclosure=disclosure,
    )
