"""Tokens with no person: the ``client_credentials`` grant and enterprise cross-app access (SEP-990).

Both are the SDK's providers: ``ClientCredentialsOAuthProvider`` (a client secret, basic or post),
``PrivateKeyJWTOAuthProvider`` (a JWT signed with the client's private key, RFC 7523 §2.2) and
``IdentityAssertionOAuthProvider`` (the jwt-bearer grant with an ID-JAG). Moka adds where the
secrets come from (``credentials.py``), the issuer they are bound to (the config's: they are sent
to no other authorization server), and the first leg of cross-app access, which the SDK leaves to
the host: the RFC 8693 token exchange at the identity provider, trading the person's ID token for
an ID-JAG for this server.
"""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.client.auth import OAuthTokenError
from mcp.client.auth.extensions.client_credentials import (ClientCredentialsOAuthProvider, PrivateKeyJWTOAuthProvider,
                                                           SignedJWTParameters)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

from moka_shell.config_oauth import OAuthSettings
from moka_shell.core.mcp.oauth.credentials import WHAT, ClientSecrets, Secret
from moka_shell.core.mcp.oauth.store import OAuthStore
from moka_shell.core.redact import SECRETS
from moka_shell.errors import ServerError

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
EXCHANGE_TIMEOUT = 30.0
SET_HINT = "set it with `moka servers oauth NAME` (see its --help) or in the server's Edit dialog"


def _need(secrets: ClientSecrets, name: Secret, why: str) -> str:
    value = secrets.get(name)
    if not value:
        raise ServerError(f"this server's OAuth client has no {WHAT[name]} stored ({why})", hint=SET_HINT)
    return value


class IdJagExchange:
    """The SDK's ``assertion_provider`` for cross-app access: an ID-JAG from the identity provider (RFC 8693)."""

    def __init__(self, settings: OAuthSettings, secrets: ClientSecrets) -> None:
        self.settings, self.secrets = settings, secrets

    async def __call__(self, audience: str, resource: str) -> str:
        """Trade the stored ID token for an ID-JAG whose audience is the server's authorization server."""
        assert self.settings.idp_token_endpoint and self.settings.idp_client_id  # OAuthSettings checks both
        data = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "audience": audience,
                "resource": resource, "subject_token": _need(self.secrets, "idToken", "cross-app access trades it "
                                                                                      "for this server's grant"),
                "subject_token_type": ID_TOKEN, "client_id": self.settings.idp_client_id}
        if self.settings.scope:
            data["scope"] = self.settings.scope
        if idp_secret := self.secrets.get("idpClientSecret"):
            data["client_secret"] = idp_secret
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(EXCHANGE_TIMEOUT)) as http:
            reply = await http.post(self.settings.idp_token_endpoint, data=data)
        body = _json_object(reply)
        if reply.status_code != 200:
            why = body.get("error_description") or body.get("error")
            expired = " (the ID token may have expired: store a new one)" if body.get("error") == "invalid_grant" else ""
            raise OAuthTokenError(f"the identity provider refused the token exchange (HTTP {reply.status_code}"
                                  f"{': ' + str(why) if why else ''}){expired}")
        token = body.get("access_token")
        if body.get("issued_token_type") != ID_JAG or not isinstance(token, str) or not token:
            raise OAuthTokenError(f"the identity provider answered the token exchange with no ID-JAG "
                                  f"(issued_token_type {body.get('issued_token_type')!r})")
        SECRETS.add(token)
        return token


def _json_object(reply: httpx2.Response) -> dict[str, Any]:
    try:
        body = reply.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def machine_auth(url: str, settings: OAuthSettings) -> httpx2.Auth:
    """The auth of a connection whose tokens need no person (``client_credentials``, ``cross_app_access``)."""
    assert settings.client_id and settings.issuer  # OAuthSettings checks both for these grants
    store, secrets = OAuthStore(url), ClientSecrets(url)
    if settings.grant == "cross_app_access":
        method = settings.auth_method or "client_secret_basic"
        if method not in ("client_secret_basic", "client_secret_post"):
            raise ServerError(f"cross-app access needs a client secret (authMethod client_secret_basic or "
                              f"client_secret_post), not {method!r}", hint=SET_HINT)
        return IdentityAssertionOAuthProvider(
            url, store, settings.client_id, _need(secrets, "clientSecret", "the jwt-bearer grant needs it"),
            settings.issuer, IdJagExchange(settings, secrets), scope=settings.scope,
            token_endpoint_auth_method=method)  # type: ignore[arg-type]
    method = settings.auth_method or ("private_key_jwt" if secrets.get("privateKey") else "client_secret_basic")
    if method == "private_key_jwt":
        signer = SignedJWTParameters(issuer=settings.client_id, subject=settings.client_id,
                                     signing_key=_need(secrets, "privateKey", "private_key_jwt signs with it"),
                                     signing_algorithm=settings.signing_algorithm)
        return PrivateKeyJWTOAuthProvider(url, store, settings.client_id, signer.create_assertion_provider(),
                                          scope=settings.scope, issuer=settings.issuer)
    if method not in ("client_secret_basic", "client_secret_post"):
        raise ServerError(f"the client_credentials grant needs a client secret or a private key, not authMethod "
                          f"{method!r}", hint=SET_HINT)
    return ClientCredentialsOAuthProvider(url, store, settings.client_id,
                                          _need(secrets, "clientSecret", "the client_credentials grant sends it"),
                                          token_endpoint_auth_method=method,  # type: ignore[arg-type]
                                          scope=settings.scope, issuer=settings.issuer)
