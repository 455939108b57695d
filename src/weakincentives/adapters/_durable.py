"""The durable step runner: steps recorded in a store, replayed on resume, events once.

A durable evaluation records every step (``store.record_step``) and appends the events
it publishes to the session's log **in the same transaction as a step**, so a process
killed at any point leaves either both or neither:

- events published by a tool call (its ``ToolInvoked``, and whatever its handler
  publishes) are written with that call's step;
- every other event (``PromptRendered``, text deltas, ``OutputRejected``,
  ``PromptExecuted``) waits in a buffer and is written with the next step recorded,
  or with the final checkpoint.

On resume the loop runs again from the start with the recorded steps (the journal):
a step found there returns its result without running. While the journal still holds
steps the loop has not reached, every event it produces was already written (with a
later step), so nothing is published; a replayed call's ``ToolInvoked`` is never
published again. Once the journal is used up, the evaluation is live again. So the
log ends up holding each event exactly once, in the order an uninterrupted run
writes it.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, cast

from weakincentives._bounded import clip
from weakincentives.adapters._request_digest import RequestDigests
from weakincentives.adapters._response import RESPONSE_DOCUMENT
from weakincentives.adapters._step_runner import CallStep, Decision, Progress, SendStep, Sent
from weakincentives.errors import (
    PromptEvaluationError,
    ReplayMismatchError,
    SchemaError,
    StoreError,
)
from weakincentives.prompt import EventPublisher, Tool
from weakincentives.runtime import (
    EVENT_DOCUMENT,
    PromptFailed,
    PublishResult,
    ToolCall,
    ToolInvoked,
)
from weakincentives.serde import JSONValue, dump_typed, loads, parse_typed
from weakincentives.store import Approval, EvaluationStatus, NewEvent, Step, Store

__all__ = ["DurableBus", "DurableSteps", "event_record"]

logger = logging.getLogger("weakincentives.adapters")

FINAL_STEP = "final"
"""The step that closes a finished evaluation; its events are the last of the log."""

type Mark = Literal["logged", "replayed"]

_UNREACHED_SHOWN = 5
"""Keys of unreached recorded steps named in the error (the rest are counted)."""


def event_record(event: object) -> NewEvent:
    """``event`` as a row of a session log: its type name and its ``EVENT_DOCUMENT``."""
    body = dump_typed(event)
    type_name = body.get("$type") if isinstance(body, dict) else None
    return NewEvent(
        type_name=type_name if isinstance(type_name, str) else type(event).__qualname__,
        document={"kind": EVENT_DOCUMENT.name, "version": EVENT_DOCUMENT.version, "body": body},
    )


@dataclass(slots=True)
class _CallBucket:
    """The events one running call published, written with its step."""

    bus: DurableBus
    records: list[NewEvent]


_CALL: contextvars.ContextVar[_CallBucket | None] = contextvars.ContextVar(
    "weakincentives_durable_call", default=None
)


class DurableBus:
    """The evaluation's bus: publishes live events, buffers their records for the store.

    It wraps the bus the caller's subscribers and session listen to. Events are
    encoded when published, so one that cannot be stored fails where it was published
    (a handler's publish: the call fails, as any handler error does).
    """

    __slots__ = ("_inner", "_marks", "_pending", "_replaying")

    def __init__(self, inner: EventPublisher, replaying: Callable[[], bool]) -> None:
        self._inner = inner
        self._replaying = replaying
        self._pending: list[NewEvent] = []
        self._marks: dict[int, tuple[object, Mark]] = {}

    def publish(self, event: object, /) -> object:
        """Publish ``event`` unless it is already in the log; buffer the record of a new one."""
        marked = self._marks.pop(id(event), None)
        if marked is not None:
            # A call's ToolInvoked: written with its step already, or replayed from it.
            return self._inner.publish(event) if marked[1] == "logged" else _unpublished(event)
        bucket = _CALL.get()
        if bucket is not None and bucket.bus is self:
            bucket.records.append(event_record(event))
            return self._inner.publish(event)
        # A failure ends the evaluation, so no later step could have written it already.
        if self._replaying() and not isinstance(event, PromptFailed):
            return _unpublished(event)
        self._pending.append(event_record(event))
        return self._inner.publish(event)

    @property
    def inner(self) -> EventPublisher:
        """The bus the caller's subscribers (and session) listen to."""
        return self._inner

    def mark(self, event: ToolInvoked, mark: Mark) -> None:
        """Note that ``event`` is in the log (``logged``: still to publish; ``replayed``: not)."""
        self._marks[id(event)] = (event, mark)

    def take_pending(self) -> list[NewEvent]:
        """The records buffered since the last step, to write with the next one."""
        pending, self._pending = self._pending, []
        return pending


def _unpublished(event: object) -> PublishResult:
    return PublishResult(event=event, handlers_invoked=0)


class DurableSteps:
    """Runs an evaluation's steps through ``store``, replaying those already recorded."""

    __slots__ = (
        "_approvals",
        "_bus",
        "_document",
        "_evaluation_id",
        "_fingerprints",
        "_journal",
        "_prompt_name",
        "_saved",
        "_session_id",
        "_store",
    )

    def __init__(
        self,
        *,
        store: Store,
        evaluation_id: str,
        session_id: str,
        prompt_name: str,
        document: dict[str, JSONValue],
        bus: EventPublisher,
        journal: tuple[Step, ...] = (),
        approvals: tuple[Approval, ...] = (),
        saved: tuple[int, EvaluationStatus | None] = (-1, None),
    ) -> None:
        self._store = store
        self._evaluation_id = evaluation_id
        self._session_id = session_id
        self._prompt_name = prompt_name
        self._document = document
        self._journal = {step.key: step.document for step in journal}
        self._approvals = {approval.call_id: approval for approval in approvals}
        self._saved = saved
        self._fingerprints = RequestDigests()
        self._bus = DurableBus(bus, self.replaying)

    @property
    def bus(self) -> DurableBus:
        """The bus the evaluation publishes on."""
        return self._bus

    def replaying(self) -> bool:
        """True while recorded steps remain that the loop has not reached yet."""
        return bool(self._journal)

    async def send[ReplyT](self, key: str, request: object, run: SendStep[ReplyT]) -> Sent[ReplyT]:
        """The recorded reply (after checking the request), or the exchange, recorded."""
        if key in self._journal:
            return self._replayed_send(key, request, self._journal.pop(key))
        if self._journal:
            raise self._unreached(key)
        sent = await run()
        document: JSONValue = {
            "reply": dump_typed(sent.reply),
            "deltas": list(sent.deltas),
            "fingerprint": self._fingerprints.of(request),
        }
        step = await self._record(key, document)
        if step.document == document:
            return sent
        return self._replayed_send(key, request, step.document)  # another process was first

    def _unreached(self, key: str) -> PromptEvaluationError:
        """The failure of a run about to send ``key`` live while recorded steps remain.

        Sends go one at a time and each follows every step before it, so a step still
        in the journal here is one this run never reaches (a row changed or added by
        hand). Carrying on would replay nothing more, and would keep every live event
        out of the log and from the subscribers, since the journal is never used up.
        """
        unreached = sorted(self._journal)
        shown = ", ".join(map(repr, unreached[:_UNREACHED_SHOWN]))
        if len(unreached) > _UNREACHED_SHOWN:
            shown += f" and {len(unreached) - _UNREACHED_SHOWN} more"
        return PromptEvaluationError(
            f"evaluation {self._evaluation_id!r} records steps this run never reaches "
            f"({shown}) before its step {key!r}; its steps were changed outside this "
            "library: remove those rows, or start the evaluation again",
            prompt_name=self._prompt_name,
            phase="request",
        )

    def _replayed_send[ReplyT](
        self, key: str, request: object, document: JSONValue
    ) -> Sent[ReplyT]:
        document = self._member(key, document, "reply")
        changes = self._fingerprints.changes(document.get("fingerprint"), request)
        if changes:
            round_number = int(key.split("/", maxsplit=1)[0].removeprefix("round:"))
            raise ReplayMismatchError(
                prompt_name=self._prompt_name, round=round_number, changes=changes
            )
        deltas = document.get("deltas")
        return Sent(
            reply=cast("ReplyT", parse_typed(object, document["reply"])),
            deltas=tuple(str(text) for text in deltas) if isinstance(deltas, list) else (),
        )

    async def call(
        self, key: str, call: ToolCall, tool: Tool[Any, Any] | None, run: CallStep
    ) -> ToolInvoked:
        """The recorded outcome, or the call run and recorded with the events it published."""
        if key in self._journal:
            return self._replayed_call(key, self._journal.pop(key))
        bucket = _CallBucket(bus=self._bus, records=[])
        token = _CALL.set(bucket)
        try:
            event = await run()
        finally:
            _CALL.reset(token)
        try:
            document: JSONValue = {"event": dump_typed(event, ToolInvoked)}
            records = [*bucket.records, event_record(event)]
        except SchemaError as exc:
            raise PromptEvaluationError(
                f"call {call.call_id!r} of tool {call.name!r} cannot be recorded: "
                f"{exc.message}; a durable evaluation stores every call's params and "
                "result, so their types must be storable (see specs/SERDE.md)",
                prompt_name=self._prompt_name,
                phase="tool",
            ) from exc
        step = await self._record(key, document, records)
        if step.document != document:
            return self._replayed_call(key, step.document)  # another process was first
        self._bus.mark(event, "logged")
        return event

    def _replayed_call(self, key: str, document: JSONValue) -> ToolInvoked:
        event = parse_typed(ToolInvoked, self._member(key, document, "event")["event"])
        self._bus.mark(event, "replayed")
        return event

    def _member(self, key: str, document: JSONValue, name: str) -> dict[str, JSONValue]:
        """A recorded step's document, an object holding ``name`` (as every step records)."""
        if isinstance(document, dict) and name in document:
            return document
        raise PromptEvaluationError(
            f"step {key!r} of evaluation {self._evaluation_id!r} records no {name!r} "
            f"(its document is {_shown(document)}); it was changed outside this library",
            prompt_name=self._prompt_name,
            phase="tool" if name == "event" else "request",
        )

    async def approval(self, key: str, call: ToolCall, tool: Tool[Any, Any]) -> Decision | None:
        """The stored decision; without one, the call is stored as waiting for a person."""
        stored = self._approvals.get(call.call_id)
        if stored is not None and stored.decision is not None:
            return Decision(approved=stored.decision == "approved", message=stored.message)
        if stored is None:
            self._approvals[call.call_id] = await self._store.request_approval(
                self._evaluation_id,
                call_id=call.call_id,
                tool_name=call.name,
                arguments=_arguments(call),
            )
        return None

    async def checkpoint(self, progress: Progress) -> None:
        """Save the checkpoint: per round while running, and the outcome at the end."""
        if progress.status == "done":
            await self._finish(progress)
            return
        if progress.status == "failed":
            await self._fail(progress)
            return
        if progress.round < self._saved[0] or (progress.round, progress.status) == self._saved:
            return  # a replayed round: its checkpoint is saved already
        events = self._bus.take_pending() if progress.status == "paused" else []
        await self._save(progress.round, progress.status, self._document, events)

    async def _finish(self, progress: Progress) -> None:
        if FINAL_STEP in self._journal:
            self._journal.pop(FINAL_STEP)  # recorded before a crash: its events are written
        else:
            await self._record(FINAL_STEP, {"rounds": progress.round})
        assert progress.response is not None
        response = dump_typed(progress.response, RESPONSE_DOCUMENT.value_type)
        document: dict[str, JSONValue] = {
            **self._document,
            "response": {
                "kind": RESPONSE_DOCUMENT.name,
                "version": RESPONSE_DOCUMENT.version,
                "body": response,
            },
        }
        await self._save(progress.round, "done", document, [])

    async def _fail(self, progress: Progress) -> None:
        failure = progress.failure
        assert failure is not None
        document: dict[str, JSONValue] = {
            **self._document,
            "failure": {
                "phase": failure.phase,
                "message": failure.message,
                "error_type": failure.error_type,
            },
        }
        # A failure while replaying (a changed request) keeps the round reached before.
        round_number = max(progress.round, self._saved[0])
        try:
            await self._save(round_number, "failed", document, self._bus.take_pending())
        except StoreError as error:  # the evaluation's own failure is what the caller sees
            logger.error(
                "could not save the failed checkpoint of evaluation %s: %s",
                self._evaluation_id,
                error,
            )

    async def _record(
        self, key: str, document: JSONValue, records: list[NewEvent] | None = None
    ) -> Step:
        events = [*self._bus.take_pending(), *(records or ())]
        return await self._store.record_step(
            self._evaluation_id, key, document, session_id=self._session_id, events=events
        )

    async def _save(
        self,
        round_number: int,
        status: EvaluationStatus,
        document: JSONValue,
        events: list[NewEvent],
    ) -> None:
        await self._store.save_checkpoint(
            self._evaluation_id,
            round=round_number,
            status=status,
            document=document,
            session_id=self._session_id,
            events=events,
        )
        self._saved = (round_number, status)


def _shown(value: object) -> str:
    """A stored value as an error quotes it: its ``repr``, cut to 80 characters."""
    return clip(repr(value), 80)


def _arguments(call: ToolCall) -> JSONValue:
    """The call's arguments as JSON: decoded when they are JSON text, else the text."""
    arguments = call.arguments
    if not isinstance(arguments, str):
        return dump_typed(dict(arguments))
    try:
        return loads(arguments)
    except Exception:  # text the model sent that is not JSON is stored as the text
        return arguments
