"""The activities of a worker: one provider exchange per prompt, one per tool with I/O.

An activity runs outside the workflow, in the worker process, with no sandbox: this is
where the network and the tools' side effects happen. Each is one attempt: the provider
is sent the request once (its own retries are off; a retryable failure is retried by
Temporal's retry policy), and a tool runs once through the one execution path
(``execute_tool_call``), which never raises for tool-level trouble. Both heartbeat while
they run (``_heartbeats.py``).

A tool activity rebuilds a reduced ``ToolContext``: the prompt bound to the
evaluation's params, a fresh session with the evaluation's id, a bus that collects what
the handler publishes (sent back and published in the workflow), the evaluation's
extras and the worker's. It has no render, adapter, provider request or accumulator.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from temporalio import activity

from weakincentives.adapters import Attempt, Provider
from weakincentives.errors import PromptEvaluationError, SchemaError
from weakincentives.prompt import ExecutionScope, Prompt, Tool
from weakincentives.runtime import (
    PublishResult,
    Session,
    ToolCall,
    ToolInvoked,
    execute_tool_call,
    refuse_tool_call,
)
from weakincentives.serde import JSONValue, dump_typed, parse_typed
from weakincentives.temporal._documents import Document, read_request
from weakincentives.temporal._failures import activity_failure
from weakincentives.temporal._heartbeats import heartbeating
from weakincentives.temporal._payloads import check_size, json_size
from weakincentives.temporal._registry import PromptEntry, Registry

__all__ = ["build_activities"]

type Activity = Callable[[Document], Any]


def build_activities(registry: Registry) -> list[Activity]:
    """Every activity the registry's prompts need, named as ``_documents`` says."""
    built: list[Activity] = []
    for entry in registry.prompts.values():
        built.append(_send_activity(registry, entry))
        for name, activity_name in entry.tool_activities.items():
            built.append(_tool_activity(registry, entry, entry.tools[name], activity_name))
    return built


def _bound(prompt: Prompt[Any], params: JSONValue) -> Prompt[Any]:
    return prompt.bind(*parse_typed(tuple[object, ...], params))


def _send_activity(registry: Registry, entry: PromptEntry) -> Activity:
    provider: Provider[Any, Any] = registry.provider
    prompt_name = entry.prompt.name
    limit = registry.options.payload_limit

    async def send(document: Document) -> Document:
        request_doc = document["request"]
        prompt = _bound(entry.prompt, document["params"]) if request_doc["kind"] == "turn" else None
        request = read_request(request_doc, prompt or entry.prompt)
        info = activity.info()
        timeout = info.start_to_close_timeout
        attempt = Attempt(
            number=info.attempt,
            timeout=None if timeout is None else timeout.total_seconds(),
            prompt_name=prompt_name,
            round=int(document["round"]),
        )
        deltas: list[str] = []
        try:
            async with heartbeating():
                reply = await provider.send(request, attempt, lambda text: _keep(deltas, text))
            result: Document = {"reply": dump_typed(reply), "deltas": deltas}
            check_size(
                result,
                limit=limit,
                prompt_name=prompt_name,
                payload=f"the reply of round {attempt.round}",
                phase="response",
            )
        except PromptEvaluationError as error:
            raise activity_failure(error) from error
        return result

    return activity.defn(name=entry.send_activity)(send)


def _keep(deltas: list[str], text: str) -> None:
    if text:
        deltas.append(text)


def _tool_activity(
    registry: Registry, entry: PromptEntry, tool: Tool[Any, Any], name: str
) -> Activity:
    limit = registry.options.payload_limit
    adapter_name = registry.provider.name

    async def call_tool(document: Document) -> Document:
        call = parse_typed(ToolCall, document["call"])
        published: list[JSONValue] = []
        scope = ExecutionScope(
            prompt=_bound(entry.prompt, document["params"]),
            session=Session(session_id=UUID(str(document["session_id"]))),
            event_bus=_Collector(published),
            adapter_name=adapter_name,
            evaluation_id=str(document["evaluation_id"]),
            extras={**registry.extras, **parse_typed(dict[str, object], document["extras"])},
        )
        async with heartbeating():
            execution = await execute_tool_call(call, scope, tools=(tool,), publish=False)
        try:
            result: Document = {
                "event": dump_typed(execution.event, ToolInvoked),
                "published": published,
            }
        except SchemaError as exc:
            message = (
                f"Tool {tool.name!r} returned a value that cannot be sent back to the "
                f"workflow: {exc.message}."
            )
            return _refused(call, scope, message, published)
        size = json_size(result)
        if size > limit:
            message = (
                f"Tool {tool.name!r} returned a result of {size:,} bytes, over the "
                f"{limit:,}-byte limit of what an activity can send back; ask for less."
            )
            return _refused(call, scope, message, [])
        return result

    return activity.defn(name=name)(call_tool)


def _refused(
    call: ToolCall, scope: ExecutionScope, message: str, published: list[JSONValue]
) -> Document:
    refused = refuse_tool_call(call, scope, message)
    return {"event": dump_typed(refused.event, ToolInvoked), "published": published}


class _Collector:
    """The bus of a tool activity: keeps what the handler publishes, typed, for the workflow.

    An event is written when published, so one that cannot cross fails the handler's
    publish (and with it the call, as any handler error does).
    """

    __slots__ = ("_events",)

    def __init__(self, events: list[JSONValue]) -> None:
        self._events = events

    def publish(self, event: object, /) -> PublishResult:
        """Keep ``event`` for the workflow to publish."""
        self._events.append(dump_typed(event))
        return PublishResult(event=event, handlers_invoked=1)
