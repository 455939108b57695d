"""The evaluation workflow: the one loop, run deterministically inside Temporal.

Each worker builds its own workflow class over its registry (``build_workflow``), all
registered under one workflow name, ``weakincentives.Evaluation``. The sandbox imports
a workflow class by module and name, so each class gets a unique name in this module
and the module's ``__getattr__`` finds it; ``weakincentives`` is passed through the
sandbox, so the class, its registry and the loop are the worker's own objects.

The loop reads time, ids and waits only through the ``LoopSettings`` it is given:
here ``workflow.now``, ``workflow.uuid4`` and ``workflow.sleep``, so a replay of the
workflow's history rebuilds the same evaluation, event for event.

Events reach the caller through the ``events`` query (every event the evaluation
published so far, typed), during the evaluation and after it ended; the result is the
response document (``PromptResponse.to_json``).
"""

from __future__ import annotations

import asyncio
import itertools
import weakref
from dataclasses import replace
from typing import Any

from temporalio import workflow

from weakincentives.adapters import Adapter, Decision, LoopSettings
from weakincentives.errors import ConfigValidationError
from weakincentives.runtime import InProcessEventBus, PromptFailed, Session, ToolCall
from weakincentives.serde import dump_typed
from weakincentives.temporal._documents import (
    Document,
    check_after,
    read_decision,
    read_start,
)
from weakincentives.temporal._failures import workflow_failure
from weakincentives.temporal._payloads import check_size
from weakincentives.temporal._registry import Registry
from weakincentives.temporal._steps import WorkflowSteps

__all__ = ["WORKFLOW_NAME", "build_workflow"]

WORKFLOW_NAME = "weakincentives.Evaluation"
"""The workflow type every evaluation runs as."""

_CLASSES: weakref.WeakValueDictionary[str, type[object]] = weakref.WeakValueDictionary()
_NUMBERS = itertools.count(1)


def __getattr__(name: str) -> type[object]:
    """The workflow class called ``name`` (the sandbox imports it by name)."""
    try:
        return _CLASSES[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def _new_id() -> str:
    return workflow.uuid4().hex


def workflow_settings(settings: LoopSettings) -> LoopSettings:
    """``settings`` with the workflow's clock, id source and sleep."""
    return replace(settings, clock=workflow.now, new_id=_new_id, sleep=workflow.sleep)


class _State:
    """What the workflow's queries and signals read and write while the loop runs."""

    __slots__ = ("early", "events", "steps")

    def __init__(self) -> None:
        self.events: list[object] = []
        self.steps: WorkflowSteps | None = None
        self.early: dict[str, Decision] = {}
        """Decisions signalled before the loop started (kept for when it asks)."""


def build_workflow(registry: Registry) -> type[object]:
    """A workflow class that evaluates the registry's prompts.

    Temporal wants a workflow's methods defined on its class at module level (its
    sandbox finds the class by name); so the methods are made here, over this registry,
    and named as methods of a class of this module with a name of its own.
    """
    adapter = Adapter(registry.provider, settings=workflow_settings(registry.settings))
    name = f"EvaluationWorkflow{next(_NUMBERS)}"

    def method[F](function: F) -> F:
        function.__qualname__ = f"{name}.{function.__name__}"  # type: ignore[attr-defined]  # F is a function
        return function

    @method
    def initialise(self: Any) -> None:
        self._state = _State()

    @method
    async def run(self: Any, document: Document) -> str:
        """Evaluate; the response document, or a non-retryable ``EvaluationFailed``."""
        return await _evaluate(registry, adapter, document, self._state)

    @method
    def decide(self: Any, *payloads: object) -> None:
        """A person's decision on a call waiting for approval; the first one stands.

        A malformed signal (from a client other than ``EvaluationHandle``: no payload,
        several, or one that is not a decision) is logged and ignored: raising here
        would fail every workflow task from now on.
        """
        state: _State = self._state
        try:
            if len(payloads) != 1:
                raise ConfigValidationError(
                    f"a decide signal carries one decision, got {len(payloads)} payloads",
                    field_name="decision",
                )
            call_id, decided = read_decision(payloads[0])
        except ConfigValidationError as error:
            workflow.logger.warning("decide signal ignored: %s", error)
            return
        target = state.early if state.steps is None else state.steps.decisions
        target.setdefault(call_id, decided)

    @method
    def events(self: Any, after: int) -> list[Any]:
        """The events published after the first ``after``, typed (``dump_typed``).

        An ``after`` that is not an int of 0 or more fails the query (not the workflow).
        """
        state: _State = self._state
        return [dump_typed(event) for event in state.events[check_after(after) :]]

    @method
    def pending_approvals(self: Any) -> list[Any]:
        """The calls waiting for a decision now, in the model's order."""
        steps = self._state.steps
        waiting = () if steps is None else steps.waiting.values()
        return [dump_typed(call, ToolCall) for call in waiting]

    members: dict[str, object] = {
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": "One evaluation: the input names the prompt and carries its params.",
        "__init__": initialise,
        "run": workflow.run(run),
        "decide": workflow.signal(name="decide")(decide),
        "events": workflow.query(name="events")(events),
        "pending_approvals": workflow.query(name="pending_approvals")(pending_approvals),
    }
    cls = type(name, (), members)
    _CLASSES[name] = cls
    return workflow.defn(name=WORKFLOW_NAME)(cls)


async def _evaluate(
    registry: Registry, adapter: Adapter[Any], document: Document, state: _State
) -> str:
    """Run the loop over the input ``document``; every failure ends the workflow for good.

    Only cancellation passes through as itself (the workflow ends cancelled). Anything
    else, an unknown prompt included, fails the workflow with ``EvaluationFailed``
    rather than its task, which Temporal would retry forever.
    """
    try:
        start = read_start(document)
        entry = registry.entry(start.ns, start.key)
        info = workflow.info()
        bus = InProcessEventBus()
        session = Session(bus=bus, session_id=start.session_id)
        bus.subscribe(object, state.events.append)
        steps = WorkflowSteps(
            entry=entry,
            options=registry.options,
            start=start,
            evaluation_id=info.workflow_id,
            publish=bus.publish,
        )
        steps.decisions.update(state.early)
        state.steps = steps
        response = await adapter.evaluate_async(
            entry.prompt,
            *start.params,
            session=session,
            visibility_overrides=start.overrides,
            deadline=start.deadline,
            disclosure=start.disclosure,
            extras={**registry.extras, **start.extras},
            evaluation_id=info.workflow_id,
            steps=steps,
        )
        text = response.to_json()
        check_size(
            text,
            limit=registry.options.payload_limit,
            prompt_name=entry.prompt.name,
            payload="the response",
            phase="response",
        )
    except asyncio.CancelledError:
        raise
    except Exception as error:
        failed = [event for event in state.events if isinstance(event, PromptFailed)]
        raise workflow_failure(failed[-1] if failed else None, error) from error
    return text
