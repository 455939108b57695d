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
from weakincentives.adapters._adapter import Adapter
from weakincentives.adapters._adapter import (
    evaluate_with_disclosure as evaluate_with_disclosure,
)
from weakincentives.adapters._answer import (
    render_output_instructions as render_output_instructions,
)
from weakincentives.adapters._hosted import HostedOutputParseError as HostedOutputParseError
from weakincentives.adapters._offline import (
    OfflineAdapter,
    OfflineModel,
    ScriptedCall,
    ScriptedTurn,
)
from weakincentives.adapters._provider import Attempt as Attempt
from weakincentives.adapters._provider import Provider
from weakincentives.adapters._recorded import Recorded, RecordMode
from weakincentives.adapters._response import Halt, PromptResponse
from weakincentives.adapters._settings import AnswerSchemaMode as AnswerSchemaMode
from weakincentives.adapters._settings import Disclosure, LoopSettings, RetryPolicy
from weakincentives.adapters._step_runner import Decision as Decision
from weakincentives.adapters._step_runner import Progress as Progress
from weakincentives.adapters._step_runner import Sent as Sent
from weakincentives.adapters._step_runner import StepRunner as StepRunner
from weakincentives.adapters._stream import EvaluationStream as EvaluationStream
from weakincentives.adapters._stream import PartialOutput
from weakincentives.adapters._structured import OutputSchema as OutputSchema
from weakincentives.adapters._transcript import Transcript
from weakincentives.adapters._transcript_sources import render_transcript
from weakincentives.adapters._turns import AssistantMessage as AssistantMessage
from weakincentives.adapters._turns import ConversationItem as ConversationItem
from weakincentives.adapters._turns import FeedbackMessage as FeedbackMessage
from weakincentives.adapters._turns import ModelTurn as ModelTurn
from weakincentives.adapters._turns import PromptMessage as PromptMessage
from weakincentives.adapters._turns import ToolOutputMessage as ToolOutputMessage
from weakincentives.adapters._turns import TurnRequest

__all__ = [
    "Adapter",
    "Disclosure",
    "Halt",
    "LoopSettings",
    "OfflineAdapter",
    "OfflineModel",
    "PartialOutput",
    "PromptResponse",
    "Provider",
    "RecordMode",
    "Recorded",
    "RetryPolicy",
    "ScriptedCall",
    "ScriptedTurn",
    "Transcript",
    "TurnRequest",
    "render_transcript",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
# The step seam (StepRunner and its values) is what weakincentives.temporal implements.
_INTERNAL = (
    "AnswerSchemaMode",
    "AssistantMessage",
    "Attempt",
    "ConversationItem",
    "Decision",
    "EvaluationStream",
    "FeedbackMessage",
    "HostedOutputParseError",
    "ModelTurn",
    "OutputSchema",
    "Progress",
    "PromptMessage",
    "Sent",
    "StepRunner",
    "ToolOutputMessage",
    "evaluate_with_disclosure",
    "render_output_instructions",
)

publish("weakincentives.adapters", globals(), (*__all__, *_INTERNAL))
