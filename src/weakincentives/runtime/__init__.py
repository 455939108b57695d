"""The runtime: tool execution, the event bus, events, the session that records them, cost."""

from __future__ import annotations

from weakincentives.runtime._bus import (
    EventBus,
    EventDeliveryError,
    HandlerFailure,
    InProcessEventBus,
    PublishResult,
    Subscription,
)
from weakincentives.runtime._cost import Cost, ModelPrice, Pricing, PricingError
from weakincentives.runtime._events import (
    PromptExecuted,
    PromptRendered,
    TokenUsage,
    ToolInvoked,
    ToolTelemetry,
)
from weakincentives.runtime._execution import (
    ExecutionScope,
    ToolCall,
    ToolExecution,
    execute_tool_call,
)
from weakincentives.runtime._reducers import Reducer, append, replace_latest, upsert_by
from weakincentives.runtime._session import Session, SessionProtocol
from weakincentives.runtime._snapshot import SessionSnapshot
from weakincentives.runtime._storage import SessionStorage, SessionStorageError

__all__ = [
    "Cost",
    "EventBus",
    "EventDeliveryError",
    "ExecutionScope",
    "HandlerFailure",
    "InProcessEventBus",
    "ModelPrice",
    "Pricing",
    "PricingError",
    "PromptExecuted",
    "PromptRendered",
    "PublishResult",
    "Reducer",
    "Session",
    "SessionProtocol",
    "SessionSnapshot",
    "SessionStorage",
    "SessionStorageError",
    "Subscription",
    "TokenUsage",
    "ToolCall",
    "ToolExecution",
    "ToolInvoked",
    "ToolTelemetry",
    "append",
    "execute_tool_call",
    "replace_latest",
    "upsert_by",
]
