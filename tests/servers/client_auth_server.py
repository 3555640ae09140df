"""A protected MCP server, its authorization server and an identity provider, on 127.0.0.1, for clients
that do not register themselves: an owner's confidential client, client credentials, cross-app access.

    python client_auth_server.py PORT

- ``/mcp``: streamable HTTP MCP (tool ``whoami``: which client and grant the token came from), behind a
  bearer check that answers 401 with ``resource_metadata`` (RFC 9728).
- ``/as``: the authorization server (RFC 8414 metadata, no registration endpoint). Its clients:
  ``owner-app`` (confidential, authorization code, ``client_secret_basic``), ``robot`` (client
  credentials, ``client_secret_basic`` or ``_post``), ``signer`` (client credentials, ``private_key_jwt``
  with the key ``/test/keys`` hands out) and ``xaa-app`` (the jwt-bearer grant with an ID-JAG,
  ``client_secret_basic``). ``/as/authorize`` approves at once (PKCE S256 and ``resource`` required).
- ``/idp``: the identity provider. ``/idp/token`` does the RFC 8693 token exchange: an ID token it issued
  (``/test/keys`` has one for the person) for an ID-JAG whose audience is ``/as``.
- ``/test/state``: each token request's grant, client and how it authenticated (never a secret).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import sys
import time
from typing import Any
from urllib.parse import unquote, urlencode

import jwt
import uvicorn
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from mcp.server import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

PORT = int(sys.argv[1])
BASE = f"http://127.0.0.1:{PORT}"
RESOURCE, ISSUER, IDP = f"{BASE}/mcp", f"{BASE}/as", f"{BASE}/idp"
PRM_URL = f"{BASE}/.well-known/oauth-protected-resource/mcp"
SECRETS = {"owner-app": "owner-app-secret-7f3a", "robot": "robot-secret-19c2", "xaa-app": "xaa-app-secret-c41d"}
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
CLIENT_KEY = ec.generate_private_key(ec.SECP256R1())  # signer's key pair (the test gets the private half)
IDP_KEY = secrets.token_hex(32)  # the identity provider signs ID tokens and ID-JAGs with it (HS256)
state: dict[str, Any] = {"codes": {}, "access": {}, "token_requests": [], "exchanges": []}

mcp = MCPServer("client-auth-test")


@mcp.tool()
def whoami() -> str:
    """Say which client and grant the caller's token came from."""
    return state.get("last_caller", "?")


def _error(code: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": code, "error_description": description}, status_code=status)


def _pem(key: Any) -> str:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def id_token(person: str = "ada@example.com", ttl: int = 3600) -> str:
    """An ID token the identity provider issued for ``person`` to Moka's IdP client."""
    now = int(time.time())
    return jwt.encode({"iss": IDP, "sub": person, "aud": "moka-at-idp", "iat": now, "exp": now + ttl}, IDP_KEY,
                      algorithm="HS256")


async def prm(_request: Request) -> Response:
    return JSONResponse({"resource": RESOURCE, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]})


async def as_metadata(_request: Request) -> Response:
    return JSONResponse({
        "issuer": ISSUER, "authorization_endpoint": f"{ISSUER}/authorize", "token_endpoint": f"{ISSUER}/token",
        "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials", JWT_BEARER],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "private_key_jwt"],
        "authorization_response_iss_parameter_supported": True})


async def authorize(request: Request) -> Response:
    q = request.query_params
    if q.get("client_id") != "owner-app":
        return _error("invalid_client", "unknown client_id")
    if q.get("code_challenge_method") != "S256" or q.get("resource") != RESOURCE:
        return _error("invalid_request", "PKCE S256 and the resource are required")
    code = "code-" + secrets.token_urlsafe(12)
    state["codes"][code] = {"challenge": q["code_challenge"], "redirect_uri": q["redirect_uri"]}
    return RedirectResponse(f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q.get('state', ''), 'iss': ISSUER})}",
                            status_code=302)


def _client_auth(request: Request, form: dict[str, str]) -> tuple[str | None, str]:
    """(client id, how it authenticated), or (None, why not)."""
    header = request.headers.get("authorization", "")
    if header.startswith("Basic "):
        client, _, secret = base64.b64decode(header[6:]).decode().partition(":")
        client, secret = unquote(client), unquote(secret)
        return (client, "client_secret_basic") if SECRETS.get(client) == secret else (None, "wrong basic secret")
    if "client_secret" in form:
        client = form.get("client_id", "")
        return (client, "client_secret_post") if SECRETS.get(client) == form["client_secret"] else \
            (None, "wrong post secret")
    if form.get("client_assertion_type") == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
        try:
            claims = jwt.decode(form.get("client_assertion", ""), CLIENT_KEY.public_key(), algorithms=["ES256"],
                                audience=ISSUER)
        except jwt.PyJWTError as exc:
            return None, f"bad client assertion: {exc}"
        ok = claims.get("iss") == claims.get("sub") == "signer"
        return ("signer", "private_key_jwt") if ok else (None, "assertion not signer's")
    return None, "no client authentication"


def _issue(client: str, grant: str) -> JSONResponse:
    access = "at-" + secrets.token_urlsafe(20)
    state["access"][access] = f"{client} via {grant}"
    return JSONResponse({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "scope": "mcp"})


async def token(request: Request) -> Response:
    form = {k: str(v) for k, v in (await request.form()).items()}
    client, how = _client_auth(request, form)
    grant = form.get("grant_type", "")
    state["token_requests"].append({"grant_type": grant, "client_id": client, "auth": how,
                                    "resource": form.get("resource")})
    if client is None:
        return _error("invalid_client", how, 401)
    if form.get("resource") != RESOURCE:
        return _error("invalid_target", f"resource must be {RESOURCE}")
    if grant == "client_credentials" and client in ("robot", "signer"):
        return _issue(client, grant)
    if grant == "authorization_code" and client == "owner-app":
        code = state["codes"].pop(form.get("code", ""), None)
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if code is None or base64.urlsafe_b64encode(digest).decode().rstrip("=") != code["challenge"]:
            return _error("invalid_grant", "unknown code or PKCE mismatch")
        return _issue(client, grant)
    if grant == JWT_BEARER and client == "xaa-app":
        try:
            jag = jwt.decode(form.get("assertion", ""), IDP_KEY, algorithms=["HS256"], audience=ISSUER)
        except jwt.PyJWTError as exc:
            return _error("invalid_grant", f"bad ID-JAG: {exc}")
        if jag.get("resource") != RESOURCE or jag.get("client_id") != client:
            return _error("invalid_grant", "the ID-JAG is for another resource or client")
        return _issue(f"{client} for {jag['sub']}", grant)
    return _error("unauthorized_client", f"{client} may not use {grant}")


async def idp_token(request: Request) -> Response:
    form = {k: str(v) for k, v in (await request.form()).items()}
    state["exchanges"].append({k: form.get(k) for k in ("grant_type", "requested_token_type", "subject_token_type",
                                                        "audience", "resource", "client_id")})
    if form.get("grant_type") != TOKEN_EXCHANGE or form.get("requested_token_type") != ID_JAG:
        return _error("unsupported_grant_type", "token exchange for an ID-JAG only")
    try:
        person = jwt.decode(form.get("subject_token", ""), IDP_KEY, algorithms=["HS256"], audience="moka-at-idp")
    except jwt.PyJWTError as exc:
        return _error("invalid_grant", f"the ID token is not valid: {exc}")
    now = int(time.time())
    jag = jwt.encode({"iss": IDP, "sub": person["sub"], "aud": form.get("audience"), "resource": form.get("resource"),
                      "client_id": "xaa-app", "iat": now, "exp": now + 300, "jti": secrets.token_hex(8)}, IDP_KEY,
                     algorithm="HS256", headers={"typ": "oauth-id-jag+jwt"})
    return JSONResponse({"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A", "expires_in": 300})


async def test_state(_request: Request) -> Response:
    return JSONResponse({k: v for k, v in state.items() if k not in ("codes",)})


async def test_keys(_request: Request) -> Response:
    return JSONResponse({"signer_private_key": _pem(CLIENT_KEY), "id_token": id_token(),
                         "expired_id_token": id_token(ttl=-60), "secrets": SECRETS})


routes = Starlette(routes=[
    Route("/.well-known/oauth-protected-resource/mcp", prm),
    Route("/.well-known/oauth-authorization-server/as", as_metadata),
    Route("/as/authorize", authorize), Route("/as/token", token, methods=["POST"]),
    Route("/idp/token", idp_token, methods=["POST"]),
    Route("/test/state", test_state), Route("/test/keys", test_keys),
])
mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The MCP endpoint behind the bearer check; everything else is the authorization side."""
    if scope["type"] == "http" and scope["path"].startswith("/mcp"):
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        caller = state["access"].get(headers.get("authorization", "").removeprefix("Bearer "))
        if caller is None:
            await JSONResponse({"error": "invalid_token"}, status_code=401, headers={
                "WWW-Authenticate": f'Bearer resource_metadata="{PRM_URL}"'})(scope, receive, send)
            return
        state["last_caller"] = caller
        await mcp_app(scope, receive, send)
        return
    await (mcp_app if scope["type"] == "lifespan" else routes)(scope, receive, send)


if __name__ == "__main__":
    print(f"client-auth-test listening on {RESOURCE}", file=sys.stderr, flush=True)
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
