"""The public face both backends share: check the arguments, encode, then call the backend.

Checking and encoding happen in the caller's task, before any database work, so a bad
argument or an unstorable document never opens a transaction and reads the same on
SQLite and PostgreSQL. Each backend implements only the ``_`` primitives, in its own
database's idiom.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import TracebackType
from typing import Self

from weakincentives.errors import StoreUsageError
from weakincentives.serde import JSONValue
from weakincentives.store._checks import (
    check_decision,
    check_id,
    check_round,
    check_status,
    check_text,
    encode,
    encode_events,
    page,
)
from weakincentives.store._records import (
    Approval,
    ApprovalDecision,
    Checkpoint,
    EvaluationStatus,
    EvaluationSummary,
    NewEvent,
    SessionSummary,
    Step,
    StoredEvent,
)
from weakincentives.store._writes import (
    ApprovalRequest,
    CheckpointWrite,
    EventRows,
    StepWrite,
    Verdict,
)

__all__ = ["CheckedStore"]


class CheckedStore(ABC):
    """Argument and document checks in front of a backend's primitives (see ``Store``).

    ``location`` names the database (a file, a server) in the store's repr and errors.
    """

    __slots__ = ("_location",)

    def __init__(self, location: str) -> None:
        self._location = location

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._location!r})"

    def _closed_error(self, operation: str) -> StoreUsageError:
        """What a call on the closed store raises."""
        return StoreUsageError(f"{operation}: the store {self._location} is closed")

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @abstractmethod
    async def open(self) -> None:
        """Connect and migrate; idempotent."""

    @abstractmethod
    async def close(self) -> None:
        """Release the database; idempotent."""

    # -- sessions ---------------------------------------------------------------------

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> tuple[int, int]:
        """Append a batch in one transaction; return its (first, last) sequence numbers.

        See :meth:`Store.append`.
        """
        check_id("session_id", session_id)
        return await self._append(session_id, encode_events(session_id, events))

    async def read(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredEvent, ...]:
        """A session's events with ``seq > after``, in order; see :meth:`Store.read`."""
        check_id("session_id", session_id)
        after, limit = page(after, limit)
        return await self._read(session_id, after, limit)

    async def list_sessions(self) -> tuple[SessionSummary, ...]:
        """Every session, by id."""
        return await self._list_sessions()

    async def delete_session(self, session_id: str) -> bool:
        """Delete a session and its events; False when there was none."""
        check_id("session_id", session_id)
        return await self._delete_session(session_id)

    # -- checkpoints ------------------------------------------------------------------

    async def save_checkpoint(
        self,
        evaluation_id: str,
        *,
        round: int,
        status: EvaluationStatus,
        document: JSONValue,
        session_id: str | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Checkpoint:
        """Replace the evaluation's checkpoint; see :meth:`Store.save_checkpoint`."""
        check_id("evaluation_id", evaluation_id)
        check_round(round)
        checked = check_status(status)
        if session_id is not None:
            check_id("session_id", session_id)
        record = f"the checkpoint of evaluation {evaluation_id!r}"
        rows = _event_rows(session_id, events, record)
        return await self._save_checkpoint(
            CheckpointWrite(
                evaluation_id=evaluation_id,
                round=round,
                status=checked,
                session_id=session_id,
                document=encode(document, record=record),
                events=rows,
            )
        )

    async def load_checkpoint(self, evaluation_id: str) -> Checkpoint | None:
        """The evaluation's latest checkpoint, or None."""
        check_id("evaluation_id", evaluation_id)
        return await self._load_checkpoint(evaluation_id)

    async def list_evaluations(
        self, *, status: EvaluationStatus | None = None
    ) -> tuple[EvaluationSummary, ...]:
        """Evaluations with a checkpoint (of ``status``, if given), by id."""
        return await self._list_evaluations(None if status is None else check_status(status))

    async def delete_evaluation(self, evaluation_id: str) -> bool:
        """Delete an evaluation's checkpoint, steps and approvals; False when it had none."""
        check_id("evaluation_id", evaluation_id)
        return await self._delete_evaluation(evaluation_id)

    # -- steps ------------------------------------------------------------------------

    async def record_step(
        self,
        evaluation_id: str,
        key: str,
        document: JSONValue,
        *,
        session_id: str | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Step:
        """Record a step once, returning the stored one; see :meth:`Store.record_step`."""
        check_id("evaluation_id", evaluation_id)
        check_id("step key", key)
        if session_id is not None:
            check_id("session_id", session_id)
        where = f"step {key!r} of evaluation {evaluation_id!r}"
        rows = _event_rows(session_id, events, where)
        return await self._record_step(
            StepWrite(
                evaluation_id=evaluation_id,
                key=key,
                document=encode(document, record=where),
                session_id=session_id,
                events=rows,
            )
        )

    async def read_steps(self, evaluation_id: str) -> tuple[Step, ...]:
        """An evaluation's steps in recording order."""
        check_id("evaluation_id", evaluation_id)
        return await self._read_steps(evaluation_id)

    # -- approvals --------------------------------------------------------------------

    async def request_approval(
        self, evaluation_id: str, *, call_id: str, tool_name: str, arguments: JSONValue
    ) -> Approval:
        """Store a call as waiting for approval; see :meth:`Store.request_approval`."""
        check_id("evaluation_id", evaluation_id)
        check_id("call_id", call_id)
        check_id("tool_name", tool_name)
        text = encode(
            arguments, record=f"the arguments of call {call_id!r} of evaluation {evaluation_id!r}"
        )
        return await self._request_approval(
            ApprovalRequest(
                evaluation_id=evaluation_id, call_id=call_id, tool_name=tool_name, arguments=text
            )
        )

    async def decide_approval(
        self,
        evaluation_id: str,
        call_id: str,
        *,
        decision: ApprovalDecision,
        message: str | None = None,
    ) -> Approval:
        """Decide a waiting call once; see :meth:`Store.decide_approval`."""
        check_id("evaluation_id", evaluation_id)
        check_id("call_id", call_id)
        checked = check_decision(decision)
        if message is not None:
            check_text("message", message)
        return await self._decide_approval(
            Verdict(evaluation_id=evaluation_id, call_id=call_id, decision=checked, message=message)
        )

    async def read_approvals(self, evaluation_id: str) -> tuple[Approval, ...]:
        """An evaluation's approvals, pending and decided, in request order."""
        check_id("evaluation_id", evaluation_id)
        return await self._read_approvals(evaluation_id)

    async def pending_approvals(self, evaluation_id: str | None = None) -> tuple[Approval, ...]:
        """Approvals waiting for a decision, oldest first; of one evaluation if given."""
        if evaluation_id is not None:
            check_id("evaluation_id", evaluation_id)
        return await self._pending_approvals(evaluation_id)

    # -- what a backend implements (arguments checked, documents encoded) -------------

    @abstractmethod
    async def _append(self, session_id: str, rows: EventRows) -> tuple[int, int]: ...

    @abstractmethod
    async def _read(
        self, session_id: str, after: int, limit: int | None
    ) -> tuple[StoredEvent, ...]: ...

    @abstractmethod
    async def _list_sessions(self) -> tuple[SessionSummary, ...]: ...

    @abstractmethod
    async def _delete_session(self, session_id: str) -> bool: ...

    @abstractmethod
    async def _save_checkpoint(self, write: CheckpointWrite) -> Checkpoint: ...

    @abstractmethod
    async def _load_checkpoint(self, evaluation_id: str) -> Checkpoint | None: ...

    @abstractmethod
    async def _list_evaluations(
        self, status: EvaluationStatus | None
    ) -> tuple[EvaluationSummary, ...]: ...

    @abstractmethod
    async def _delete_evaluation(self, evaluation_id: str) -> bool: ...

    @abstractmethod
    async def _record_step(self, write: StepWrite) -> Step: ...

    @abstractmethod
    async def _read_steps(self, evaluation_id: str) -> tuple[Step, ...]: ...

    @abstractmethod
    async def _request_approval(self, request: ApprovalRequest) -> Approval: ...

    @abstractmethod
    async def _decide_approval(self, verdict: Verdict) -> Approval: ...

    @abstractmethod
    async def _read_approvals(self, evaluation_id: str) -> tuple[Approval, ...]: ...

    @abstractmethod
    async def _pending_approvals(self, evaluation_id: str | None) -> tuple[Approval, ...]: ...


def _event_rows(session_id: str | None, events: Sequence[NewEvent], record: str) -> EventRows:
    """The encoded events written with ``record`` (none when ``events`` is empty)."""
    if isinstance(events, tuple | list) and not events:
        return []
    if session_id is None:
        raise StoreUsageError(f"events written with {record} need the session_id of their log")
    return encode_events(session_id, events)
