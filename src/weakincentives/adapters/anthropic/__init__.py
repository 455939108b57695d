"""The Anthropic Messages API adapter (extra: ``weakincentives[anthropic]``).

Importing this package does not need the SDK; creating an :class:`AnthropicAdapter` does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.anthropic._adapter import AnthropicAdapter, AnthropicMessagesProvider
from weakincentives.adapters.anthropic._codec_code_execution import (
    AnthropicCodeExecutionCodec,
    CodeExecutionToolType,
)
from weakincentives.adapters.anthropic._codec_web_search import (
    AnthropicWebSearchCodec,
    WebSearchToolType,
)
from weakincentives.adapters.anthropic._codecs import default_anthropic_codecs
from weakincentives.adapters.anthropic._schema import anthropic_schema
from weakincentives.adapters.anthropic._wire import (
    DEFAULT_MAX_TOKENS,
    MessagesWireOptions,
    OutputFormatMode,
    build_messages_body,
    messages_tool,
    parse_messages_reply,
)

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "AnthropicAdapter",
    "AnthropicCodeExecutionCodec",
    "AnthropicMessagesProvider",
    "AnthropicWebSearchCodec",
    "CodeExecutionToolType",
    "MessagesWireOptions",
    "OutputFormatMode",
    "WebSearchToolType",
    "anthropic_schema",
    "build_messages_body",
    "default_anthropic_codecs",
    "messages_tool",
    "parse_messages_reply",
]

publish("weakincentives.adapters.anthropic", globals(), __all__)
