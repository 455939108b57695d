"""The Anthropic adapter's hosted tool codecs.

``default_anthropic_codecs()`` returns a fresh registry each call, so a caller can add
or replace a codec (for example another tool version) without affecting anyone else.
"""

from __future__ import annotations

from typing import Any

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters.anthropic._codec_code_execution import AnthropicCodeExecutionCodec
from weakincentives.adapters.anthropic._codec_web_search import AnthropicWebSearchCodec

__all__ = ["default_anthropic_codecs"]


def default_anthropic_codecs() -> dict[str, HostedToolCodec[Any, Any]]:
    """A new registry with the built-in codecs: ``web_search`` and ``code_interpreter``."""
    codecs: list[HostedToolCodec[Any, Any]] = [
        AnthropicWebSearchCodec(),
        AnthropicCodeExecutionCodec(),
    ]
    return {codec.kind: codec for codec in codecs}
