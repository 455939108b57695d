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
    Approval,
    Checkpoint,
    NewEvent,
    StoredEvent,
)
from weakincentives.store._records import (
    EvaluationStatus as EvaluationStatus,
)
from weakincentives.store._records import (
    Step as Step,
)
from weakincentives.store._sqlite import SQLiteStore
from weakincentives.store._sync import SyncStore

__all__ = [
    "Approval",
    "Checkpoint",
    "NewEvent",
    "PostgresStore",
    "SQLiteStore",
    "Store",
    "StoredEvent",
    "SyncStore",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "EvaluationStatus",
    "Step",
)

publish("weakincentives.store", globals(), (*__all__, *_INTERNAL))
