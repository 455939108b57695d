"""Requests shaped wrongly by a model or a Python caller end as discovery errors, never crashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable

import pytest

from weakincentives.discovery import DiscoveryError, ToolDiscovery

from .conftest import SECRET

type Operation = Callable[[ToolDiscovery], object]


@pytest.mark.parametrize(
    ("operation", "field"),
    [
        (lambda s: s.list(cursor=12345), "cursor"),
        (lambda s: s.list(query=5), "query"),
        (lambda s: s.list(tags=None), "tags"),
        (lambda s: s.list(path=None), "path"),
        (lambda s: s.list(path={"Coding": 1}), "path"),
        (lambda s: s.list(tags=[1, 2]), "tags"),
        (lambda s: s.search_tool_by_category("rename", category_path=None), "path"),
        (lambda s: s.search_tool_by_category("rename", cursor=b"abc"), "cursor"),
        (lambda s: s.search_tool_by_category(None), "query"),
        (lambda s: s.search_nodes(["refactor"]), "query"),
    ],
)
def test_a_wrongly_typed_argument_is_an_invalid_request(
    service: ToolDiscovery, operation: Operation, field: str
) -> None:
    """Each wrong shape names the field in an INVALID_REQUEST instead of raising TypeError."""
    with pytest.raises(DiscoveryError) as info:
        operation(service)
    assert info.value.code == "INVALID_REQUEST"
    assert field in info.value.message


def _signed(payload: bytes, secret: bytes = SECRET) -> str:
    body = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    tag = hmac.new(secret, body.encode(), hashlib.sha256).digest()[:16]
    return f"{body}.{base64.urlsafe_b64encode(tag).rstrip(b'=').decode()}"


@pytest.mark.parametrize(
    "payload",
    [
        b"not json at all",
        b"\xff\xfe\xfd",
        b"[" * 100_000 + b"]" * 100_000,
        b'{"v": 1, "o": ' + b"7" * 5000 + b', "f": "x"}',
        b'{"v": 1, "o": NaN, "f": "x"}',
        b"[1, 2, 3]",
        b'{"v": 1, "o": 1.5, "f": "x"}',
    ],
)
def test_a_signed_cursor_with_a_foreign_payload_is_an_invalid_cursor(
    service: ToolDiscovery, payload: bytes
) -> None:
    """A correctly signed cursor whose body is not ours is INVALID_CURSOR, not a decode error."""
    with pytest.raises(DiscoveryError) as info:
        service.search_tool_by_category("storage bucket", limit=1, cursor=_signed(payload))
    assert info.value.code == "INVALID_CURSOR"


def test_a_signed_cursor_for_another_request_is_still_refused(service: ToolDiscovery) -> None:
    """A well-formed payload with a foreign fingerprint names the mismatch."""
    cursor = _signed(json.dumps({"v": 1, "o": 1, "f": "elsewhere"}).encode())
    with pytest.raises(DiscoveryError, match="different request") as info:
        service.list(cursor=cursor)
    assert info.value.code == "INVALID_CURSOR"
