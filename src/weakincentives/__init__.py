"""weakincentives: typed prompt trees, typed tools and predictable provider adapters."""

from __future__ import annotations

from weakincentives.errors import (
    PromptEvaluationError,
    PromptRenderError,
    PromptValidationError,
    ToolValidationError,
    WinkError,
)

__all__ = [
    "PromptEvaluationError",
    "PromptRenderError",
    "PromptValidationError",
    "ToolValidationError",
    "WinkError",
]
