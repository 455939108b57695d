"""The seam a provider implements: build a request, send it, read the turn.

A provider is a value describing one model service (``OpenAIResponses``,
``ChatCompletions``, ``AnthropicMessages``, ``OfflineModel``); :class:`Adapter` runs the
one loop over it. ``build_request`` and ``read_turn`` are pure functions over plain data
(wire-shape tests need no server); only ``send`` does I/O. ``send`` is a coroutine: a
provider on a sync SDK client runs the call on a worker thread, one on an async client
awaits it, so the same provider serves ``evaluate`` and ``evaluate_async`` with either
client. Retries, deadlines, streaming deltas, tool calls and output parsing are the
loop's business.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from weakincentives.adapters._hosted import HostedToolCodec
from weakincentives.adapters._turns import ModelTurn, TurnRequest

__all__ = ["Attempt", "Provider", "TextSink"]

type TextSink = Callable[[str], None]
"""Called with each piece of text as it streams in, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """How one send of a request may go."""

    number: int
    """1 for the first send of a request, 2 for its first retry, and so on."""
    timeout: float | None
    """Seconds this attempt may take (the time left before the deadline); None: no bound."""
    prompt_name: str
    """The prompt being evaluated, for the errors the attempt may raise."""
    round: int
    """The evaluation's round the request belongs to (1 for its first request)."""


class Provider[RequestT, ReplyT](Protocol):
    """A model provider as the shared loop drives it."""

    @property
    def name(self) -> str:
        """The adapter name in events and errors, e.g. ``openai`` or ``openai-chat``."""
        ...

    @property
    def model(self) -> str | None:
        """The model requests ask for, when the provider names one."""
        ...

    @property
    def retry_limit(self) -> int:
        """How often the loop may resend a request that failed with a retryable error."""
        ...

    @property
    def hosted_tool_codecs(self) -> Mapping[str, HostedToolCodec[Any, Any]]:
        """Codecs by hosted-tool kind; a kind missing here fails before any request."""
        ...

    def build_request(self, turn: TurnRequest) -> RequestT:
        """The provider's request for ``turn``; pure."""
        ...

    async def send(self, request: RequestT, attempt: Attempt, on_text: TextSink) -> ReplyT:
        """Send ``request`` once and return the reply, passing streamed text to ``on_text``.

        Raises ``ProviderError`` (phase ``request``, with ``retryable``) when the provider
        cannot be reached or answers with an error, and ``PromptEvaluationError`` with
        phase ``response`` when the reply (or a stream) breaks.
        """
        ...

    def read_turn(self, reply: ReplyT, request: RequestT, turn: TurnRequest) -> ModelTurn:
        """The model's turn in ``reply``; pure. Raises phase ``response`` for a bad reply."""
        ...

    def close(self) -> None:
        """Release what the provider created (a client it built), never what it was given."""
        ...
