"""Anthropic's Messages API as a provider (extra: ``weakincentives[anthropic]``).

``AnthropicAdapter(...)`` builds ``Adapter(AnthropicMessages(...))``. Importing this
package does not need the SDK; creating a provider does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.anthropic._codec_code_execution import (
    AnthropicCodeExecutionCodec,
    CodeExecutionToolType,
)
from weakincentives.adapters.anthropic._codec_web_search import (
    AnthropicWebSearchCodec,
    WebSearchToolType,
)
from weakincentives.adapters.anthropic._codecs import default_anthropic_codecs
from weakincentives.adapters.anthropic._messages import AnthropicAdapter, AnthropicMessages
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
    "AnthropicMessages",
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
