"""Opaque, authenticated pagination cursors.

A cursor is ``<payload>.<tag>``: the payload (base64url JSON) holds the offset
of the next item and a fingerprint of the request that produced it; the tag
is an HMAC-SHA256 of the payload under a per-service secret. A cursor
therefore cannot be forged or edited, and it is only accepted for the exact
request (operation, path, query, tags, limit, catalogue) it was issued for.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

from weakincentives.discovery._limits import MAX_CURSOR_CHARS
from weakincentives.errors import ConfigValidationError, CursorError

__all__ = ["CursorCodec", "request_fingerprint"]

_TAG_BYTES = 16
_VERSION = 1


def request_fingerprint(*parts: object) -> str:
    """Digest the parts of a request (JSON-serialisable values) into a short key.

    The JSON is written in ASCII (non-ASCII characters escaped), so any text digests,
    lone surrogates included.
    """
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("ascii")).hexdigest()[:24]


class CursorCodec:
    """Issues and checks cursors with one secret; one codec per discovery service."""

    __slots__ = ("_secret",)

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ConfigValidationError(
                f"cursor secret must be at least 16 bytes, got {len(secret)}",
                field_name="cursor_secret",
            )
        self._secret = secret

    def encode(self, *, offset: int, fingerprint: str) -> str:
        """Return a cursor resuming ``fingerprint``'s results at ``offset``."""
        body = json.dumps({"v": _VERSION, "o": offset, "f": fingerprint}, separators=(",", ":"))
        payload = _b64(body.encode())
        return f"{payload}.{_b64(self._tag(payload))}"

    def decode(self, cursor: str, *, fingerprint: str) -> int:
        """Return the offset stored in ``cursor``; raise ``CursorError`` if it is not valid here."""
        payload, dot, tag = cursor.partition(".")
        # A service issues short base64url cursors: anything long or not ASCII is not one
        # of them, and is refused before it is hashed.
        plausible = dot and payload and len(cursor) <= MAX_CURSOR_CHARS and cursor.isascii()
        raw_tag = _unb64(tag) if plausible else None
        if raw_tag is None:
            raise CursorError(
                "cursor is malformed: pass back next_cursor exactly as it was returned",
                cursor=cursor,
            )
        if not hmac.compare_digest(raw_tag, self._tag(payload)):
            raise CursorError(
                "cursor was not issued by this service or has been altered; "
                "repeat the request without a cursor",
                cursor=cursor,
            )
        try:
            body = json.loads(_unb64(payload) or b"null")
        except (ValueError, RecursionError):
            # Signed but not our JSON (a leaked secret, or a bug in another version): the
            # decoder's UnicodeDecodeError, JSONDecodeError or RecursionError is ours to report.
            body = None
        offset = body.get("o") if isinstance(body, dict) else None
        if not isinstance(offset, int) or offset < 0 or body.get("v") != _VERSION:
            raise CursorError("cursor payload is unreadable", cursor=cursor)
        if body.get("f") != fingerprint:
            raise CursorError(
                "cursor belongs to a different request: keep the same path, query, tags and "
                "limit while paging, or repeat the request without a cursor",
                cursor=cursor,
            )
        return offset

    def _tag(self, payload: str) -> bytes:
        return hmac.new(self._secret, payload.encode(), hashlib.sha256).digest()[:_TAG_BYTES]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
