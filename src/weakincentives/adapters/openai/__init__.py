"""OpenAI providers (extra: ``weakincentives[openai]``): Responses API and Chat Completions.

``OpenAIResponses`` and ``ChatCompletions`` are the providers; ``OpenAIAdapter(...)`` and
``ChatCompletionsAdapter(...)`` build ``Adapter(OpenAIResponses(...))`` and
``Adapter(ChatCompletions(...))``. Importing this package does not need the SDK;
creating a provider does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.openai._chat import ChatCompletions, ChatCompletionsAdapter
from weakincentives.adapters.openai._chat_wire import (
    ChatWireOptions,
    ResponseFormatMode,
    TokenCapField,
    build_chat_body,
    chat_function_tool,
    parse_chat_body,
)
from weakincentives.adapters.openai._codecs import (
    OpenAICodeInterpreterCodec,
    OpenAIWebSearchCodec,
    default_openai_codecs,
    openai_includes,
)
from weakincentives.adapters.openai._responses import OpenAIAdapter, OpenAIResponses
from weakincentives.adapters.openai._wire import build_request_body, function_tool

__all__ = [
    "ChatCompletions",
    "ChatCompletionsAdapter",
    "ChatWireOptions",
    "OpenAIAdapter",
    "OpenAICodeInterpreterCodec",
    "OpenAIResponses",
    "OpenAIWebSearchCodec",
    "ResponseFormatMode",
    "TokenCapField",
    "build_chat_body",
    "build_request_body",
    "chat_function_tool",
    "default_openai_codecs",
    "function_tool",
    "openai_includes",
    "parse_chat_body",
]

publish("weakincentives.adapters.openai", globals(), __all__)
