"""The adapter (the shared tool-call loop) and the providers it runs over.

``adapter.evaluate(prompt, bus=bus, session=session)`` renders the prompt, runs the
tool loop to a final answer and returns a :class:`PromptResponse`;
``await adapter.evaluate_async(...)`` does the same on the running event loop. An
:class:`Adapter` runs over one provider value (``OfflineModel`` here,
``OpenAIResponses``/``ChatCompletions`` in ``adapters.openai``, ``AnthropicMessages`` in
``adapters.anthropic``); ``OfflineAdapter(...)`` and its siblings are shorthands for
``Adapter(OfflineModel(...))``. ``Recorded(provider, path, mode=...)`` wraps any provider
to record its exchanges to a cassette file and replay them offline.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters._adapter import Adapter, evaluate_with_disclosure
from weakincentives.adapters._answer import OutputInstructions, render_output_instructions
from weakincentives.adapters._disclosure import merge_overrides
from weakincentives.adapters._hosted import HostedOutputParseError, HostedToolCodec
from weakincentives.adapters._offline import (
    OfflineAdapter,
    OfflineModel,
    Responder,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.adapters._provider import Attempt, Provider, TextSink
from weakincentives.adapters._recorded import Recorded, RecordMode
from weakincentives.adapters._response import Halt, PromptResponse
from weakincentives.adapters._settings import (
    Disclosure,
    DisclosurePolicy,
    LoopSettings,
    RetryPolicy,
)
from weakincentives.adapters._stream import EvaluationStream, PartialOutput
from weakincentives.adapters._structured import OutputSchema
from weakincentives.adapters._transcript import Transcript
from weakincentives.adapters._transcript_sources import render_transcript
from weakincentives.adapters._turns import (
    AssistantMessage,
    ConversationItem,
    FeedbackMessage,
    ModelTurn,
    PromptMessage,
    ToolOutputMessage,
    TurnRequest,
)

__all__ = [
    "Adapter",
    "AssistantMessage",
    "Attempt",
    "ConversationItem",
    "Disclosure",
    "DisclosurePolicy",
    "EvaluationStream",
    "FeedbackMessage",
    "Halt",
    "HostedOutputParseError",
    "HostedToolCodec",
    "LoopSettings",
    "ModelTurn",
    "OfflineAdapter",
    "OfflineModel",
    "OutputInstructions",
    "OutputSchema",
    "PartialOutput",
    "PromptMessage",
    "PromptResponse",
    "Provider",
    "RecordMode",
    "Recorded",
    "Responder",
    "RetryPolicy",
    "ScriptedCall",
    "ScriptedTurn",
    "TextSink",
    "ToolOutputMessage",
    "Transcript",
    "TurnRequest",
    "evaluate_with_disclosure",
    "merge_overrides",
    "render_output_instructions",
    "render_transcript",
]

publish("weakincentives.adapters", globals(), __all__)
