"""OpenAI adapters (extra: ``weakincentives[openai]``): Responses API and Chat Completions.

Importing this package does not need the SDK; creating an adapter does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.openai._adapter import OpenAIAdapter, OpenAIResponsesProvider
from weakincentives.adapters.openai._chat_adapter import (
    ChatCompletionsAdapter,
    ChatCompletionsProvider,
)
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
from weakincentives.adapters.openai._wire import build_request_body, function_tool

__all__ = [
    "ChatCompletionsAdapter",
    "ChatCompletionsProvider",
    "ChatWireOptions",
    "OpenAIAdapter",
    "OpenAICodeInterpreterCodec",
    "OpenAIResponsesProvider",
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
