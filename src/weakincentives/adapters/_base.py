"""The base adapters share: ``evaluate`` written once, on top of the shared loop.

A concrete adapter supplies the turn protocol (``name``, ``hosted_tool_codecs``,
``send``); everything ``evaluate`` does beyond one request lives in ``_loop``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._loop import LoopSettings, run_evaluation
from weakincentives.adapters._response import PromptResponse
from weakincentives.adapters._turns import ModelTurn, TurnRequest
from weakincentives.prompt import Prompt, PromptTemplate, VisibilityOverrides
from weakincentives.runtime import EventBus, SessionProtocol

__all__ = ["LoopAdapter"]


class LoopAdapter(ABC):
    """An adapter whose ``evaluate`` runs the shared tool loop over its own ``send``."""

    def __init__(
        self,
        *,
        max_rounds: int,
        clock: Callable[[], datetime] | None,
        id_factory: Callable[[], str] | None,
    ) -> None:
        defaults = LoopSettings()
        self._settings = LoopSettings(
            max_rounds=max_rounds,
            clock=clock or defaults.clock,
            new_id=id_factory or defaults.new_id,
        )

    @property
    @abstractmethod
    def name(self) -> str:
        """Adapter name used in events and errors."""

    @property
    @abstractmethod
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs by hosted-tool kind; a kind missing here fails before any request."""

    @abstractmethod
    def send(self, request: TurnRequest) -> ModelTurn:
        """Send one request; raise ``PromptEvaluationError`` (request/response) on failure."""

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
        """Render, run the shared tool loop to an answer (or a halt), parse the output."""
        return run_evaluation(
            self,
            prompt,
            params,
            adapter=self,
            bus=bus,
            session=session,
            visibility_overrides=visibility_overrides,
            deadline=deadline,
            settings=self._settings,
            continue_from=continue_from,
        )
