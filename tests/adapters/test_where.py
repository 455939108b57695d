"""The pure parts of "errors that say where": endpoints, connection causes and status hints."""

from __future__ import annotations

import errno
import itertools
import socket

import pytest

from weakincentives.adapters._sdk_errors import mapped_errors
from weakincentives.adapters._where import connection_failure, describe_endpoint, status_hint
from weakincentives.errors import ProviderError

httpx2 = pytest.importorskip("httpx2")


def _chained(*errors: BaseException) -> BaseException:
    """``errors[0]`` raised from ``errors[1]`` raised from ... (outermost first)."""
    for outer, inner in itertools.pairwise(errors):
        outer.__cause__ = inner
    return errors[0]


class TestDescribeEndpoint:
    def test_query_and_credentials_never_appear(self) -> None:
        """A key in the query string or the user info of the URL is left out."""
        request = httpx2.Request(
            "POST", "https://user:sk-secret@api.example.com:8443/v1/x?key=sk-q"
        )
        assert describe_endpoint(request) == "POST https://api.example.com:8443/v1/x"

    def test_an_ipv6_host_is_bracketed(self) -> None:
        """An IPv6 literal keeps its brackets, so the port stays readable."""
        request = httpx2.Request("GET", "http://[::1]:9/v1/responses")
        assert describe_endpoint(request) == "GET http://[::1]:9/v1/responses"

    def test_the_default_port_is_not_repeated(self) -> None:
        """httpx leaves the scheme's default port out of the URL; so does the endpoint."""
        assert describe_endpoint(httpx2.Request("POST", "https://h/v1/m")) == "POST https://h/v1/m"

    @pytest.mark.parametrize("request_object", [None, object(), "http://h/x"])
    def test_anything_else_has_no_endpoint(self, request_object: object) -> None:
        """No request (or something that is not one) gives None, never a crash."""
        assert describe_endpoint(request_object) is None


class TestConnectionFailure:
    def test_an_unresolvable_host_says_so(self) -> None:
        """A name-resolution failure deep in the causes is named, with the fix."""
        error = _chained(RuntimeError("Connection error."), socket.gaierror(-2, "Name unknown"))
        assert connection_failure(error, "POST http://nowhere.invalid/v1/x") == (
            "the host name could not be resolved",
            "Check the host in base_url (and that this machine can resolve it)",
        )

    def test_a_refused_connection_by_errno_names_the_address(self) -> None:
        """An OSError with ECONNREFUSED counts as refused even when not the subclass."""
        error = _chained(RuntimeError("x"), OSError(errno.ECONNREFUSED, "refused"))
        detail, hint = connection_failure(error, "POST http://10.0.0.1:81/v1/x")
        assert (detail, hint) == (
            "connection refused",
            "Nothing is listening at 10.0.0.1:81: start the server, or check base_url",
        )

    def test_a_refused_connection_without_endpoint_still_has_a_hint(self) -> None:
        """Without an endpoint the hint speaks of the provider's address."""
        error = _chained(RuntimeError("x"), ConnectionRefusedError())
        assert connection_failure(error, None)[1] == (
            "Nothing is listening at the provider's address: start the server, or check base_url"
        )

    def test_another_cause_is_shown_with_its_type(self) -> None:
        """An unknown failure shows the innermost cause, typed, and no hint."""
        error = _chained(RuntimeError("Connection error."), ValueError("TLS handshake failed"))
        assert connection_failure(error, None) == ("TLS handshake failed (ValueError)", None)

    def test_no_cause_shows_the_error_itself(self) -> None:
        """An error with no cause is its own description."""
        assert connection_failure(RuntimeError("Connection error."), None) == (
            "Connection error.",
            None,
        )

    def test_a_cycle_in_the_causes_ends(self) -> None:
        """Causes that loop back are walked once."""
        outer, inner = RuntimeError("a"), ValueError("b")
        outer.__cause__, inner.__cause__ = inner, outer
        assert connection_failure(outer, None) == ("b (ValueError)", None)


class TestStatusHint:
    @pytest.mark.parametrize(
        ("status", "endpoint", "sdk", "expected"),
        [
            (403, None, "openai", "The key may not use this endpoint or model: check the key's"),
            (401, None, "other", "The server refused the key: check api_key= (or the provider's"),
            (
                404,
                "POST http://h/v1/v1/messages",
                "anthropic",
                "The server does not serve /v1/v1/messages: Anthropic's base_url has no /v1",
            ),
            (
                404,
                "POST http://h/v1/chat/completions",
                "openai",
                "The server does not serve /v1/chat/completions, or does not know the model",
            ),
            (404, None, "openai", "The server does not serve /, or does not know the model"),
        ],
    )
    def test_hints_by_status_and_path(
        self, status: int, endpoint: str | None, sdk: str, expected: str
    ) -> None:
        """Each common cause gets its hint; the path decides among the 404s."""
        hint = status_hint(status, endpoint, sdk)
        assert hint is not None
        assert hint.startswith(expected)

    @pytest.mark.parametrize("status", [400, 500, 503])
    def test_other_statuses_have_no_hint(self, status: int) -> None:
        """Statuses without one common cause add nothing."""
        assert status_hint(status, "POST http://h/v1/responses", "openai") is None


def test_a_body_error_without_a_request_still_maps() -> None:
    """An HTTP-library error built without its request maps to a typed error with no endpoint."""
    openai = pytest.importorskip("openai")
    with pytest.raises(ProviderError) as caught, mapped_errors(openai, prompt_name="p"):
        raise httpx2.ReadError("peer closed")
    assert caught.value.endpoint is None
    assert caught.value.phase == "response"
    assert caught.value.reason == (
        "the connection broke while the reply was read (ReadError: peer closed) (1 attempt)"
    )
