"""What a tool handler returns, and how it reads to the model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from weakincentives.serde import dump

__all__ = ["ToolRenderableResult", "ToolResult"]

# One encoder for every render: json.dumps with options builds a new one per call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@runtime_checkable
class ToolRenderableResult(Protocol):
    """A result payload that chooses its own text for the model."""

    def render(self) -> str:
        """Return the provider-safe text the model reads for this payload."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult[PayloadT]:
    """The outcome of one tool call, for the model and for the orchestrator.

    Failures are values, not exceptions: ``success=False`` with ``value=None`` (or an
    explicit error payload) and a ``message`` telling the model what went wrong.
    """

    message: str
    """Short text forwarded to the model."""
    value: PayloadT | None = None
    """The typed payload; ``None`` for failures unless the tool reports a structured error."""
    success: bool = True
    """Whether the handler completed normally; reducers rely on this, not on ``value``."""
    exclude_value_from_context: bool = False
    """Keep ``value`` out of the provider-facing message while still returning it here."""

    def render(self) -> str:
        """Text of the payload: its own ``render()``, else compact JSON, ``""`` when absent."""
        value = self.value
        if value is None:
            return ""
        # Looking the method up on the type is much cheaper than a runtime protocol check.
        own_render = getattr(type(value), "render", None)
        if callable(own_render):
            text: object = own_render(value)
            if not isinstance(text, str):
                raise TypeError(
                    f"{type(value).__name__}.render() must return str, got {type(text).__name__}"
                )
            return text
        return _ENCODER.encode(dump(value, exclude_none=True))

    def model_content(self, rendered: str | None = None) -> str:
        """The tool message the model reads: ``message``, then the rendered payload if shared.

        Pass ``rendered`` when ``render()`` already ran, to avoid rendering twice.
        """
        if self.exclude_value_from_context:
            return self.message
        if rendered is None:
            rendered = self.render()
        if not rendered:
            return self.message
        if not self.message:
            return rendered
        return f"{self.message}\n\n{rendered}"
