"""Starting evaluations (in process or on a store), and resuming durable ones by id.

Starting saves a checkpoint (round 0) before the first request, holding what a resume
needs to rebuild the evaluation: the prompt's ``ns``/``key``, the bound params, the
visibility overrides, the deadline, the disclosure policy, the extras that can be
stored, the conversation it continues, the session id and the start time. The loop
then runs on a :class:`DurableSteps` runner.

Resuming loads the checkpoint, checks the prompt, rebuilds the session from its log
(when the caller gives no session, or an empty one) and runs the loop again with the
recorded steps: finished requests and tool calls are not repeated, their events are
not published again, and the evaluation carries on from the first step that was not
recorded. A finished evaluation returns its stored response.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from uuid import UUID

from weakincentives._bounded import clip
from weakincentives.adapters._channels import Channels, resolve_channels
from weakincentives.adapters._durable import DurableSteps
from weakincentives.adapters._loop import Evaluation
from weakincentives.adapters._provider import Provider
from weakincentives.adapters._response import RESPONSE_DOCUMENT, PromptResponse
from weakincentives.adapters._settings import Disclosure, LoopSettings
from weakincentives.adapters._step_runner import IN_PROCESS, StepRunner
from weakincentives.adapters._turns import ConversationItem
from weakincentives.errors import ConfigValidationError, ResumeError, SchemaError
from weakincentives.prompt import (
    EvaluatingAdapter,
    EventPublisher,
    Prompt,
    SectionPath,
    SectionVisibility,
    SessionProtocol,
    VisibilityOverrides,
)
from weakincentives.runtime import EVENT_DOCUMENT, Session
from weakincentives.serde import JSONValue, dump_typed, load_document, parse_typed
from weakincentives.store import Store, SyncStore

__all__ = ["Launch", "resume_evaluation", "start_evaluation", "store_of"]

logger = logging.getLogger("weakincentives.adapters")

CHECKPOINT_FORMAT = 1
"""The layout of a durable evaluation's checkpoint document."""

type _Overrides = Mapping[SectionPath, SectionVisibility]


@dataclass(frozen=True, slots=True, kw_only=True)
class Launch:
    """What the adapter gives every evaluation it starts or resumes."""

    provider: Provider[Any, Any]
    adapter: EvaluatingAdapter
    settings: LoopSettings
    executor: concurrent.futures.Executor | None


def store_of(store: object) -> Store:
    """The async store behind ``store`` (a ``SyncStore`` is unwrapped)."""
    if isinstance(store, SyncStore):
        return store.store
    if not all(callable(getattr(store, name, None)) for name in _STORE_METHODS):
        raise ConfigValidationError(
            f"store must be a Store (SQLiteStore, PostgresStore) or a SyncStore, got "
            f"{type(store).__name__}",
            field_name="store",
            value=store,
        )
    return cast(Store, store)


_STORE_METHODS = ("record_step", "read_steps", "save_checkpoint", "load_checkpoint", "read")


async def start_evaluation[OutputT](
    launch: Launch,
    store: Store | None,
    prompt: Prompt[OutputT],
    params: tuple[object, ...],
    *,
    channels: Channels,
    disclosure: Disclosure,
    overrides: VisibilityOverrides | None,
    deadline: datetime | None,
    earlier: tuple[ConversationItem, ...],
    extras: Mapping[str, object] | None,
    evaluation_id: str | None,
    steps: StepRunner = IN_PROCESS,
) -> PromptResponse[OutputT]:
    """Run an evaluation: in process, with every step recorded in ``store``, or on ``steps``."""
    started: datetime | None = None
    if store is not None:
        if evaluation_id is None:
            evaluation_id = launch.settings.new_id()
        started = launch.settings.clock()
        durable = await _start(
            store,
            evaluation_id,
            _document(
                prompt.bind(*params),
                overrides=overrides,
                deadline=deadline,
                disclosure=disclosure,
                earlier=earlier,
                extras=extras,
                session_id=str(channels.session.session_id),
                started=started,
            ),
            prompt_name=prompt.name,
            bus=channels.bus,
        )
        steps, channels = durable, Channels(durable.bus, channels.session)
    evaluation = Evaluation[Any, Any, OutputT](
        provider=launch.provider,
        adapter=launch.adapter,
        prompt=prompt,
        params=params,
        channels=channels,
        settings=launch.settings,
        disclosure=disclosure,
        overrides=overrides,
        deadline=deadline,
        earlier=earlier,
        executor=launch.executor,
        extras=extras,
        steps=steps,
        evaluation_id=evaluation_id,
        started_at=started,
    )
    return await evaluation.run()


async def _start(
    store: Store,
    evaluation_id: str,
    document: dict[str, JSONValue],
    *,
    prompt_name: str,
    bus: EventPublisher,
) -> DurableSteps:
    """Save the first checkpoint (round 0) of a new durable evaluation; its runner."""
    if await store.load_checkpoint(evaluation_id) is not None:
        raise ConfigValidationError(
            f"the store already holds an evaluation {evaluation_id!r}; resume it with "
            "adapter.resume, or start a new one with another evaluation_id",
            field_name="evaluation_id",
            value=evaluation_id,
        )
    session_id = str(document["session_id"])
    await store.save_checkpoint(
        evaluation_id, round=0, status="running", document=document, session_id=session_id
    )
    return DurableSteps(
        store=store,
        evaluation_id=evaluation_id,
        session_id=session_id,
        prompt_name=prompt_name,
        document=document,
        bus=bus,
        saved=(0, "running"),
    )


async def resume_evaluation[OutputT](
    launch: Launch,
    store: Store,
    evaluation_id: str,
    prompt: Prompt[OutputT],
    *,
    bus: EventPublisher | None,
    session: SessionProtocol | None,
    extras: Mapping[str, object] | None,
) -> PromptResponse[OutputT]:
    """Carry the stored evaluation on from its last recorded step; see the module docstring."""
    checkpoint = await store.load_checkpoint(evaluation_id)
    if checkpoint is None:
        raise ResumeError(evaluation_id=evaluation_id, reason="the store has no such evaluation")
    document = checkpoint.document
    if not isinstance(document, dict) or document.get("format") != CHECKPOINT_FORMAT:
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason="its checkpoint was not written by a durable evaluation of this library",
        )
    _check_prompt(evaluation_id, document, prompt)
    if checkpoint.status == "done":
        response = _part(evaluation_id, document, "response", dict)
        return cast(PromptResponse[OutputT], load_document(RESPONSE_DOCUMENT, response))
    _check_parts(evaluation_id, document)
    session_id = _part(evaluation_id, document, "session_id", str)
    session = await _session(store, evaluation_id, session_id, session)
    channels = resolve_channels(bus, session)
    stored_extras = parse_typed(dict[str, object], document["extras"])
    steps = DurableSteps(
        store=store,
        evaluation_id=evaluation_id,
        session_id=session_id,
        prompt_name=prompt.name,
        document=document,
        bus=channels.bus,
        journal=await store.read_steps(evaluation_id),
        approvals=await store.read_approvals(evaluation_id),
        saved=(checkpoint.round, checkpoint.status),
    )
    deadline = document["deadline"]
    evaluation = Evaluation[Any, Any, OutputT](
        provider=launch.provider,
        adapter=launch.adapter,
        prompt=prompt,
        params=parse_typed(tuple[object, ...], document["params"]),
        channels=Channels(steps.bus, channels.session),
        settings=launch.settings,
        disclosure=parse_typed(Disclosure, document["disclosure"]),
        overrides=_overrides(document["overrides"]),
        deadline=None if deadline is None else _instant(evaluation_id, "deadline", deadline),
        earlier=parse_typed(tuple[ConversationItem, ...], document["earlier"]),
        executor=launch.executor,
        extras={**stored_extras, **(extras or {})},
        steps=steps,
        evaluation_id=evaluation_id,
        started_at=_instant(evaluation_id, "started_at", document["started_at"]),
    )
    return await evaluation.run()


def _document(
    prompt: Prompt[Any],
    *,
    overrides: VisibilityOverrides | None,
    deadline: datetime | None,
    disclosure: Disclosure,
    earlier: tuple[ConversationItem, ...],
    extras: Mapping[str, object] | None,
    session_id: str,
    started: datetime,
) -> dict[str, JSONValue]:
    """The checkpoint document of a durable evaluation (its static part)."""
    return {
        "format": CHECKPOINT_FORMAT,
        "prompt": {"ns": prompt.ns, "key": prompt.key, "name": prompt.name},
        "params": dump_typed(prompt.params, tuple[object, ...]),
        "overrides": dump_typed(dict(overrides or {}), _Overrides),
        "deadline": None if deadline is None else deadline.isoformat(),
        "disclosure": dump_typed(disclosure, Disclosure),
        "extras": _storable(extras or {}),
        "earlier": dump_typed(earlier, tuple[ConversationItem, ...]),
        "session_id": session_id,
        "started_at": started.isoformat(),
    }


def _overrides(stored: JSONValue) -> VisibilityOverrides:
    """The visibility overrides a checkpoint holds (pairs of a section path and a visibility)."""
    declared: Any = _Overrides  # a type alias: parse_typed reads it as the type it names
    overrides: VisibilityOverrides = parse_typed(declared, stored)
    return overrides


def _storable(extras: Mapping[str, object]) -> JSONValue:
    """The extras that can be stored; the others must be passed to ``resume`` again."""
    kept: dict[str, JSONValue] = {}
    for name, value in extras.items():
        try:
            kept[name] = dump_typed(value)
        except SchemaError:
            logger.debug("extra %r is not stored: pass it to resume again", name)
    return dump_typed(kept, dict[str, object])


def _check_prompt(evaluation_id: str, document: Mapping[str, Any], prompt: Prompt[Any]) -> None:
    stored = document.get("prompt")
    expected = (stored.get("ns"), stored.get("key")) if isinstance(stored, dict) else None
    if expected != (prompt.ns, prompt.key):
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"it was started with the prompt {_label(expected)}, not "
            f"{prompt.ns}/{prompt.key}; pass that prompt",
        )


_PARTS = (
    "session_id",
    "params",
    "overrides",
    "deadline",
    "disclosure",
    "extras",
    "earlier",
    "started_at",
)
"""The members of a checkpoint document that resuming an unfinished evaluation reads."""


def _check_parts(evaluation_id: str, document: Mapping[str, JSONValue]) -> None:
    """Refuse a checkpoint document that lacks a member resuming reads."""
    missing = [name for name in _PARTS if name not in document]
    if missing:
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"its checkpoint document has no {', '.join(map(repr, missing))} "
            "(it was changed outside this library)",
        )


def _part[T](evaluation_id: str, document: Mapping[str, JSONValue], name: str, kind: type[T]) -> T:
    """The member ``name`` of a checkpoint document, which must be a ``kind``."""
    value = document.get(name)
    if not isinstance(value, kind):
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"the {name!r} of its checkpoint document is {_shown(value)}, not "
            f"{_KINDS[kind]} (it was changed outside this library)",
        )
    return value


_KINDS: dict[type, str] = {dict: "an object", str: "a string"}


def _instant(evaluation_id: str, name: str, value: JSONValue) -> datetime:
    """The time a checkpoint document keeps as ISO text under ``name``."""
    text = _part(evaluation_id, {name: value}, name, str)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"the {name!r} of its checkpoint document is {_shown(value)}, not an ISO "
            "time (it was changed outside this library)",
        ) from None


def _shown(value: object) -> str:
    """A stored value as an error quotes it: its ``repr``, cut to 80 characters."""
    return clip(repr(value), 80)


def _label(identity: tuple[object, object] | None) -> str:
    return "(unknown)" if identity is None else f"{identity[0]}/{identity[1]}"


async def _session(
    store: Store, evaluation_id: str, session_id: str, given: SessionProtocol | None
) -> SessionProtocol:
    """The session to resume in: ``given`` (checked) or a new one, rebuilt from the log."""
    if given is not None and str(given.session_id) != session_id:
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"it records into session {session_id}, not {given.session_id}; pass "
            "that session, or none to have it rebuilt from its log",
        )
    session = given if given is not None else Session(session_id=_uuid(evaluation_id, session_id))
    if isinstance(session, Session) and _empty(session):
        for stored in await store.read(session_id):
            if not isinstance(stored.document, dict):
                raise ResumeError(
                    evaluation_id=evaluation_id,
                    reason=f"event {stored.seq} of its session {session_id} is "
                    f"{_shown(stored.document)}, not an event document (it was changed "
                    "outside this library)",
                )
            event = load_document(EVENT_DOCUMENT, stored.document)
            try:
                session.apply(event)
            except Exception as error:  # as when the event was first recorded: reported, kept going
                logger.error(
                    "session %s failed to record %s again",
                    session_id,
                    stored.type_name,
                    exc_info=error,
                )
    return session


def _uuid(evaluation_id: str, session_id: str) -> UUID:
    """The id of the session to rebuild, which its checkpoint keeps as text."""
    try:
        return UUID(session_id)
    except ValueError:
        raise ResumeError(
            evaluation_id=evaluation_id,
            reason=f"the 'session_id' of its checkpoint document is {_shown(session_id)}, "
            "not a UUID (it was changed outside this library)",
        ) from None


def _empty(session: Session) -> bool:
    snapshot = session.snapshot()
    return not snapshot.slices and not snapshot.storage
