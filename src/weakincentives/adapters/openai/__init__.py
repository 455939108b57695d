"""The OpenAI Responses API adapter (extra: ``weakincentives[openai]``).

Importing this package does not need the SDK; creating an :class:`OpenAIAdapter` does.
"""

from __future__ import annotations

from weakincentives.adapters.openai._adapter import OpenAIAdapter, OpenAIResponsesProvider
from weakincentives.adapters.openai._codecs import (
    OpenAICodeInterpreterCodec,
    OpenAIWebSearchCodec,
    default_openai_codecs,
    openai_includes,
)
from weakincentives.adapters.openai._wire import build_request_body, function_tool

__all__ = [
    "OpenAIAdapter",
    "OpenAICodeInterpreterCodec",
    "OpenAIResponsesProvider",
    "OpenAIWebSearchCodec",
    "build_request_body",
    "default_openai_codecs",
    "function_tool",
    "openai_includes",
]
