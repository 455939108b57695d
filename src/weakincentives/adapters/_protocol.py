"""The adapter seam users call."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from weakincentives.adapters._response import PromptResponse
from weakincentives.prompt import Prompt, PromptTemplate, VisibilityOverrides
from weakincentives.runtime import EventBus, SessionProtocol

__all__ = ["ProviderAdapter"]


class ProviderAdapter(Protocol):
    """Evaluates prompts against a model: ``adapter.evaluate(prompt, bus=..., session=...)``."""

    @property
    def name(self) -> str:
        """Short adapter name used in events and errors."""
        ...

    def evaluate[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventBus | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
    ) -> PromptResponse[OutputT]:
        """Render, run the tool loop to a final answer (or a halt), and parse the output.

        ``continue_from`` carries an earlier evaluation's exchange on after the new
        render (how a retry after ``open_sections`` keeps the work already done).
        """
        ...
