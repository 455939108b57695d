"""OAuth for the conformance client: the SDK's providers, given to ``HttpServer(auth=...)``.

The auth scenarios of the conformance suite put an OAuth authorization server in
front of their MCP server. weakincentives leaves authentication to the HTTP client
(``HttpServer.auth`` takes any ``httpx2.Auth``), so this module only picks the SDK's
provider a scenario calls for, with the credentials the suite hands over in
``MCP_CONFORMANCE_CONTEXT``:

- ``client-credentials-basic``: client_credentials with a client secret;
- ``client-credentials-jwt``: client_credentials with a signed JWT assertion;
- ``cross-app-access``: the suite's identity provider's ID token exchanged there for
  an ID-JAG (RFC 8693), then presented to the authorization server (RFC 7523);
- everything else: the authorization-code flow with PKCE, with a pre-registered
  client when the context names one, else dynamic registration. The "browser" is an
  HTTP client that follows the authorization URL to its redirect.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URI = "http://localhost:3030/callback"


class MemoryStorage:
    """Tokens and client information for one run (the SDK's ``TokenStorage``)."""

    def __init__(self, client: OAuthClientInformationFull | None = None) -> None:
        self._tokens: OAuthToken | None = None
        self._client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info


class Browser:
    """Follows an authorization URL to its redirect and keeps the code it carries."""

    def __init__(self) -> None:
        self._redirect = ""

    async def open(self, authorization_url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as client:
            answer = await client.get(authorization_url)
        self._redirect = answer.headers.get("location", "")

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self._redirect).query)
        return AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )


def auth_for(scenario: str, url: str) -> httpx2.Auth | None:
    """The provider for ``scenario`` (None for scenarios without auth)."""
    if not scenario.startswith("auth/"):
        return None
    context: dict[str, Any] = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if scenario == "auth/client-credentials-basic":
        return ClientCredentialsOAuthProvider(
            server_url=url,
            storage=MemoryStorage(),
            client_id=context["client_id"],
            client_secret=context["client_secret"],
        )
    if scenario == "auth/cross-app-access-complete-flow":
        return _cross_app(url, context)
    if scenario == "auth/client-credentials-jwt":
        jwt = SignedJWTParameters(
            issuer=context["client_id"],
            subject=context["client_id"],
            signing_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "ES256"),
        )
        return PrivateKeyJWTOAuthProvider(
            server_url=url,
            storage=MemoryStorage(),
            client_id=context["client_id"],
            assertion_provider=jwt.create_assertion_provider(),
        )
    return _authorization_code(url, context)


def _cross_app(url: str, context: dict[str, Any]) -> httpx2.Auth:
    """SEP-990: trade the IdP's ID token for an ID-JAG, present it to the server's AS.

    The SDK provider takes the authorization server as configuration; a deployment
    knows it, this test reads it from the server's protected-resource metadata.
    """
    parts = urlsplit(url)
    metadata_url = (
        f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    )
    issuer = str(httpx2.get(metadata_url).json()["authorization_servers"][0]).rstrip("/")

    async def id_jag(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient() as client:
            answer = await client.post(
                context["idp_token_endpoint"],
                data={
                    "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                    "subject_token": context["idp_id_token"],
                    "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                    "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                    "audience": audience,
                    "resource": resource,
                    "client_id": context["idp_client_id"],
                },
            )
        return str(answer.json()["access_token"])

    return IdentityAssertionOAuthProvider(
        server_url=url,
        storage=MemoryStorage(),
        client_id=context["client_id"],
        client_secret=context["client_secret"],
        issuer=issuer,
        assertion_provider=id_jag,
        token_endpoint_auth_method="client_secret_basic",
    )


def _authorization_code(url: str, context: dict[str, Any]) -> httpx2.Auth:
    metadata = OAuthClientMetadata(
        client_name="weakincentives conformance client",
        redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    client = None
    if "client_id" in context:
        client = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT_URI],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
        )
    browser = Browser()
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=MemoryStorage(client),
        redirect_handler=browser.open,
        callback_handler=browser.callback,
    )
