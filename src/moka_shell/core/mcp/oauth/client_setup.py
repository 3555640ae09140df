"""Setting a server's OAuth client: the one path for ``moka servers oauth`` and the dialog's ``servers.setOAuth``.

The settings go in the server's config entry (``oauth``, through ``ServerConfigs.change``), the
secrets in the keyring or the owner-only token file (``credentials.py``). A grant with no person
(``client_credentials``, ``cross_app_access``) sends the client's credentials to one authorization
server only: the ``issuer`` given, or else the one the server's protected resource metadata names
now (RFC 9728), which is said back so the person sees where they will go.
"""

from __future__ import annotations

from typing import Any

import httpx2
from mcp.client.auth.utils import (build_protected_resource_metadata_discovery_urls,
                                   extract_resource_metadata_from_www_auth, handle_protected_resource_response)
from pydantic import ValidationError

from moka_shell.config_oauth import OAuthSettings
from moka_shell.core.mcp.oauth.credentials import ClientSecrets
from moka_shell.core.mcp.oauth.store import OAuthStore
from moka_shell.core.server_configs import ServerConfigs
from moka_shell.errors import InvalidParamsError

DISCOVERY_TIMEOUT = 30.0
PROBE = {"jsonrpc": "2.0", "id": "moka-oauth-setup", "method": "ping"}


async def discover_issuer(url: str) -> str:
    """The authorization server the MCP server at ``url`` names in its protected resource metadata."""
    try:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(DISCOVERY_TIMEOUT)) as http:
            probe = await http.post(url, json=PROBE, headers={"Accept": "application/json, text/event-stream",
                                                               "MCP-Protocol-Version": "2025-11-25"})
            named = extract_resource_metadata_from_www_auth(probe) if probe.status_code == 401 else None
            for where in build_protected_resource_metadata_discovery_urls(named, url):
                metadata = await handle_protected_resource_response(await http.get(where))
                if metadata is not None and metadata.authorization_servers:
                    return str(metadata.authorization_servers[0])
    except httpx2.HTTPError as exc:
        raise InvalidParamsError(f"could not ask {url} which authorization server it uses ({type(exc).__name__})",
                                 hint="give the issuer yourself (--issuer, or Issuer in the dialog)") from None
    raise InvalidParamsError(f"{url} publishes no protected resource metadata naming its authorization server",
                             hint="give the issuer yourself (--issuer, or Issuer in the dialog)")


def _settings(data: dict[str, Any]) -> OAuthSettings:
    try:
        return OAuthSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidParamsError(f"oauth{'.' + where if where else ''}: {first['msg'].removeprefix('Value error, ')}")\
            from None


async def set_client(configs: ServerConfigs, name: str, changes: dict[str, Any],
                     secrets: dict[str, str | None]) -> dict[str, Any]:
    """Change ``name``'s OAuth client: ``changes`` are config keys (None removes one), ``secrets`` are kept apart.

    The tokens got before are dropped. Returns ``{"oauth", "secrets", "issuerLearnt"}``: the settings now, the names of the stored
    secrets, and the issuer when it was learnt from the server rather than given.
    """
    entry = configs.get(name)
    if not entry.url:
        raise InvalidParamsError(f"{name!r} is not an HTTP server; only streamable-HTTP servers use OAuth")
    current = entry.oauth.model_dump(by_alias=True, exclude_none=True) if entry.oauth else {}
    merged = {k: v for k, v in {**current, **changes}.items() if v is not None}
    learnt = None
    if merged.get("grant", "authorization_code") != "authorization_code" and not merged.get("issuer"):
        merged["issuer"] = learnt = await discover_issuer(entry.url)
    settings = _settings(merged)
    store = ClientSecrets(entry.url)
    store.set(**secrets)
    _drop_tokens(entry.url)
    data = settings.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
    configs.change(name, oauth=data or None)
    return {"oauth": data, "secrets": store.stored(), "issuerLearnt": learnt}


def _drop_tokens(url: str) -> None:
    """Tokens got with the old client or credentials go with them: the next connection gets new ones."""
    tokens = OAuthStore(url)
    if tokens.signed_in():
        tokens.remember(tokens=None, expiresAt=None, stepUpScope=None)


def clear_client(configs: ServerConfigs, name: str) -> None:
    """Forget ``name``'s OAuth client settings, their secrets and the tokens they got."""
    entry = configs.get(name)
    if entry.url:
        ClientSecrets(entry.url).forget()
        _drop_tokens(entry.url)
    configs.change(name, oauth=None)


def describe(configs: ServerConfigs, name: str) -> dict[str, Any]:
    """``name``'s OAuth client settings and which of its secrets are stored."""
    entry = configs.get(name)
    data = entry.oauth.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) if entry.oauth else {}
    return {"oauth": data, "secrets": ClientSecrets(entry.url).stored() if entry.url else []}
