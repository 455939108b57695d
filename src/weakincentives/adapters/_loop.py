"""The tool-call loop, written once for every adapter.

render -> serialize hosted tools -> send -> execute each tool call in order -> feed
results back -> repeat until the model answers, a terminal tool halts the turn, or
the round limit is hit. Provider problems raise ``PromptEvaluationError`` with a
phase; tool problems never do (they become failed ``ToolResult``s).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, cast

from weakincentives.adapters._hosted import parse_hosted_outputs, serialize_hosted_tools
from weakincentives.adapters._protocol import ProviderAdapter
from weakincentives.adapters._response import Halt, PromptResponse
from weakincentives.adapters._structured import output_schema, parse_structured_output
from weakincentives.adapters._turns import (
    AssistantMessage,
    ConversationItem,
    ModelClient,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)
from weakincentives.errors import (
    PromptError,
    PromptEvaluationError,
    PromptValidationError,
    SessionError,
)
from weakincentives.prompt import Prompt, PromptTemplate, RenderedPrompt, VisibilityOverrides
from weakincentives.runtime import (
    EventBus,
    ExecutionScope,
    InProcessEventBus,
    PromptExecuted,
    PromptRendered,
    Session,
    SessionProtocol,
    Subscription,
    TokenUsage,
    ToolCall,
    ToolExecution,
    execute_tool_call,
)

__all__ = ["LoopSettings", "run_evaluation"]

logger = logging.getLogger("weakincentives.adapters")


def _now() -> datetime:
    return datetime.now(UTC)


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True, kw_only=True)
class LoopSettings:
    """Limits and injectable sources of time and identity for the loop."""

    max_rounds: int = 16
    """Requests allowed per evaluation before giving up with phase ``tool``."""
    clock: Callable[[], datetime] = _now
    new_id: Callable[[], str] = _new_id


@dataclass(slots=True)
class _Accumulator:
    """Assistant text so far, exposed to handlers as ``context.response_accumulator``."""

    parts: list[str] = field(default_factory=list)

    def text(self) -> str:
        return "\n".join(part for part in self.parts if part)


def _resolve_channels(
    bus: EventBus | None, session: SessionProtocol | None
) -> tuple[EventBus, SessionProtocol, Subscription | None]:
    """Pick the bus and session so that the session records everything published.

    A session without a bus of its own listens to the evaluation's bus for the
    duration of the evaluation (the returned subscription is removed afterwards).
    """
    if session is None:
        bus = bus if bus is not None else InProcessEventBus()
        return bus, Session(bus=bus), None
    attached = session.bus
    if attached is None:
        bus = bus if bus is not None else InProcessEventBus()
        return bus, session, bus.subscribe(object, session.apply)
    if bus is not None and bus is not attached:
        raise SessionError(
            "the session listens to a different bus than the one passed to evaluate, so it "
            "would miss the evaluation's events; pass the session's own bus, or only session="
        )
    return attached, session, None


def _publish(bus: EventBus, event: object) -> None:
    result = bus.publish(event)
    for failure in result.errors:
        logger.warning("subscriber %r failed on %s", failure.handler, type(event).__name__)


def run_evaluation[OutputT](
    client: ModelClient,
    prompt: Prompt[OutputT] | PromptTemplate[OutputT],
    params: tuple[object, ...],
    *,
    adapter: ProviderAdapter,
    bus: EventBus | None,
    session: SessionProtocol | None,
    visibility_overrides: VisibilityOverrides | None,
    deadline: datetime | None,
    settings: LoopSettings,
    continue_from: PromptResponse[Any] | None = None,
) -> PromptResponse[OutputT]:
    """Evaluate ``prompt`` with ``client``; the body of every adapter's ``evaluate``.

    With ``continue_from``, the model sees the new render followed by that earlier
    evaluation's turns and tool outputs, so work done before a halt is not redone.
    """
    bound = _bind(prompt, params)
    bus, session, temporary = _resolve_channels(bus, session)
    try:
        return _evaluate(
            client,
            bound,
            adapter=adapter,
            bus=bus,
            session=session,
            visibility_overrides=visibility_overrides,
            deadline=deadline,
            settings=settings,
            earlier=_continuation(continue_from),
        )
    finally:
        if temporary is not None:
            bus.unsubscribe(temporary)


def _evaluate[OutputT](
    client: ModelClient,
    bound: Prompt[OutputT],
    *,
    adapter: ProviderAdapter,
    bus: EventBus,
    session: SessionProtocol,
    visibility_overrides: VisibilityOverrides | None,
    deadline: datetime | None,
    settings: LoopSettings,
    earlier: tuple[ConversationItem, ...],
) -> PromptResponse[OutputT]:
    started = settings.clock()
    evaluation_id = settings.new_id()
    rendered = _render(bound, visibility_overrides)
    hosted_specs = serialize_hosted_tools(
        rendered.hosted_tools,
        client.hosted_tool_codecs,
        adapter_name=client.name,
        prompt_name=bound.name,
    )
    schema = (
        None if rendered.structured_output is None else output_schema(rendered.structured_output)
    )
    _publish(
        bus,
        PromptRendered(
            evaluation_id=evaluation_id,
            prompt_ns=bound.ns,
            prompt_key=bound.key,
            prompt_name=bound.name,
            adapter=client.name,
            session_id=session.session_id,
            text=rendered.text,
            tool_names=tuple(tool.name for tool in rendered.tools),
            hosted_tool_names=tuple(tool.name for tool in rendered.hosted_tools),
            visibility=rendered.visibility,
            created_at=started,
        ),
    )
    extras = MappingProxyType({"evaluation_id": evaluation_id, "adapter": client.name})
    history: list[ConversationItem] = [PromptMessage(text=rendered.text), *earlier]
    executions: list[ToolExecution] = []
    raw_items: list[Any] = []
    usage = TokenUsage()
    accumulator = _Accumulator()
    halt: Halt | None = None
    skipped: tuple[ToolCall, ...] = ()
    turn = ModelTurn()
    rounds = 0
    while halt is None:
        if rounds >= settings.max_rounds:
            raise _too_many_rounds(bound.name, settings.max_rounds, turn)
        _check_deadline(bound.name, deadline, settings.clock(), rounds + 1)
        rounds += 1
        turn = client.send(
            TurnRequest(
                prompt_name=bound.name,
                rendered=rendered,
                history=tuple(history),
                hosted_tools=hosted_specs,
                output_schema=schema,
                round=rounds,
                deadline=deadline,
            )
        )
        usage = usage + turn.usage
        raw_items.extend(turn.raw_items)
        accumulator.parts.append(turn.text)
        history.append(AssistantMessage(turn=turn))
        if not turn.tool_calls:
            break
        scope = ExecutionScope(
            prompt=bound,
            session=session,
            bus=bus,
            rendered=rendered,
            adapter=adapter,
            adapter_name=client.name,
            evaluation_id=evaluation_id,
            request=turn.request,
            accumulator=accumulator,
            extras=extras,
            clock=settings.clock,
        )
        for index, call in enumerate(turn.tool_calls):
            execution = execute_tool_call(call, scope)
            executions.append(execution)
            history.append(
                ToolOutputMessage(
                    call_id=call.call_id,
                    name=call.name,
                    content=execution.result.model_content(execution.event.rendered_output),
                    success=execution.result.success,
                )
            )
            if execution.tool is not None and execution.tool.terminal and execution.result.success:
                halt = Halt(tool_name=call.name, call_id=call.call_id, result=execution.result)
                skipped = turn.tool_calls[index + 1 :]
                break
    output = None
    if halt is None and rendered.structured_output is not None:
        if turn.refusal:
            raise PromptEvaluationError(
                f"the model refused to answer: {turn.refusal}",
                prompt_name=bound.name,
                phase="parse",
                provider_payload={"refusal": turn.refusal},
            )
        output = parse_structured_output(
            rendered.structured_output, turn.text, prompt_name=bound.name
        )
    hosted_outputs = parse_hosted_outputs(
        rendered.hosted_tools, client.hosted_tool_codecs, tuple(raw_items), prompt_name=bound.name
    )
    text = "" if halt is not None else (turn.text or turn.refusal or "")
    _publish(
        bus,
        PromptExecuted(
            evaluation_id=evaluation_id,
            prompt_name=bound.name,
            adapter=client.name,
            session_id=session.session_id,
            text=text,
            output=output,
            tool_calls=len(executions),
            rounds=rounds,
            halted=halt is not None,
            usage=usage,
            started_at=started,
            finished_at=settings.clock(),
        ),
    )
    return PromptResponse(
        prompt_name=bound.name,
        evaluation_id=evaluation_id,
        text=text,
        output=cast("OutputT | None", output),
        tool_calls=tuple(executions),
        skipped_calls=skipped,
        hosted_outputs=hosted_outputs,
        halt=halt,
        usage=usage,
        rounds=rounds,
        rendered=rendered,
        conversation=tuple(history),
    )


_SKIPPED = (
    "Not run: the turn ended before this call (sections were opened or a terminal tool "
    "finished). Call it again if you still need it."
)


def _continuation(previous: PromptResponse[Any] | None) -> tuple[ConversationItem, ...]:
    """An earlier evaluation's exchange, minus its prompt, ready to follow a new render.

    Calls skipped by a halt get an explicit "not run" output: providers expect every
    call in a replayed turn to have one, and the model should know they did not run.
    """
    if previous is None:
        return ()
    items = [item for item in previous.conversation if not isinstance(item, PromptMessage)]
    items.extend(
        ToolOutputMessage(call_id=call.call_id, name=call.name, content=_SKIPPED, success=False)
        for call in previous.skipped_calls
    )
    return tuple(items)


def _bind[OutputT](
    prompt: Prompt[OutputT] | PromptTemplate[OutputT], params: tuple[object, ...]
) -> Prompt[OutputT]:
    if isinstance(prompt, PromptTemplate):
        prompt = Prompt(prompt)
    if not isinstance(prompt, Prompt):
        raise PromptValidationError(
            f"evaluate() needs a Prompt or PromptTemplate, got {type(prompt).__name__}"
        )
    if not params:
        return prompt
    try:
        return prompt.bind(*params)
    except PromptError as exc:
        raise PromptEvaluationError(exc.message, prompt_name=prompt.name, phase="render") from exc


def _render[OutputT](
    prompt: Prompt[OutputT], overrides: VisibilityOverrides | None
) -> RenderedPrompt[OutputT]:
    try:
        return prompt.render(visibility_overrides=overrides)
    except PromptError as exc:
        raise PromptEvaluationError(exc.message, prompt_name=prompt.name, phase="render") from exc


def _check_deadline(
    prompt_name: str, deadline: datetime | None, now: datetime, round_number: int
) -> None:
    if deadline is not None and now >= deadline:
        raise PromptEvaluationError(
            f"deadline {deadline.isoformat()} passed before round {round_number}",
            prompt_name=prompt_name,
            phase="request",
        )


def _too_many_rounds(prompt_name: str, limit: int, last: ModelTurn) -> PromptEvaluationError:
    names = ", ".join(call.name for call in last.tool_calls)
    return PromptEvaluationError(
        f"no final answer after {limit} rounds; the model kept calling tools (last: {names}). "
        "Raise max_rounds or check the tools' results",
        prompt_name=prompt_name,
        phase="tool",
    )
