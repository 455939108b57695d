"""Anthropic's Messages API as a provider (extra: ``weakincentives[anthropic]``).

``AnthropicAdapter(...)`` builds ``Adapter(AnthropicMessages(...))``. Importing this
package does not need the SDK; creating a provider does.
"""

from __future__ import annotations

from weakincentives._exports import publish
from weakincentives.adapters.anthropic._codecs import default_anthropic_codecs
from weakincentives.adapters.anthropic._messages import AnthropicAdapter, AnthropicMessages

__all__ = [
    "AnthropicAdapter",
    "AnthropicMessages",
    "default_anthropic_codecs",
]

publish("weakincentives.adapters.anthropic", globals(), __all__)
