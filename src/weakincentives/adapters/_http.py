"""HTTP facts every provider SDK shares: which failures are worth retrying, and when.

Both official SDKs (``openai``, ``anthropic``) retry timeouts, connection failures and
the statuses below, obey the non-standard ``x-should-retry`` header and honour
``Retry-After`` (seconds or an HTTP date) and ``retry-after-ms``. The loop owns retries
(so a deadline can bound them), and uses these rules to make the same decisions.
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Callable, Mapping

__all__ = ["is_retryable_status", "retry_after_seconds"]

_RETRYABLE_STATUSES = frozenset({408, 409, 429})


def is_retryable_status(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a reply with ``status`` may succeed if the request is sent again."""
    hint = headers.get("x-should-retry")
    if hint == "true":
        return True
    if hint == "false":
        return False
    return status in _RETRYABLE_STATUSES or status >= 500


def retry_after_seconds(
    headers: Mapping[str, str], *, now: Callable[[], float] = time.time
) -> float | None:
    """The delay the server asked for, in seconds, or None when it named none (or nonsense)."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        if math.isfinite(value) and value >= 0:
            return value / divisor
    raw_date = headers.get("retry-after")
    if raw_date is None:
        return None
    try:
        parsed = email.utils.parsedate_tz(raw_date)
        if parsed is None:
            return None
        return max(float(email.utils.mktime_tz(parsed)) - now(), 0.0)
    except (TypeError, ValueError, OverflowError):
        return None
