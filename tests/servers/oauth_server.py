"""A protected MCP server with its own OAuth 2.1 authorization server, on 127.0.0.1 (for the sign-in tests).

    python oauth_server.py PORT

- ``/mcp``: streamable HTTP MCP (tools ``whoami``, ``echo``, and ``admin_report``, which needs the ``admin``
  scope: without it the call is answered 403 ``insufficient_scope``, for step-up). Without a valid bearer token it answers
  401 with ``WWW-Authenticate: Bearer resource_metadata=…`` (RFC 9728).
- ``/.well-known/oauth-protected-resource/mcp``: protected resource metadata naming the issuer
  ``http://127.0.0.1:PORT/as``.
- ``/.well-known/oauth-authorization-server/as``: RFC 8414 metadata (path-inserted, as the RFC says).
- ``/as/register`` (RFC 7591), ``/as/authorize`` (auto-approves; PKCE S256 and ``resource`` required;
  redirects with ``iss``, RFC 9207), ``/as/token`` (code and refresh grants; refresh tokens rotate),
  ``/as/revoke`` (RFC 7009).
- ``/as/.well-known/openid-configuration``: the same metadata by OpenID discovery (with ``oidc_only`` the
  RFC 8414 URL answers 404, so clients must fall back to it).
- ``/test/state``, ``/test/config``, ``/test/revoke-all`` and ``/test/preregister`` let the tests look and
  steer: token lifetime, a wrong ``iss``, no dynamic registration (``dcr``), another authorization
  endpoint (``authorize_at``), revoking everything, a client registered by hand.

Redirect URIs must match a registered one exactly (stricter than RFC 8252 asks, so Moka's
stable-port registration is tested), except that a hand-registered ``http://127.0.0.1/callback``
matches any port.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import sys
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

import uvicorn
from mcp.server import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
RESOURCE = f"{BASE}/mcp"
ISSUER = f"{BASE}/as"
PRM_URL = f"{BASE}/.well-known/oauth-protected-resource/mcp"

state: dict[str, Any] = {
    "clients": {}, "codes": {}, "access": {}, "refresh": {}, "revoked": [], "refreshes": 0,
    "authorizations": [], "registrations": [], "token_requests": [], "unauthorized": 0, "mcp_ok": 0,
    "config": {"ttl": 3600, "bad_iss": False, "dcr": True, "oidc_only": False, "cimd": False, "authorize_at": None},
}

mcp = MCPServer("oauth-test")


@mcp.tool()
def whoami() -> str:
    """Say who answered (only reachable with a token)."""
    return "oauth-test says hello"


@mcp.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@mcp.tool()
def admin_report() -> str:
    """Needs the `admin` scope: without it the call is answered 403 insufficient_scope (step-up)."""
    return "the admin report"


def _error(code: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": code, "error_description": description}, status_code=status)


async def prm(_request: Request) -> Response:
    return JSONResponse({"resource": RESOURCE, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"],
                         "bearer_methods_supported": ["header"]})


def _metadata() -> dict[str, Any]:
    return {
        "issuer": ISSUER, "authorization_endpoint": state["config"]["authorize_at"] or f"{ISSUER}/authorize",
        "token_endpoint": f"{ISSUER}/token",
        "revocation_endpoint": f"{ISSUER}/revoke",
        "response_types_supported": ["code"], "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["mcp", "admin"], "authorization_response_iss_parameter_supported": True,
    } | ({"registration_endpoint": f"{ISSUER}/register"} if state["config"]["dcr"] else {}) \
      | ({"client_id_metadata_document_supported": True} if state["config"]["cimd"] else {})


async def as_metadata(_request: Request) -> Response:
    """RFC 8414 metadata, unless the test asked for OpenID discovery only."""
    if state["config"]["oidc_only"]:
        return Response(status_code=404)
    return JSONResponse(_metadata())


async def oidc_metadata(_request: Request) -> Response:
    """OpenID Connect discovery at the issuer's own path (the SDK's last fallback)."""
    state["oidc_fetched"] = True
    return JSONResponse(_metadata())


async def register(request: Request) -> Response:
    if not state["config"]["dcr"]:
        return Response(status_code=404)
    body = await request.json()
    uris = body.get("redirect_uris") or []
    if not uris or not all(str(u).startswith("http://127.0.0.1:") for u in uris):
        return _error("invalid_redirect_uri", "only loopback redirect URIs are accepted")
    client_id = "client-" + secrets.token_hex(8)
    record = {**body, "client_id": client_id, "client_id_issued_at": int(time.time()),
              "token_endpoint_auth_method": "none"}
    state["clients"][client_id] = record
    state["registrations"].append({"client_id": client_id, "application_type": body.get("application_type"),
                                   "redirect_uris": uris})
    return JSONResponse(record, status_code=201)


async def authorize(request: Request) -> Response:
    q = request.query_params
    client_id = q.get("client_id", "")
    if state["config"]["cimd"] and client_id.startswith("https://"):
        # A real server fetches the document and checks its redirect_uris; this one trusts loopback ones.
        state["clients"].setdefault(client_id, {"client_id": client_id, "redirect_uris": ["http://127.0.0.1/callback"]})
    client = state["clients"].get(client_id)
    state["authorizations"].append({k: q.get(k) for k in ("client_id", "redirect_uri", "resource", "scope",
                                                          "code_challenge_method", "response_type")})
    if client is None:
        return _error("invalid_client", "unknown client_id")
    if not _redirect_ok(str(q.get("redirect_uri")), client["redirect_uris"]):
        return _error("invalid_request", "redirect_uri is not registered for this client")
    if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
        return _error("invalid_request", "authorization code with PKCE S256 only")
    if q.get("resource") != RESOURCE:
        return _error("invalid_target", f"resource must be {RESOURCE}")
    code = "code-" + secrets.token_urlsafe(16)
    state["codes"][code] = {"client_id": q["client_id"], "redirect_uri": q["redirect_uri"],
                            "challenge": q["code_challenge"], "scope": q.get("scope") or "mcp", "used": False}
    iss = f"{BASE}/evil" if state["config"]["bad_iss"] else ISSUER
    params = {"code": code, "state": q.get("state", ""), "iss": iss}
    return RedirectResponse(f"{q['redirect_uri']}?{urlencode(params)}", status_code=302)


def _redirect_ok(uri: str, registered: list[str]) -> bool:
    """Exact match; a registered loopback URI without a port matches any port (RFC 8252 §7.3)."""
    if uri in registered:
        return True
    parts = urlsplit(uri)
    return any(urlsplit(r).port is None and parts.hostname == "127.0.0.1" and
               f"http://127.0.0.1{parts.path}" == r for r in registered)


async def test_preregister(request: Request) -> Response:
    """A client the owner registered by hand: a public client with http://127.0.0.1/callback, any port."""
    client_id = (await request.json())["client_id"]
    state["clients"][client_id] = {"client_id": client_id, "redirect_uris": ["http://127.0.0.1/callback"],
                                   "token_endpoint_auth_method": "none"}
    return JSONResponse({"client_id": client_id})


def _issue(client_id: str, scope: str) -> dict[str, Any]:
    access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
    ttl = int(state["config"]["ttl"])
    state["access"][access] = {"client_id": client_id, "expires": time.time() + ttl, "scope": scope,
                               "refresh": refresh}
    state["refresh"][refresh] = {"client_id": client_id, "scope": scope}
    return {"access_token": access, "token_type": "Bearer", "expires_in": ttl, "refresh_token": refresh,
            "scope": scope}


async def token(request: Request) -> Response:
    form = dict(await request.form())
    state["token_requests"].append({k: v for k, v in form.items() if k in ("grant_type", "resource", "client_id")})
    if form.get("resource") != RESOURCE:
        return _error("invalid_target", f"resource must be {RESOURCE}")
    if form.get("grant_type") == "authorization_code":
        grant = state["codes"].get(str(form.get("code")))
        if grant is None or grant["used"]:
            return _error("invalid_grant", "unknown or used code")
        grant["used"] = True
        verifier = str(form.get("code_verifier", ""))
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if challenge != grant["challenge"]:
            return _error("invalid_grant", "PKCE verifier does not match")
        if form.get("client_id") != grant["client_id"] or form.get("redirect_uri") != grant["redirect_uri"]:
            return _error("invalid_grant", "client or redirect_uri does not match the code")
        return JSONResponse(_issue(grant["client_id"], grant["scope"]))
    if form.get("grant_type") == "refresh_token":
        old = str(form.get("refresh_token"))
        grant = state["refresh"].pop(old, None)
        if grant is None or old in state["revoked"] or form.get("client_id") != grant["client_id"]:
            return _error("invalid_grant", "unknown or revoked refresh token")
        state["refreshes"] += 1
        return JSONResponse(_issue(grant["client_id"], grant["scope"]))
    return _error("unsupported_grant_type", "authorization_code or refresh_token")


async def revoke(request: Request) -> Response:
    form = dict(await request.form())
    value = str(form.get("token", ""))
    state["revoked"].append(value)
    for access, info in state["access"].items():
        if info["refresh"] == value:
            state["revoked"].append(access)
    return Response(status_code=200)


async def test_state(_request: Request) -> Response:
    return JSONResponse({k: v for k, v in state.items() if k not in ("codes",)}
                        | {"access_tokens": list(state["access"]), "refresh_tokens": list(state["refresh"])})


async def test_config(request: Request) -> Response:
    state["config"].update(await request.json())
    return JSONResponse(state["config"])


async def test_revoke_all(_request: Request) -> Response:
    state["revoked"].extend(list(state["access"]) + list(state["refresh"]))
    return JSONResponse({"revoked": len(state["revoked"])})


routes = Starlette(routes=[
    Route("/.well-known/oauth-protected-resource/mcp", prm),
    Route("/.well-known/oauth-authorization-server/as", as_metadata),
    Route("/as/register", register, methods=["POST"]),
    Route("/as/authorize", authorize),
    Route("/as/token", token, methods=["POST"]),
    Route("/as/revoke", revoke, methods=["POST"]),
    Route("/test/state", test_state),
    Route("/test/config", test_config, methods=["POST"]),
    Route("/test/revoke-all", test_revoke_all, methods=["POST"]),
    Route("/test/preregister", test_preregister, methods=["POST"]),
    Route("/as/.well-known/openid-configuration", oidc_metadata),
])
mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")


def _valid(header: str) -> bool:
    if not header.startswith("Bearer "):
        return False
    value = header[len("Bearer "):]
    info = state["access"].get(value)
    return info is not None and value not in state["revoked"] and info["expires"] > time.time()


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The MCP endpoint behind the bearer check; everything else is the authorization server."""
    if scope["type"] == "lifespan":
        await mcp_app(scope, receive, send)
        return
    if scope["type"] == "http" and scope["path"].startswith("/mcp"):
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        if not _valid(auth):
            state["unauthorized"] += 1
            challenge = f'Bearer resource_metadata="{PRM_URL}", scope="mcp"'
            if auth:
                challenge += ', error="invalid_token"'
            response = JSONResponse({"error": "invalid_token"}, status_code=401,
                                    headers={"WWW-Authenticate": challenge})
            await response(scope, receive, send)
            return
        granted = state["access"][auth[len("Bearer "):]]["scope"].split()
        state["seen_headers"] = {k: v for k, v in headers.items() if k.startswith("mcp-")}
        if headers.get("mcp-name") == "admin_report" and "admin" not in granted:
            challenge = (f'Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="{PRM_URL}", '
                         'error_description="admin_report needs the admin scope"')
            body = {"jsonrpc": "2.0", "id": None,
                    "error": {"code": -32001, "message": "admin_report needs the admin scope (insufficient_scope)"}}
            response = JSONResponse(body, status_code=403, headers={"WWW-Authenticate": challenge})
            await response(scope, receive, send)
            return
        state["mcp_ok"] += 1
        await mcp_app(scope, receive, send)
        return
    await routes(scope, receive, send)


if __name__ == "__main__":
    print(f"oauth-test listening on {RESOURCE}", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
