"""The one class that runs the loop: :class:`Adapter`, over any provider value.

``evaluate_async`` runs the loop on the caller's event loop; ``evaluate`` is the thin
synchronous entry that runs the same coroutine on the library's background loop, so
it also works from inside a running event loop (the caller's thread waits; prefer
``evaluate_async`` there, which does not block the loop).

With ``store=`` an evaluation is durable: every step is recorded, and ``resume`` (or
``resume_async``) carries it on by its id in any process, after a crash or after a
person decided on the calls it paused for (``specs/PERSISTENCE.md``).

An adapter owns two things it may create: the worker threads that run sync handlers,
and (through its provider) an SDK client built from ``api_key=``/``base_url=``.
``close()``/``aclose()`` and the ``with``/``async with`` forms release both; a client
the caller passed in stays open, as it belongs to the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import warnings
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, Required, TypedDict, Unpack

from weakincentives._closing import AsyncClosing, Closing
from weakincentives._portal import run_sync
from weakincentives.adapters._channels import resolve_channels
from weakincentives.adapters._disclosure import resume_items
from weakincentives.adapters._history import check_conversation
from weakincentives.adapters._provider import Provider
from weakincentives.adapters._response import PromptResponse
from weakincentives.adapters._resume import (
    Launch,
    resume_evaluation,
    start_evaluation,
    store_of,
)
from weakincentives.adapters._settings import Disclosure, DisclosurePolicy, LoopSettings
from weakincentives.adapters._step_runner import IN_PROCESS, StepRunner
from weakincentives.adapters._stream import EvaluationStream, Paced
from weakincentives.adapters._turns import ConversationItem
from weakincentives.errors import AdapterClosedError, ConfigValidationError, PromptValidationError
from weakincentives.prompt import (
    EventPublisher,
    Prompt,
    PromptTemplate,
    SessionProtocol,
    VisibilityOverrides,
)
from weakincentives.store import Store, SyncStore

__all__ = ["Adapter", "EvaluateOptions", "ResumeOptions", "evaluate_with_disclosure"]


class EvaluateOptions(TypedDict, total=False):
    """The keyword arguments ``evaluate``, ``evaluate_async`` and ``stream`` share.

    Each is described at :meth:`Adapter.evaluate_async`; every one may be left out.
    """

    bus: EventPublisher | None
    session: SessionProtocol | None
    visibility_overrides: VisibilityOverrides | None
    deadline: datetime | None
    continue_from: PromptResponse[Any] | None
    disclosure: Disclosure | None
    extras: Mapping[str, object] | None
    store: Store | SyncStore | None
    evaluation_id: str | None


_EVALUATE_KEYWORDS = EvaluateOptions.__required_keys__ | EvaluateOptions.__optional_keys__


def _check_keywords(method: str, options: Mapping[str, object]) -> None:
    """Refuse a keyword ``method`` does not take, naming the method the caller called.

    The options travel as ``**options``, so Python's own check would only fire later,
    inside a private function, under its name.
    """
    unknown = sorted(options.keys() - _EVALUATE_KEYWORDS)
    if unknown:
        raise TypeError(f"{method}() got an unexpected keyword argument {unknown[0]!r}")


class ResumeOptions(TypedDict, total=False):
    """The keyword arguments of ``resume`` (described at :meth:`Adapter.resume_async`)."""

    store: Required[Store | SyncStore]
    bus: EventPublisher | None
    session: SessionProtocol | None
    extras: Mapping[str, object] | None


class Adapter[ProviderT: Provider[Any, Any]](Closing, AsyncClosing):
    """Evaluates prompts by running the shared tool loop over ``provider``.

    ``settings`` (default ``LoopSettings()``) is the one place the loop's limits,
    policies, clock and id source are set.
    """

    def __init__(self, provider: ProviderT, *, settings: LoopSettings | None = None) -> None:
        _check_optional(settings, LoopSettings, "settings")
        self._provider = provider
        self._settings = settings if settings is not None else LoopSettings()
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def name(self) -> str:
        """The adapter name in events and errors (the provider's, e.g. ``openai``)."""
        return self._provider.name

    @property
    def settings(self) -> LoopSettings:
        """The loop's limits and policies for this adapter."""
        return self._settings

    @property
    def provider(self) -> ProviderT:
        """The provider the loop drives (its model, client and codecs)."""
        return self._provider

    @property
    def closed(self) -> bool:
        """True once :meth:`close` or :meth:`aclose` ran; evaluating then fails."""
        return self._closed

    def evaluate[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        steps: StepRunner | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> PromptResponse[OutputT]:
        """Evaluate ``prompt`` and wait for the response; see :meth:`evaluate_async`."""
        _check_keywords("evaluate", options)
        return run_sync(self.evaluate_async(prompt, *params, steps=steps, **options))

    async def evaluate_async[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        steps: StepRunner | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> PromptResponse[OutputT]:
        """Render, run the tool loop to a final answer and parse it, on the running loop.

        ``deadline`` (timezone-aware) bounds the whole evaluation, provider retries
        included. ``continue_from`` carries an earlier response's exchange on after the
        new render (from this or any other adapter). ``disclosure`` overrides
        ``settings.disclosure`` for this call. ``extras`` reach every handler as
        ``context.extras`` (snake_case keys, else ``PromptValidationError``). A closed
        adapter raises ``AdapterClosedError``.

        ``store`` makes the evaluation durable: a checkpoint is saved before the first
        request and after every round, every request and tool call is recorded with
        the events it produced, and :meth:`resume` carries the evaluation on in any
        process. ``evaluation_id`` names it (default: ``settings.new_id()``).

        ``steps`` runs every step (request, tool call, approval) elsewhere: the seam a
        Temporal workflow uses (``weakincentives.temporal``); not together with ``store``.
        """
        _check_keywords("evaluate_async", options)
        return await self._evaluate(self._launch(), prompt, params, steps=steps, **options)

    def stream[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        max_buffered: int = 64,
        **options: Unpack[EvaluateOptions],
    ) -> EvaluationStream[OutputT]:
        """The evaluation as an iterator of its events, ending with the response.

        ``async for event in adapter.stream(...)`` (or a plain ``for``) runs the same
        loop as :meth:`evaluate_async` with the same arguments, and yields its text
        deltas, tool calls (``ToolInvoked``), retries, rejected answers, partial
        structured output (``PartialOutput``) and finally the ``PromptResponse``.
        Nothing runs until the iteration starts; leaving it early cancels the
        evaluation. Each request waits while more than ``max_buffered`` events are
        unread. ``bus`` must be an ``EventBus`` (the stream subscribes to it).
        """
        _check_keywords("stream", options)
        as_prompt = _as_prompt(prompt)
        given_id = options.get("evaluation_id")
        chosen_id = given_id if given_id is not None else self._settings.new_id()

        async def start(
            paced: Paced[Any, Any], tapped: EventPublisher, recorder: SessionProtocol | None
        ) -> PromptResponse[Any]:
            tapped_options: EvaluateOptions = {
                **options,
                "bus": tapped,
                "session": recorder,
                "evaluation_id": chosen_id,
            }
            launch = replace(self._launch(), provider=paced)
            # steps=None: a stream runs its steps in process (steps= in options is refused).
            return await self._evaluate(launch, as_prompt, params, steps=None, **tapped_options)

        return EvaluationStream(
            provider=self._provider,
            prompt=as_prompt,
            evaluation_id=chosen_id,
            bus=options.get("bus"),
            session=options.get("session"),
            start=start,
            max_buffered=max_buffered,
        )

    async def _evaluate[OutputT](
        self,
        launch: Launch,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        params: tuple[object, ...],
        *,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
        disclosure: Disclosure | None = None,
        extras: Mapping[str, object] | None = None,
        store: Store | SyncStore | None = None,
        evaluation_id: str | None = None,
        steps: StepRunner | None = None,
    ) -> PromptResponse[OutputT]:
        self._thread_pool()  # raises AdapterClosedError once closed
        _check_deadline(deadline)
        _check_optional(disclosure, Disclosure, "disclosure")
        as_prompt = _as_prompt(prompt)
        earlier = _continuation(continue_from, prompt_name=as_prompt.name)
        if store is not None and steps is not None:
            raise ConfigValidationError(
                "pass store= or steps=, not both: a store makes the loop record its own steps",
                field_name="steps",
            )
        if store is None and steps is None:
            _check_no_approvals(as_prompt)
        return await start_evaluation(
            launch,
            None if store is None else store_of(store),
            as_prompt,
            params,
            channels=resolve_channels(bus, session),
            disclosure=disclosure if disclosure is not None else self._settings.disclosure,
            overrides=visibility_overrides,
            deadline=deadline,
            earlier=earlier,
            extras=extras,
            evaluation_id=evaluation_id,
            steps=IN_PROCESS if steps is None else steps,
        )

    def resume[OutputT](
        self,
        evaluation_id: str,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        **options: Unpack[ResumeOptions],
    ) -> PromptResponse[OutputT]:
        """Carry a durable evaluation on and wait for the response; see :meth:`resume_async`."""
        return run_sync(self.resume_async(evaluation_id, prompt, **options))

    async def resume_async[OutputT](
        self,
        evaluation_id: str,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *,
        store: Store | SyncStore,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> PromptResponse[OutputT]:
        """Carry the evaluation ``evaluation_id`` in ``store`` on from its last recorded step.

        ``prompt`` must be the one it started with (same ``ns``/``key``); its params,
        overrides, deadline and options come from the checkpoint, and ``extras`` are
        added to the stored ones (pass again those that could not be stored). Requests
        and tool calls already recorded are not repeated and their events are not
        published again; without ``session`` (or with an empty ``Session`` of the same
        id) the session is rebuilt from its log first. A finished evaluation returns
        its stored response; a paused one carries on once its calls are decided
        (``store.decide_approval``), or returns the calls still pending. Raises
        ``ResumeError`` for an unknown evaluation, another prompt or another session.
        """
        self._thread_pool()  # raises AdapterClosedError once closed
        return await resume_evaluation(
            self._launch(),
            store_of(store),
            evaluation_id,
            _as_prompt(prompt),
            bus=bus,
            session=session,
            extras=extras,
        )

    def _launch(self) -> Launch:
        return Launch(
            provider=self._provider,
            adapter=self,
            settings=self._settings,
            executor=self._thread_pool(),
        )

    def close(self) -> None:
        """Release the worker threads and a client the provider built; idempotent.

        Waits for sync handlers still running on the worker threads. A client passed to
        the provider (``client=``) is left open: it belongs to the caller.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True)
        self._provider.close()

    async def aclose(self) -> None:
        """:meth:`close` without blocking the running event loop."""
        await asyncio.to_thread(self.close)

    def _thread_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        """Worker threads for sync handlers, started on demand and reused when idle.

        Not the concurrency limit: ``max_concurrency`` bounds each evaluation's calls.
        A pool that small would deadlock a nested evaluation (a sync handler calling
        ``context.adapter.evaluate``), whose calls would wait for the thread its caller
        holds.
        """
        with self._lock:
            if self._closed:
                raise AdapterClosedError(adapter_name=self.name)
            if self._executor is None:
                self._executor = concurrent.futures.ThreadPoolExecutor(
                    max_workers=_MAX_WORKER_THREADS,
                    thread_name_prefix=f"weakincentives-{self.name}-tool",
                )
            return self._executor


_MAX_WORKER_THREADS = 1024
"""A bound on the adapter's worker threads across all its evaluations (nested included)."""


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


def _check_optional(value: object, expected: type[object], field_name: str) -> None:
    """Refuse a ``field_name`` that is neither None nor an ``expected``."""
    if value is not None and not isinstance(value, expected):
        raise ConfigValidationError(
            f"{field_name} must be a {expected.__name__}, got {type(value).__name__}",
            config_type=expected,
            field_name=field_name,
            value=value,
        )


def _check_no_approvals(prompt: Prompt[Any]) -> None:
    """A tool that requires approval needs a store to wait in: refuse before any request."""
    waiting = [tool.name for tool in prompt.template.declared_tools() if tool.requires_approval]
    if waiting:
        raise ConfigValidationError(
            f"tools {', '.join(map(repr, waiting))} require approval, so an evaluation must "
            "be able to wait for a person's decision: pass store= (e.g. "
            "store=SQLiteStore('evals.db')) to evaluate",
            field_name="store",
        )


def _continuation(
    previous: PromptResponse[Any] | None, *, prompt_name: str
) -> tuple[ConversationItem, ...]:
    if previous is None:
        return ()
    if not isinstance(previous, PromptResponse):
        raise ConfigValidationError(
            f"continue_from must be a PromptResponse, got {type(previous).__name__}",
            field_name="continue_from",
            value=previous,
        )
    items = resume_items(previous.conversation, previous.skipped_calls, previous.halt)
    check_conversation(items, prompt_name=prompt_name)
    return items


def _as_prompt[OutputT](prompt: Prompt[OutputT] | PromptTemplate[OutputT]) -> Prompt[OutputT]:
    if isinstance(prompt, PromptTemplate):
        return Prompt(prompt)
    if not isinstance(prompt, Prompt):
        raise PromptValidationError(
            f"evaluate() needs a Prompt or PromptTemplate, got {type(prompt).__name__}"
        )
    return prompt


def evaluate_with_disclosure[OutputT](
    adapter: Adapter[Any],
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
    """Deprecated: call ``adapter.evaluate(prompt, disclosure=Disclosure(...))`` instead.

    Kept so existing callers keep working; it warns with ``DeprecationWarning`` and
    evaluates with ``Disclosure(policy=policy, max_retries=max_retries,
    continue_conversation=continue_conversation)``.
    """
    warnings.warn(
        "evaluate_with_disclosure is deprecated; call adapter.evaluate(prompt, "
        "disclosure=Disclosure(policy=..., max_retries=..., continue_conversation=...)) "
        "instead",
        DeprecationWarning,
        stacklevel=2,
    )
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
