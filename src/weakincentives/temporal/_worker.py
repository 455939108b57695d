"""The worker side: what a ``temporalio.worker.Worker`` needs to run evaluations."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from temporalio.client import Client
from temporalio.common import RetryPolicy
from temporalio.worker import Worker, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from weakincentives.adapters import LoopSettings, Provider
from weakincentives.errors import ConfigValidationError
from weakincentives.prompt import Prompt, PromptTemplate
from weakincentives.temporal._activities import build_activities
from weakincentives.temporal._options import Check, refuse_wrong
from weakincentives.temporal._payloads import DEFAULT_PAYLOAD_LIMIT, check_limit
from weakincentives.temporal._registry import ActivityOptions, Registry, entries, prompt_modules
from weakincentives.temporal._workflow import build_workflow

__all__ = ["EvaluationWorker"]


class EvaluationWorker:
    """Serves evaluations of ``prompts`` on ``provider`` from a Temporal task queue.

    It builds the evaluation workflow (the loop, run inside Temporal's sandbox with
    ``weakincentives`` and the prompts' modules passed through), one send activity per
    prompt and one activity per tool that is not pure. Run it with :meth:`worker`, or
    hand :attr:`workflows`, :attr:`activities` and :attr:`workflow_runner` to a
    ``Worker`` of your own.

    ``settings`` are the loop's limits (its clock, id source and sleep become the
    workflow's); ``extras`` reach every handler as ``context.extras`` (clients and
    connections the tools need: they never leave this process). ``send_timeout`` and
    ``tool_timeout`` bound one attempt of an activity; while it runs, an activity
    heartbeats, and an attempt without a heartbeat for ``heartbeat_timeout`` is lost
    (its worker died or hangs) and retried elsewhere (None: no heartbeats; a lost attempt
    then waits out its whole timeout). ``retry_policy`` (Temporal's; its
    default retries without end, backing off to 100 s) retries failed attempts, except
    errors that are not retryable. ``payload_limit`` is the most bytes of JSON any
    input or result may hold. Everything but ``extras`` is read by workflow code: give
    every worker of a task queue the same values (``specs/TEMPORAL.md``).
    """

    def __init__(
        self,
        provider: Provider[Any, Any],
        *,
        prompts: Sequence[Prompt[Any] | PromptTemplate[Any]],
        settings: LoopSettings | None = None,
        extras: Mapping[str, object] | None = None,
        send_timeout: timedelta = timedelta(minutes=5),
        tool_timeout: timedelta = timedelta(minutes=5),
        heartbeat_timeout: timedelta | None = timedelta(seconds=30),
        retry_policy: RetryPolicy | None = None,
        payload_limit: int = DEFAULT_PAYLOAD_LIMIT,
        passthrough_modules: Sequence[str] = (),
    ) -> None:
        _check_timeout("send_timeout", send_timeout)
        _check_timeout("tool_timeout", tool_timeout)
        if heartbeat_timeout is not None:
            _check_timeout("heartbeat_timeout", heartbeat_timeout, or_none=True)
        check_limit(payload_limit)
        _check_kinds(prompts, settings, extras, retry_policy, passthrough_modules)
        registered = entries(prompts)
        self._registry = Registry(
            provider=provider,
            settings=settings if settings is not None else LoopSettings(),
            options=ActivityOptions(
                send_timeout=send_timeout,
                tool_timeout=tool_timeout,
                heartbeat_timeout=heartbeat_timeout,
                retry_policy=retry_policy,
                payload_limit=payload_limit,
            ),
            extras=MappingProxyType(dict(extras or {})),
            prompts=registered,
        )
        self._workflow = build_workflow(self._registry)
        self._activities = build_activities(self._registry)
        modules = prompt_modules(
            [entry.prompt for entry in registered.values()], passthrough_modules
        )
        self._runner = SandboxedWorkflowRunner(
            restrictions=SandboxRestrictions.default.with_passthrough_modules(*modules)
        )

    @property
    def workflows(self) -> list[type[object]]:
        """The workflow class to register (``Worker(workflows=...)``)."""
        return [self._workflow]

    @property
    def activities(self) -> list[Callable[..., Any]]:
        """The activities to register (``Worker(activities=...)``)."""
        return list(self._activities)

    @property
    def workflow_runner(self) -> WorkflowRunner:
        """The sandboxed runner, passing ``weakincentives`` and the prompts' modules through."""
        return self._runner

    def worker(self, client: Client, *, task_queue: str, **options: Any) -> Worker:
        """A ``temporalio.worker.Worker`` for ``task_queue``; ``options`` go to it as given."""
        return Worker(
            client,
            task_queue=task_queue,
            workflows=self.workflows,
            activities=self.activities,
            workflow_runner=self.workflow_runner,
            **options,
        )


def _check_kinds(
    prompts: object,
    settings: object,
    extras: object,
    retry_policy: object,
    passthrough_modules: object,
) -> None:
    """Refuse arguments of the wrong kind, naming them, before anything is built."""
    checks: tuple[Check, ...] = (
        (
            "prompts",
            prompts,
            "a list of prompts",
            isinstance(prompts, str | Prompt | PromptTemplate) or not isinstance(prompts, Iterable),
        ),
        (
            "settings",
            settings,
            "LoopSettings or None",
            not isinstance(settings, LoopSettings | None),
        ),
        ("extras", extras, "a mapping or None", not isinstance(extras, Mapping | None)),
        (
            "retry_policy",
            retry_policy,
            "a RetryPolicy or None",
            not isinstance(retry_policy, RetryPolicy | None),
        ),
        (
            "passthrough_modules",
            passthrough_modules,
            "a list of module names",
            isinstance(passthrough_modules, str)
            or not isinstance(passthrough_modules, Collection)
            or not all(isinstance(name, str) and name for name in passthrough_modules),
        ),
    )
    refuse_wrong(checks)


def _check_timeout(name: str, timeout: object, *, or_none: bool = False) -> None:
    if not isinstance(timeout, timedelta) or timeout <= timedelta(0):
        raise ConfigValidationError(
            f"{name} must be a positive timedelta{' or None' if or_none else ''}, got {timeout!r}",
            field_name=name,
            value=timeout,
        )
