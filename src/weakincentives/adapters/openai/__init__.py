"""OpenAI providers (extra: ``weakincentives[openai]``): Responses API and Chat Completions.

``OpenAIResponses`` and ``ChatCompletions`` are the providers; ``OpenAIAdapter(...)`` and
``ChatCompletionsAdapter(...)`` build ``Adapter(OpenAIResponses(...))`` and
``Adapter(ChatCompletions(...))``. Importing this package does not need the SDK;
creating a provider does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.openai._chat import ChatCompletions, ChatCompletionsAdapter
from weakincentives.adapters.openai._codecs import default_openai_codecs
from weakincentives.adapters.openai._responses import OpenAIAdapter, OpenAIResponses
from weakincentives.adapters.openai._wire import function_tool as function_tool

__all__ = [
    "ChatCompletions",
    "ChatCompletionsAdapter",
    "OpenAIAdapter",
    "OpenAIResponses",
    "default_openai_codecs",
]

# Internal names (specs/PUBLIC_API.md): imported by other weakincentives packages,
# stored under this package's name, or raised from it. Not public, not in __all__.
_INTERNAL = ("function_tool",)

publish("weakincentives.adapters.openai", globals(), (*__all__, *_INTERNAL))
