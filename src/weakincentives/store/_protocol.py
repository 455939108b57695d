"""The ``Store`` protocol: what a durable evaluation needs from a database.

Four kinds of state, each with the one guarantee that makes resuming safe:

- session logs are append-only, numbered 1, 2, 3 ... by the store, never reordered;
- a checkpoint per evaluation only moves forward (a stale writer gets a conflict);
- a step is recorded once (the first writer wins, later writers get its result);
- an approval is decided once (deciding again the same way is a no-op).

Backends speak their database's idiom behind it: :class:`SQLiteStore` (one file, the
embedded default) and :class:`PostgresStore` (many processes and machines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from weakincentives.serde import JSONValue
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

__all__ = ["Store"]


class Store(Protocol):
    """Durable state for evaluations: session logs, checkpoints, steps and approvals.

    Every method is a coroutine; :class:`SyncStore` gives synchronous code the same
    calls. Methods check their arguments first (:class:`~weakincentives.errors.StoreUsageError`)
    and documents before writing anything (:class:`~weakincentives.errors.DocumentError`);
    a database failure is a :class:`~weakincentives.errors.StoreDatabaseError` with the
    driver's error as its cause, and each write is one transaction: it happens wholly or
    not at all. A call cancelled while the database works may still complete.
    """

    async def open(self) -> None:
        """Connect, and create or migrate the schema; idempotent.

        Other methods open the store on first use; call it to fail early. Raises
        :class:`~weakincentives.errors.SchemaVersionError` for a database migrated by a
        newer weakincentives.
        """
        ...

    async def close(self) -> None:
        """Release the connections; the store cannot be used again. Idempotent."""
        ...

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> tuple[int, int]:
        """Append ``events`` to the session's log in one transaction.

        Returns the (first, last) sequence numbers they got. Sequence numbers are
        gap-free per session, starting at 1 for a new session; concurrent appenders,
        in this process or another, never interleave within a batch.
        """
        ...

    async def read(
        self, session_id: str, *, after: int = 0, limit: int | None = None
    ) -> tuple[StoredEvent, ...]:
        """The session's events with ``seq > after`` in order, at most ``limit`` of them.

        An unknown session has no events.
        """
        ...

    async def list_sessions(self) -> tuple[SessionSummary, ...]:
        """Every session with at least one event, ordered by id."""
        ...

    async def delete_session(self, session_id: str) -> bool:
        """Delete the session and its events; False when there was none.

        A later append starts the session again at sequence number 1.
        """
        ...

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
        """Replace the evaluation's checkpoint with this one, atomically.

        Saving the stored round again replaces it (a status change, a retried save);
        an older round raises :class:`~weakincentives.errors.CheckpointConflictError`.
        ``events`` are appended to ``session_id``'s log in the same transaction, so
        they are written if and only if the checkpoint is.
        """
        ...

    async def load_checkpoint(self, evaluation_id: str) -> Checkpoint | None:
        """The evaluation's latest checkpoint, or None when it has none."""
        ...

    async def list_evaluations(
        self, *, status: EvaluationStatus | None = None
    ) -> tuple[EvaluationSummary, ...]:
        """Evaluations with a checkpoint (of ``status``, if given), ordered by id."""
        ...

    async def delete_evaluation(self, evaluation_id: str) -> bool:
        """Delete the evaluation's checkpoint, steps and approvals; False when it had none.

        Its session log is left alone (delete it with :meth:`delete_session`).
        """
        ...

    async def record_step(
        self,
        evaluation_id: str,
        key: str,
        document: JSONValue,
        *,
        session_id: str | None = None,
        events: Sequence[NewEvent] = (),
    ) -> Step:
        """Record a step's result once; return the stored step.

        When the step was already recorded, the stored one is returned unchanged: the
        first writer wins, so racing or resumed processes agree on one result.
        ``events`` are appended to ``session_id``'s log in the same transaction, and only
        by the writer that recorded the step: a crash loses both or neither, and a
        losing writer appends nothing.
        """
        ...

    async def read_steps(self, evaluation_id: str) -> tuple[Step, ...]:
        """The evaluation's recorded steps, in the order they were recorded."""
        ...

    async def request_approval(
        self, evaluation_id: str, *, call_id: str, tool_name: str, arguments: JSONValue
    ) -> Approval:
        """Store a tool call as waiting for a person; return the stored request.

        Requesting the same call again returns the stored request unchanged.
        """
        ...

    async def decide_approval(
        self,
        evaluation_id: str,
        call_id: str,
        *,
        decision: ApprovalDecision,
        message: str | None = None,
    ) -> Approval:
        """Approve or deny a waiting call, once.

        Deciding again identically returns the stored decision; differently raises
        :class:`~weakincentives.errors.ApprovalConflictError`, and a call never
        requested raises :class:`~weakincentives.errors.UnknownApprovalError`.
        """
        ...

    async def read_approvals(self, evaluation_id: str) -> tuple[Approval, ...]:
        """The evaluation's approvals, pending and decided, in the order requested."""
        ...

    async def pending_approvals(self, evaluation_id: str | None = None) -> tuple[Approval, ...]:
        """Approvals still waiting for a decision, oldest first; of one evaluation if given."""
        ...
