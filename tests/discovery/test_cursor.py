"""The cursor codec on its own."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from weakincentives.discovery._cursor import CursorCodec, request_fingerprint
from weakincentives.errors import ConfigValidationError, CursorError

SECRET = b"0123456789abcdef0123456789abcdef"


def test_a_cursor_round_trips_for_its_request() -> None:
    """decode returns the encoded offset when the fingerprint matches."""
    codec = CursorCodec(SECRET)
    cursor = codec.encode(offset=40, fingerprint="abc")
    assert codec.decode(cursor, fingerprint="abc") == 40


def test_a_short_secret_is_refused() -> None:
    """Secrets under 16 bytes are too weak to authenticate cursors."""
    with pytest.raises(ConfigValidationError, match="at least 16 bytes"):
        CursorCodec(b"short")


def test_an_authentic_but_unreadable_payload_is_rejected() -> None:
    """A correctly signed payload with a bad body is still refused, keeping the cursor."""
    payload = base64.urlsafe_b64encode(b'{"v": 1, "o": -3, "f": "abc"}').rstrip(b"=").decode()
    tag = hmac.new(SECRET, payload.encode(), hashlib.sha256).digest()[:16]
    cursor = f"{payload}.{base64.urlsafe_b64encode(tag).rstrip(b'=').decode()}"
    with pytest.raises(CursorError, match="unreadable") as info:
        CursorCodec(SECRET).decode(cursor, fingerprint="abc")
    assert info.value.cursor == cursor


def test_fingerprints_depend_on_every_part() -> None:
    """Equal parts give equal fingerprints; any change gives another."""
    assert request_fingerprint("list", ("A",), 5) == request_fingerprint("list", ("A",), 5)
    assert request_fingerprint("list", ("A",), 5) != request_fingerprint("list", ("A",), 6)
