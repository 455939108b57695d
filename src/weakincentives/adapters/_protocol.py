"""The adapter seam users call: ``evaluate`` for scripts, ``evaluate_async`` for services."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol

from weakincentives.adapters._response import PromptResponse
from weakincentives.adapters._settings import Disclosure
from weakincentives.prompt import (
    EventPublisher,
    Prompt,
    PromptTemplate,
    SessionProtocol,
    VisibilityOverrides,
)

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
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
        disclosure: Disclosure | None = None,
    ) -> PromptResponse[OutputT]:
        """Render, run the tool loop to a final answer, and parse the output (blocking).

        ``continue_from`` carries an earlier evaluation's exchange on after the new
        render; ``disclosure`` overrides the adapter's ``LoopSettings.disclosure``.
        """
        ...

    async def evaluate_async[OutputT](
        self,
        prompt: Prompt[OutputT] | PromptTemplate[OutputT],
        *params: object,
        bus: EventPublisher | None = None,
        session: SessionProtocol | None = None,
        visibility_overrides: VisibilityOverrides | None = None,
        deadline: datetime | None = None,
        continue_from: PromptResponse[Any] | None = None,
        disclosure: Disclosure | None = None,
    ) -> PromptResponse[OutputT]:
        """``evaluate`` on the running event loop; async handlers run on that loop."""
        ...
