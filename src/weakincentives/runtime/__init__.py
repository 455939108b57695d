"""The runtime: the event bus and the session that records what happened."""

from __future__ import annotations

from weakincentives.runtime._bus import (
    EventBus,
    EventDeliveryError,
    HandlerFailure,
    InProcessEventBus,
    PublishResult,
    Subscription,
)
from weakincentives.runtime._reducers import Reducer, append, replace_latest, upsert_by
from weakincentives.runtime._session import Session, SessionProtocol
from weakincentives.runtime._snapshot import SessionSnapshot
from weakincentives.runtime._storage import SessionStorage, SessionStorageError

__all__ = [
    "EventBus",
    "EventDeliveryError",
    "HandlerFailure",
    "InProcessEventBus",
    "PublishResult",
    "Reducer",
    "Session",
    "SessionProtocol",
    "SessionSnapshot",
    "SessionStorage",
    "SessionStorageError",
    "Subscription",
    "append",
    "replace_latest",
    "upsert_by",
]
