"""What every backend checks the same way: arguments, JSON documents, formats, times.

Each backend speaks its own SQL; these are the rules they share, so that SQLite and
PostgreSQL accept, refuse and report exactly the same things.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NoReturn, TypeGuard

from weakincentives.errors import (
    DocumentError,
    FormatVersionError,
    StoredRowError,
    StoreUsageError,
)
from weakincentives.serde import JSONValue
from weakincentives.store._records import (
    APPROVAL_DECISIONS,
    EVALUATION_STATUSES,
    ApprovalDecision,
    EvaluationStatus,
    NewEvent,
)

__all__ = [
    "check_decision",
    "check_format",
    "check_id",
    "check_round",
    "check_status",
    "check_text",
    "decode",
    "encode",
    "encode_events",
    "from_text",
    "page",
    "to_text",
    "utc",
    "writer_format",
]


def check_id(kind: str, value: object) -> str:
    """``value`` as an identifier: a non-empty str that both databases can keep as text."""
    if not isinstance(value, str) or not value:
        raise StoreUsageError(f"{kind} must be a non-empty str, got {value!r}")
    return check_text(kind, value)


def check_text(kind: str, value: object) -> str:
    """``value`` as a str that both databases can keep as text.

    NUL characters and lone surrogates are refused everywhere because PostgreSQL text
    cannot hold the one and UTF-8 cannot encode the other; SQLite accepts the same text.
    """
    if not isinstance(value, str):
        raise StoreUsageError(f"{kind} must be a str, got {value!r}")
    if "\x00" in value or not _encodable(value):
        raise StoreUsageError(f"{kind} {value!r} holds a NUL or a lone surrogate")
    return value


def check_round(value: object) -> int:
    """A checkpoint round: an int from 0 to 2**63 - 1 (a bool is refused: an int by accident)."""
    if not _count(value):
        raise StoreUsageError(f"round must be an int from 0 to 2**63 - 1, got {value!r}")
    return value


def check_status(value: object) -> EvaluationStatus:
    """An evaluation status, one of :data:`EVALUATION_STATUSES`."""
    for status in EVALUATION_STATUSES:
        if value == status:
            return status
    raise StoreUsageError(f"status must be one of {', '.join(EVALUATION_STATUSES)}, got {value!r}")


def check_decision(value: object) -> ApprovalDecision:
    """An approval decision: approved or denied."""
    for decision in APPROVAL_DECISIONS:
        if value == decision:
            return decision
    raise StoreUsageError(f"decision must be approved or denied, got {value!r}")


def page(after: object, limit: object) -> tuple[int, int | None]:
    """Validated ``after`` (a seq >= 0) and ``limit`` (None, or an int >= 0) of a read."""
    if not _count(after):
        raise StoreUsageError(f"after must be an int from 0 to 2**63 - 1, got {after!r}")
    if limit is not None and not _count(limit):
        raise StoreUsageError(f"limit must be None or an int from 0 to 2**63 - 1, got {limit!r}")
    return after, limit


def writer_format(value: object) -> int:
    """The format a store writes and reads up to: an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise StoreUsageError(f"format_version must be an int >= 1, got {value!r}")
    return value


def encode(document: JSONValue, *, record: str) -> str:
    """``document`` as compact JSON text, or :class:`DocumentError` naming ``record``.

    Refused: values JSON has no word for (NaN, infinities, sets, objects), keys that are
    not str, integers longer than Python prints, nesting deeper than Python recurses,
    and text UTF-8 cannot encode (lone surrogates).
    """
    try:
        text = json.dumps(
            document,
            ensure_ascii=False,
            allow_nan=False,
            check_circular=False,
            separators=(",", ":"),
        )
    except (TypeError, ValueError, RecursionError) as exc:
        raise DocumentError(record=record, reason=_reason(exc)) from exc
    if not _encodable(text):
        raise DocumentError(
            record=record, reason="it holds a lone surrogate (not encodable as UTF-8)"
        )
    return text


def encode_events(session_id: str, events: object) -> list[tuple[str, str]]:
    """The (type name, JSON text) of each event of a batch, checked before any write."""
    if isinstance(events, (str, bytes)) or not isinstance(events, Sequence):
        raise StoreUsageError(f"events must be a sequence of NewEvent, got {type(events).__name__}")
    if not events:
        raise StoreUsageError(f"append to session {session_id!r} needs at least one event")
    rows: list[tuple[str, str]] = []
    for index, event in enumerate(events):
        if not isinstance(event, NewEvent):
            raise StoreUsageError(
                f"event {index} of the batch for session {session_id!r} is a "
                f"{type(event).__name__}, not a NewEvent"
            )
        type_name = check_id(f"type_name of event {index}", event.type_name)
        where = f"event {index} of the batch for session {session_id!r}"
        rows.append((type_name, encode(event.document, record=where)))
    return rows


def decode(text: object, *, record: str) -> JSONValue:
    """A stored document back from its JSON text, or :class:`StoredRowError` naming ``record``.

    The row may have been changed outside the store: text that is not JSON, or JSON that
    :func:`encode` never writes (NaN, infinities, integers longer than Python reads,
    nesting deeper than Python recurses), is refused rather than misread.
    """
    if not isinstance(text, str):
        raise StoredRowError(
            record=record,
            reason=f"its document is stored as {type(text).__name__}, not as JSON text",
        )
    try:
        value: JSONValue = _DECODER.decode(text)
    except (ValueError, RecursionError) as exc:
        raise StoredRowError(
            record=record, reason=f"its document does not decode: {_reason(exc)}"
        ) from exc
    return value


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
"""Made once: ``json.loads`` with any option builds a new decoder on every call."""


def check_format(found: int, supported: int, *, record: str) -> None:
    """Refuse a row written in a newer document format than ``supported``."""
    if found > supported:
        raise FormatVersionError(record=record, found=found, supported=supported)


def utc(moment: datetime) -> datetime:
    """A clock reading as an aware UTC datetime (a naive one is refused, not guessed)."""
    if not isinstance(moment, datetime) or moment.tzinfo is None:
        raise StoreUsageError(f"the store's clock must return aware datetimes, got {moment!r}")
    return moment.astimezone(UTC)


def to_text(moment: datetime) -> str:
    """A UTC datetime as the ISO text SQLite keeps (fixed width, so it sorts in time order)."""
    return moment.isoformat(timespec="microseconds")


def from_text(text: str) -> datetime:
    """The datetime :func:`to_text` wrote."""
    return datetime.fromisoformat(text)


_LARGEST = 2**63 - 1  # both databases keep 64-bit signed integers


def _count(value: object) -> TypeGuard[int]:
    return not isinstance(value, bool) and isinstance(value, int) and 0 <= value <= _LARGEST


def _encodable(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc)
