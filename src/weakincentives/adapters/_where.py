"""Where a provider request went, and the usual reasons it failed there.

A provider error names its endpoint so the reader knows which server refused: the
request's method and URL, reduced to scheme, host, port and path. The query string
and any credentials in the URL are left out (a key must never reach a log), and so are
headers. A hint names the common cause of the failure when there is one: nothing
listening at that address, a key the server refused, a path the server does not serve
(a local server without the Responses API, a base URL without ``/v1``), throttling.
"""

from __future__ import annotations

import errno
import socket

__all__ = ["TIMEOUT_HINT", "connection_failure", "describe_endpoint", "status_hint"]

TIMEOUT_HINT = (
    "No reply came in time: raise the client's timeout (or the deadline), or check that "
    "the server is not overloaded"
)

_KEY_VARIABLES = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def describe_endpoint(request: object) -> str | None:
    """``"POST https://host:port/path"`` for an HTTP request object, or None.

    Read from the attributes the ``httpx`` family shares (``method``, ``url`` with
    ``scheme``, ``host``, ``port`` and ``path``), so either HTTP library works; the
    query and the user info of the URL are never part of it.
    """
    url = getattr(request, "url", None)
    scheme, host, path = (getattr(url, name, None) for name in ("scheme", "host", "path"))
    if not isinstance(scheme, str) or not isinstance(host, str) or not host:
        return None
    port = getattr(url, "port", None)
    shown_host = f"[{host}]" if ":" in host else host
    authority = shown_host if port is None else f"{shown_host}:{port}"
    method = getattr(request, "method", None)
    prefix = f"{method} " if isinstance(method, str) and method else ""
    return f"{prefix}{scheme}://{authority}{path if isinstance(path, str) else ''}"


def connection_failure(exc: BaseException, endpoint: str | None) -> tuple[str, str | None]:
    """What went wrong with a connection that could not be made, and the usual fix.

    The SDK's own message is only "Connection error."; the reason is further down
    the exception's causes (a refused connection, a name that does not resolve).
    """
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror):
            return (
                "the host name could not be resolved",
                "Check the host in base_url (and that this machine can resolve it)",
            )
        if isinstance(cause, ConnectionRefusedError) or (
            isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED
        ):
            address = _address(endpoint)
            return (
                "connection refused",
                f"Nothing is listening at {address}: start the server, or check base_url",
            )
    innermost = next(iter(reversed(_causes(exc))), exc)
    text = str(innermost) or type(innermost).__name__
    if innermost is exc:
        return text, None
    return f"{text} ({type(innermost).__name__})", None


def status_hint(status: int, endpoint: str | None, sdk_name: str) -> str | None:
    """The common cause of an error status from this endpoint, when there is one."""
    if status == 401:
        variable = _KEY_VARIABLES.get(sdk_name, "the provider's key variable")
        return f"The server refused the key: check api_key= (or {variable})"
    if status == 403:
        return "The key may not use this endpoint or model: check the key's permissions"
    if status == 404:
        return _not_found_hint(endpoint)
    if status == 429:
        return (
            "The provider is throttling requests: wait, run fewer evaluations at once, or "
            "raise max_retries so the loop waits longer"
        )
    return None


def _not_found_hint(endpoint: str | None) -> str:
    path = "" if endpoint is None else endpoint.partition("://")[2].partition("/")[2]
    path = f"/{path}"
    if path.endswith("/responses"):
        return (
            f"The server does not serve {path} (or does not know the model): local servers "
            "(llama.cpp, Ollama, vLLM, LM Studio) usually offer Chat Completions only; use "
            "ChatCompletionsAdapter (demo: --adapter openai-chat), or check base_url and model"
        )
    if path.endswith("/chat/completions") and "/v1/" not in path:
        return (
            f"The server does not serve {path}: OpenAI-compatible servers serve "
            "/v1/chat/completions, so base_url usually ends with /v1"
        )
    if path.endswith("/messages") and "/v1/v1/" in path:
        return (
            f"The server does not serve {path}: Anthropic's base_url has no /v1 (the SDK adds it)"
        )
    return f"The server does not serve {path}, or does not know the model: check base_url and model"


def _address(endpoint: str | None) -> str:
    if endpoint is None:
        return "the provider's address"
    return endpoint.partition("://")[2].partition("/")[0] or endpoint


def _causes(exc: BaseException) -> list[BaseException]:
    """``exc``'s causes (explicit or implicit), outermost first, without cycles."""
    chain: list[BaseException] = []
    seen: set[int] = {id(exc)}
    current = exc.__cause__ or exc.__context__
    while current is not None and id(current) not in seen and len(chain) < 16:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain
