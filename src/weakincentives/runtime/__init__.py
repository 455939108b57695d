"""The runtime: tool execution, the event bus, events, the session that records them, cost."""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.runtime._batch import execute_tool_calls as execute_tool_calls
from weakincentives.runtime._bus import (
    EventBus,
    InProcessEventBus,
)
from weakincentives.runtime._bus import (
    EventDeliveryError as EventDeliveryError,
)
from weakincentives.runtime._bus import (
    HandlerFailure as HandlerFailure,
)
from weakincentives.runtime._bus import (
    PublishResult as PublishResult,
)
from weakincentives.runtime._bus import (
    Subscription as Subscription,
)
from weakincentives.runtime._cost import Cost, ModelPrice, Pricing, PricingError
from weakincentives.runtime._events import (
    EVENT_DOCUMENT,
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    TextDelta,
    TokenUsage,
    ToolInvoked,
)
from weakincentives.runtime._events import (
    FailurePhase as FailurePhase,
)
from weakincentives.runtime._execution import (
    execute_tool_call as execute_tool_call,
)
from weakincentives.runtime._execution import (
    publish_tool_invoked as publish_tool_invoked,
)
from weakincentives.runtime._execution import (
    refuse_tool_call as refuse_tool_call,
)
from weakincentives.runtime._reducers import append, replace_latest, upsert_by
from weakincentives.runtime._retention import Retention
from weakincentives.runtime._session import Session
from weakincentives.runtime._snapshot import SessionSnapshot
from weakincentives.runtime._steps import ToolCall
from weakincentives.runtime._steps import ToolExecution as ToolExecution
from weakincentives.runtime._storage import SessionStorageError as SessionStorageError

__all__ = [
    "EVENT_DOCUMENT",
    "Cost",
    "EventBus",
    "InProcessEventBus",
    "ModelPrice",
    "OutputRejected",
    "Pricing",
    "PricingError",
    "PromptExecuted",
    "PromptFailed",
    "PromptRendered",
    "RequestRetried",
    "Retention",
    "Session",
    "SessionSnapshot",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolInvoked",
    "append",
    "replace_latest",
    "upsert_by",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = (
    "EventDeliveryError",
    "FailurePhase",
    "HandlerFailure",
    "PublishResult",
    "SessionStorageError",
    "Subscription",
    "ToolExecution",
    "execute_tool_call",
    "execute_tool_calls",
    "publish_tool_invoked",
    "refuse_tool_call",
)

publish("weakincentives.runtime", globals(), (*__all__, *_INTERNAL))
