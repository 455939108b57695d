"""Payload sizes: every value an evaluation hands Temporal is measured before it goes.

The Temporal server refuses a payload past its blob size limit (2 MiB by default) and
fails the workflow task or activity that sent it, far from the code that built it. So
the workflow input, each activity's input and result, and the workflow's result are
measured here first (as the bytes of their compact JSON text, which is what Temporal's
JSON converter writes), and a value over the limit is a :class:`PayloadTooLargeError`
naming it, raised where it was built.
"""

from __future__ import annotations

import json
from typing import Literal

from weakincentives.errors import ConfigValidationError, PayloadTooLargeError

__all__ = ["DEFAULT_PAYLOAD_LIMIT", "check_limit", "check_size", "json_size"]

DEFAULT_PAYLOAD_LIMIT = 2_000_000
"""Bytes of JSON per payload: under the server's 2 MiB default, leaving room for the
metadata Temporal adds around each payload."""


def check_limit(payload_limit: object) -> None:
    """Refuse a ``payload_limit`` that is not a positive int (a bool is not one)."""
    if isinstance(payload_limit, bool) or not isinstance(payload_limit, int) or payload_limit < 1:
        raise ConfigValidationError(
            f"payload_limit must be a positive number of bytes, got {payload_limit!r}",
            field_name="payload_limit",
            value=payload_limit,
        )


def json_size(value: object) -> int:
    """Bytes of ``value``'s compact JSON text (UTF-8)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8", "surrogatepass"))


def check_size(
    value: object,
    *,
    limit: int,
    prompt_name: str,
    payload: str,
    phase: Literal["request", "response"] = "request",
) -> None:
    """Raise :class:`PayloadTooLargeError` when ``value`` is over ``limit`` bytes of JSON."""
    size = json_size(value)
    if size > limit:
        raise PayloadTooLargeError(
            prompt_name=prompt_name, payload=payload, size=size, limit=limit, phase=phase
        )
