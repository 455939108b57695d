"""The runtime: tool execution, the event bus, events, the session that records them, cost."""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.runtime._batch import execute_tool_calls
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
    EVENT_DOCUMENT,
    FailurePhase,
    OutputRejected,
    PromptExecuted,
    PromptFailed,
    PromptRendered,
    RequestRetried,
    TextDelta,
    TokenUsage,
    ToolInvoked,
    ToolTelemetry,
)
from weakincentives.runtime._execution import (
    execute_tool_call,
    publish_tool_invoked,
    refuse_tool_call,
)
from weakincentives.runtime._reducers import Reducer, append, replace_latest, upsert_by
from weakincentives.runtime._retention import DEFAULT_SLICE_LIMIT, Retention
from weakincentives.runtime._session import Session, SessionProtocol
from weakincentives.runtime._snapshot import SessionSnapshot
from weakincentives.runtime._steps import ToolCall, ToolExecution
from weakincentives.runtime._storage import SessionStorage, SessionStorageError

__all__ = [
    "DEFAULT_SLICE_LIMIT",
    "EVENT_DOCUMENT",
    "Cost",
    "EventBus",
    "EventDeliveryError",
    "FailurePhase",
    "HandlerFailure",
    "InProcessEventBus",
    "ModelPrice",
    "OutputRejected",
    "Pricing",
    "PricingError",
    "PromptExecuted",
    "PromptFailed",
    "PromptRendered",
    "PublishResult",
    "Reducer",
    "RequestRetried",
    "Retention",
    "Session",
    "SessionProtocol",
    "SessionSnapshot",
    "SessionStorage",
    "SessionStorageError",
    "Subscription",
    "TextDelta",
    "TokenUsage",
    "ToolCall",
    "ToolExecution",
    "ToolInvoked",
    "ToolTelemetry",
    "append",
    "execute_tool_call",
    "execute_tool_calls",
    "publish_tool_invoked",
    "refuse_tool_call",
    "replace_latest",
    "upsert_by",
]

publish("weakincentives.runtime", globals(), __all__)
