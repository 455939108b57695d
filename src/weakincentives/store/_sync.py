"""``SyncStore``: the store's calls for synchronous code.

Each call runs the wrapped store's coroutine on the library's one background event loop
(as ``Adapter.evaluate`` runs ``evaluate_async``), so a pooled async store keeps its
connections on one loop across calls. Do not also use the wrapped store from another
event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from weakincentives._closing import Closing
from weakincentives._portal import run_sync
from weakincentives.serde import JSONValue
from weakincentives.store._protocol import Store
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

__all__ = ["SyncStore"]


class SyncStore(Closing):
    """A :class:`Store` with blocking methods: ``with SyncStore(SQLiteStore(path)) as store:``.

    The methods mean exactly what the :class:`Store` methods of the same names mean.
    """

    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    @property
    def store(self) -> Store:
        """The asynchronous store underneath."""
        return self._store

    def __repr__(self) -> str:
        return f"SyncStore({self._store!r})"

    def __enter__(self) -> Self:
        self.open()
        return self

    def open(self) -> None:
        """Connect and create or migrate the schema; idempotent."""
        run_sync(self._store.open())

    def close(self) -> None:
        """Release the connections; idempotent."""
        run_sync(self._store.close())

    def append(self, session_id: str, events: Sequence[NewEvent]) -> tuple[int, int]:
        """Append a batch in one transaction; return its (first, last) sequence numbers."""
        return run_sync(self._store.append(session_id, events))

    def read(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredEvent, ...]:
        """A session's events with ``seq > after``, in order."""
        return run_sync(self._store.read(session_id, after=after, limit=limit))

    def list_sessions(self) -> tuple[SessionSummary, ...]:
        """Every session, by id."""
        return run_sync(self._store.list_sessions())

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its events; False when there was none."""
        return run_sync(self._store.delete_session(session_id))

    def save_checkpoint(
        self,
        evaluation_id: str,
        *,
        round: int,
        status: EvaluationStatus,
        document: JSONValue,
        session_id: str | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Checkpoint:
        """Replace the evaluation's checkpoint (and append ``events``); see ``Store``."""
        return run_sync(
            self._store.save_checkpoint(
                evaluation_id,
                round=round,
                status=status,
                document=document,
                session_id=session_id,
                events=events,
            )
        )

    def load_checkpoint(self, evaluation_id: str) -> Checkpoint | None:
        """The evaluation's latest checkpoint, or None."""
        return run_sync(self._store.load_checkpoint(evaluation_id))

    def list_evaluations(
        self, *, status: EvaluationStatus | None = None
    ) -> tuple[EvaluationSummary, ...]:
        """Evaluations with a checkpoint (of ``status``, if given), by id."""
        return run_sync(self._store.list_evaluations(status=status))

    def delete_evaluation(self, evaluation_id: str) -> bool:
        """Delete an evaluation's checkpoint, steps and approvals."""
        return run_sync(self._store.delete_evaluation(evaluation_id))

    def record_step(
        self,
        evaluation_id: str,
        key: str,
        document: JSONValue,
        *,
        session_id: str | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Step:
        """Record a step once (with its events); the stored step when it already exists."""
        return run_sync(
            self._store.record_step(
                evaluation_id, key, document, session_id=session_id, events=events
            )
        )

    def read_steps(self, evaluation_id: str) -> tuple[Step, ...]:
        """An evaluation's steps in recording order."""
        return run_sync(self._store.read_steps(evaluation_id))

    def request_approval(
        self, evaluation_id: str, *, call_id: str, tool_name: str, arguments: JSONValue
    ) -> Approval:
        """Store a call as waiting for approval; the stored request when it exists."""
        return run_sync(
            self._store.request_approval(
                evaluation_id, call_id=call_id, tool_name=tool_name, arguments=arguments
            )
        )

    def decide_approval(
        self,
        evaluation_id: str,
        call_id: str,
        *,
        decision: ApprovalDecision,
        message: str | None = None,
    ) -> Approval:
        """Decide a waiting call once; deciding again identically is a no-op."""
        return run_sync(
            self._store.decide_approval(evaluation_id, call_id, decision=decision, message=message)
        )

    def read_approvals(self, evaluation_id: str) -> tuple[Approval, ...]:
        """An evaluation's approvals, pending and decided, in request order."""
        return run_sync(self._store.read_approvals(evaluation_id))

    def pending_approvals(self, evaluation_id: str | None = None) -> tuple[Approval, ...]:
        """Approvals waiting for a decision, oldest first."""
        return run_sync(self._store.pending_approvals(evaluation_id))
