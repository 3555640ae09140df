"""Signing in and out: the browser round trip (``sign_in``) and forgetting a sign-in (``sign_out``).

``sign_in`` drops the old tokens, opens the loopback receiver (on the port registered last time
when it is free), and makes one request through the SDK's provider: the server's 401 starts the
flow, ``open_url`` shows the authorization page, and the redirect's code becomes tokens in the store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError
from mcp.shared.auth import OAuthClientInformationFull

from moka_shell.config_oauth import OAuthSettings
from moka_shell.core.links import web_link
from moka_shell.core.mcp.oauth.provider import (HTTP_TIMEOUT, NO_REGISTRATION_HINT, SIGN_IN_TIMEOUT, MokaOAuthProvider,
                                       redirect_uri_for)
from moka_shell.core.mcp.oauth.loopback import LoopbackReceiver
from moka_shell.core.mcp.oauth.store import OAuthStore, where
from moka_shell.errors import SignInError, UnsafeLinkError


def _preregistered(client_id: str, redirect: str) -> dict[str, Any]:
    """A client record for an id the person was given: a public client, bound to no issuer (RFC 8252 loopback)."""
    info = OAuthClientInformationFull(client_id=client_id, redirect_uris=[redirect],  # type: ignore[list-item]
                                      token_endpoint_auth_method="none",
                                      grant_types=["authorization_code", "refresh_token"])
    return info.model_dump(mode="json", exclude_none=True)


async def sign_in(url: str, label: str, open_url: Callable[[str], Awaitable[None]], *,
                  headers: dict[str, str] | None = None, timeout: float = SIGN_IN_TIMEOUT,
                  client_id: str | None = None, client: OAuthSettings | None = None) -> dict[str, Any]:
    """Sign in to the server at ``url``: ``open_url`` shows the authorization page; waits for the redirect.

    ``client_id``: one the server's owner gave, for servers that let no client register itself (a
    public client, for this sign-in); ``client``: the server's ``oauth`` settings (a client id there,
    with its stored secret, is a confidential client). Returns what was learnt (issuer, scope, where
    the tokens are kept). Raises SignInError.
    """
    if client is not None and client.grant != "authorization_code":
        raise SignInError(f"nobody signs in to {label}: its tokens come from the {client.grant} grant, "
                          "with the client's own credentials", hint="connect to it; there is nothing to sign in to")
    if client_id:  # given for this sign-in: it wins over a configured one
        client = None
    store = OAuthStore(url)
    wanted = urlsplit(redirect_uri_for(store)).port or 0
    receiver = LoopbackReceiver(label, wanted)
    redirect = await receiver.start()
    # A login signs in afresh (another account, more scope): the old tokens go first.
    store.remember(tokens=None, expiresAt=None, redirectUri=redirect)
    if client_id:
        store.remember(client=_preregistered(client_id, redirect), issuer=None, preregistered=True)
    elif receiver.port != wanted and not store.record().get("preregistered"):
        store.forget_client()  # registered for a port that is taken now: register again

    async def on_authorization_url(authorization_url: str) -> None:
        try:  # the address browsers will open, so the host the person is shown is where they sign in
            page = web_link(authorization_url).url
        except UnsafeLinkError as exc:
            raise SignInError(f"{label}'s sign-in page {exc.url!r} is not an address Moka opens: {exc.why}",
                              hint="the server's authorization server sent it; tell its owner") from None
        receiver.expected_state = (parse_qs(urlsplit(page).query).get("state") or [""])[0]
        await open_url(page)

    probe = {"jsonrpc": "2.0", "id": "moka-sign-in", "method": "ping"}
    try:
        provider = MokaOAuthProvider(store, redirect, on_authorization_url, receiver.wait, client)
        with anyio.fail_after(timeout):
            async with httpx2.AsyncClient(headers=headers or None, auth=provider,
                                          timeout=httpx2.Timeout(HTTP_TIMEOUT)) as http:
                response = await http.post(url, json=probe, headers={
                    "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"})
    except TimeoutError:
        raise SignInError(f"the sign-in to {label} was not finished within {timeout:g} s",
                          hint="start it again and complete it in the browser") from None
    except OAuthRegistrationError as exc:
        raise SignInError(f"{label} does not let Moka register itself ({exc})", hint=NO_REGISTRATION_HINT,
                          needs_client_id=True) from None
    except OAuthFlowError as exc:
        raise SignInError(f"signing in to {label} failed: {exc}") from None
    except httpx2.HTTPError as exc:
        raise SignInError(f"signing in to {label} failed: {type(exc).__name__}: {exc}",
                          hint="is the server running and its URL right?") from None
    finally:
        await receiver.close()
    if response.status_code in (401, 403) or not store.signed_in():
        raise SignInError(f"{label} still refuses Moka after signing in (HTTP {response.status_code})",
                          hint="check that the account you signed in with may use this server")
    meta = provider.context.oauth_metadata
    prm = provider.context.protected_resource_metadata
    revocation = meta.revocation_endpoint if meta else None
    store.remember(issuer=str(meta.issuer) if meta else store.record().get("issuer"),
                   revocationEndpoint=str(revocation) if revocation else None,
                   asMetadata=meta.model_dump(mode="json", exclude_none=True) if meta else None,
                   resourceMetadata=prm.model_dump(mode="json", exclude_none=True) if prm else None)
    store.remember(stepUpScope=None)
    tokens = await store.get_tokens()
    return {"issuer": store.record().get("issuer"), "scope": tokens.scope if tokens else None, "storage": where()}


async def sign_out(url: str) -> dict[str, Any]:
    """Forget the server's tokens and registration; revokes the tokens first where the server allows (RFC 7009)."""
    store = OAuthStore(url)
    record = store.record()
    tokens: dict[str, Any] = record["tokens"] if isinstance(record.get("tokens"), dict) else {}
    client: dict[str, Any] = record["client"] if isinstance(record.get("client"), dict) else {}
    endpoint = record.get("revocationEndpoint")
    revoked = False
    if isinstance(endpoint, str) and tokens and client.get("client_id"):
        revoked = True
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(10.0)) as http:
            for hint in ("refresh_token", "access_token"):
                value = tokens.get(hint)
                if not value:
                    continue
                try:
                    reply = await http.post(endpoint, data={"token": value, "token_type_hint": hint,
                                                            "client_id": client["client_id"]})
                    revoked = revoked and reply.status_code == 200
                except httpx2.HTTPError:
                    revoked = False  # forgetting them here still signs Moka out
    store.forget()
    return {"signedOut": bool(tokens), "revoked": revoked}
