"""The OpenAI adapter's hosted tool codecs and the request ``include`` entries they need.

``default_openai_codecs()`` returns a fresh registry each call, so a caller can
add or replace a codec for its own adapter without affecting anyone else's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters.openai._codec_code_interpreter import (
    CODE_INTERPRETER_OUTPUTS_INCLUDE,
    OpenAICodeInterpreterCodec,
)
from weakincentives.adapters.openai._codec_web_search import (
    WEB_SEARCH_SOURCES_INCLUDE,
    OpenAIWebSearchCodec,
)
from weakincentives.prompt import HostedTool, HostedToolConfig
from weakincentives.tools import CODE_INTERPRETER_KIND, WEB_SEARCH_KIND

__all__ = [
    "OpenAICodeInterpreterCodec",
    "OpenAIWebSearchCodec",
    "default_openai_codecs",
    "openai_includes",
]

_INCLUDES: dict[str, str] = {
    WEB_SEARCH_KIND: WEB_SEARCH_SOURCES_INCLUDE,
    CODE_INTERPRETER_KIND: CODE_INTERPRETER_OUTPUTS_INCLUDE,
}


def default_openai_codecs() -> dict[str, HostedToolCodec[Any, Any]]:
    """A new registry with the built-in codecs: ``web_search`` and ``code_interpreter``."""
    codecs: list[HostedToolCodec[Any, Any]] = [
        OpenAIWebSearchCodec(),
        OpenAICodeInterpreterCodec(),
    ]
    return {codec.kind: codec for codec in codecs}


def openai_includes(tools: Sequence[HostedTool[HostedToolConfig]]) -> tuple[str, ...]:
    """The ``include`` entries a request needs so the reply carries what the codecs read.

    Web search needs ``web_search_call.action.sources`` (otherwise consulted
    URLs are omitted) and the code interpreter ``code_interpreter_call.outputs``
    (otherwise logs and images are omitted). Order follows the tools; no repeats.
    """
    includes: dict[str, None] = {}
    for tool in tools:
        include = _INCLUDES.get(tool.kind)
        if include is not None:
            includes.setdefault(include)
    return tuple(includes)
