"""Sending one request: retries with back-off, all inside the evaluation's deadline.

The SDK clients are called with their own retries switched off, so that the loop
decides, before every attempt, how much time is left and hands exactly that to the
attempt. A deadline therefore bounds the whole exchange, back-offs included.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from datetime import datetime

from weakincentives.adapters._provider import Attempt, Provider, TextSink
from weakincentives.adapters._settings import LoopSettings
from weakincentives.errors import PromptEvaluationError, ProviderError

__all__ = ["RetrySink", "exchange", "time_left"]

logger = logging.getLogger("weakincentives.adapters")


def time_left(deadline: datetime | None, clock: Callable[[], datetime]) -> float | None:
    """Seconds until ``deadline`` by ``clock`` (None without a deadline)."""
    if deadline is None:
        return None
    return (deadline - clock()).total_seconds()


type RetrySink = Callable[[int, float, ProviderError], None]
"""Told of each retry: the attempt that failed (1 for the first), the delay before the
next one in seconds, and the failure."""


async def exchange[RequestT, ReplyT](
    provider: Provider[RequestT, ReplyT],
    request: RequestT,
    *,
    prompt_name: str,
    round_number: int,
    deadline: datetime | None,
    settings: LoopSettings,
    on_text: TextSink,
    on_retry: RetrySink | None = None,
) -> ReplyT:
    """Send ``request`` until it succeeds, fails for good, or the deadline leaves no time.

    A retryable ``ProviderError`` is retried up to ``provider.retry_limit`` times, unless
    text already streamed from the failed attempt (that would show the model's words
    twice) or the back-off would pass the deadline. ``on_retry`` hears of every retry
    before its back-off starts. The error that ends the exchange says how many attempts
    were made; a deadline error carries the last failure in its message.
    """
    retry = 0
    last: ProviderError | None = None
    while True:
        left = time_left(deadline, settings.clock)
        if left is not None and left <= 0:
            raise _deadline_passed(prompt_name, deadline, round_number, retry, last) from last
        streamed = False

        def sink(text: str) -> None:
            nonlocal streamed
            streamed = True
            on_text(text)

        try:
            attempt = Attempt(
                number=retry + 1, timeout=left, prompt_name=prompt_name, round=round_number
            )
            return await provider.send(request, attempt, sink)
        except ProviderError as exc:
            last = exc
            if not exc.retryable or streamed or retry >= provider.retry_limit:
                if left is not None and exc.retryable and _expired(deadline, settings):
                    raise _deadline_passed(prompt_name, deadline, round_number, retry, exc) from exc
                if exc.attempts == retry + 1:
                    raise
                raise exc.after_attempts(retry + 1) from exc.__cause__
            delay = settings.retry.delay(retry + 1, exc.retry_after, random.random())
            remaining = time_left(deadline, settings.clock)
            if remaining is not None and delay >= remaining:
                raise _deadline_passed(prompt_name, deadline, round_number, retry, exc) from exc
            retry += 1
            _log_retry(prompt_name, round_number, retry, delay, exc)
            if on_retry is not None:
                on_retry(retry, delay, exc)
            await settings.sleep(delay)


def _expired(deadline: datetime | None, settings: LoopSettings) -> bool:
    left = time_left(deadline, settings.clock)
    return left is not None and left <= 0


def _deadline_passed(
    prompt_name: str,
    deadline: datetime | None,
    round_number: int,
    retries: int,
    last: ProviderError | None,
) -> PromptEvaluationError:
    assert deadline is not None
    after = "" if retries == 0 else f" after {retries} retr{'y' if retries == 1 else 'ies'}"
    cause = "" if last is None else f"; the last attempt failed: {last.reason}"
    return PromptEvaluationError(
        f"deadline {deadline.isoformat()} passed during round {round_number}{after}{cause}",
        prompt_name=prompt_name,
        phase="request",
    )


def _log_retry(
    prompt_name: str, round_number: int, failed: int, delay: float, exc: ProviderError
) -> None:
    """The documented INFO line for a retry (docs/logging.md)."""
    logger.info(
        "retrying round %d of prompt %r (attempt %d failed) in %.2fs: %s",
        round_number,
        prompt_name,
        failed,
        delay,
        exc.reason,
    )
