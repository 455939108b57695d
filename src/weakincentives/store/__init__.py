"""Durable state for evaluations: session event logs, checkpoints, steps and approvals.

:class:`Store` is the protocol; :class:`SQLiteStore` (one file, the embedded default)
and :class:`PostgresStore` (the ``postgres`` extra; many processes and machines)
implement it in their database's idiom, and :class:`SyncStore` gives synchronous code
the same calls. Documents are JSON produced elsewhere (serde). See
``specs/PERSISTENCE.md``.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.store._postgres import PostgresStore
from weakincentives.store._protocol import Store
from weakincentives.store._records import (
    FORMAT_VERSION,
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
from weakincentives.store._sqlite import SQLiteStore
from weakincentives.store._sync import SyncStore

__all__ = [
    "FORMAT_VERSION",
    "Approval",
    "ApprovalDecision",
    "Checkpoint",
    "EvaluationStatus",
    "EvaluationSummary",
    "NewEvent",
    "PostgresStore",
    "SQLiteStore",
    "SessionSummary",
    "Step",
    "Store",
    "StoredEvent",
    "SyncStore",
]

publish("weakincentives.store", globals(), __all__)
