"""Provider adapters and the shared tool-call loop.

``adapter.evaluate(prompt, bus=bus, session=session)`` renders the prompt, runs the
tool loop to a final answer (or a halt) and returns a :class:`PromptResponse`.
"""

from __future__ import annotations

from weakincentives.adapters._base import LoopAdapter
from weakincentives.adapters._disclosure import (
    DisclosurePolicy,
    evaluate_with_disclosure,
    merge_overrides,
)
from weakincentives.adapters._hosted import (
    HostedOutputParseError,
    HostedToolCodec,
    parse_hosted_outputs,
    serialize_hosted_tools,
)
from weakincentives.adapters._loop import LoopSettings, run_evaluation
from weakincentives.adapters._offline import OfflineAdapter, Responder, ScriptedCall, ScriptedTurn
from weakincentives.adapters._protocol import ProviderAdapter
from weakincentives.adapters._response import Halt, PromptResponse
from weakincentives.adapters._schema_values import sample_value
from weakincentives.adapters._structured import OutputSchema
from weakincentives.adapters._turns import (
    AssistantMessage,
    ConversationItem,
    ModelClient,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)

__all__ = [
    "AssistantMessage",
    "ConversationItem",
    "DisclosurePolicy",
    "Halt",
    "HostedOutputParseError",
    "HostedToolCodec",
    "LoopAdapter",
    "LoopSettings",
    "ModelClient",
    "ModelTurn",
    "OfflineAdapter",
    "OutputSchema",
    "PromptMessage",
    "PromptResponse",
    "ProviderAdapter",
    "Responder",
    "ScriptedCall",
    "ScriptedTurn",
    "ToolOutputMessage",
    "TurnRequest",
    "evaluate_with_disclosure",
    "merge_overrides",
    "parse_hosted_outputs",
    "run_evaluation",
    "sample_value",
    "serialize_hosted_tools",
]
