"""OAuth 2.1 sign-in for streamable-HTTP MCP servers: glue around the SDK's ``OAuthClientProvider``.

The SDK does the protocol: protected resource metadata (RFC 9728) from ``WWW-Authenticate``,
authorization server metadata (RFC 8414, OpenID discovery as fallback), client ID metadata
documents or dynamic registration (RFC 7591), PKCE S256, ``resource`` (RFC 8707), the ``iss``
check (RFC 9207), refresh, and step-up on ``insufficient_scope``. Moka adds where tokens live
(``store``), the loopback redirect (``loopback``), refreshing a little before expiry
(also across restarts), and two modes: a connection never waits for a person (a 401 that needs
a sign-in raises ``SignInRequiredError``), and ``login.sign_in`` runs the browser round trip.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import socket
from collections.abc import AsyncGenerator, Awaitable, Callable

import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthRegistrationError
from mcp.client.auth.oauth2 import OAuthContext
from mcp.client.auth.utils import (extract_field_from_www_auth, extract_scope_from_www_auth,
                                   is_valid_client_metadata_url, union_scopes)
from mcp.shared.auth import (AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthMetadata,
                             OAuthToken, ProtectedResourceMetadata)

from moka_shell.config_oauth import OAuthSettings
from moka_shell.version import __version__
from moka_shell.core.mcp.oauth.credentials import ClientSecrets
from moka_shell.core.mcp.oauth.store import OAuthStore
from moka_shell.errors import SignInError, SignInRequiredError

SIGN_IN_TIMEOUT = 300.0  # how long a person has to finish signing in, in the browser
# A Client ID Metadata Document: an HTTPS URL (a non-root path) whose JSON describes Moka as a
# client. Authorization servers that advertise CIMD take it as the client id, with no registration.
# The project hosts none yet, so it is opt-in for whoever hosts one.
CIMD_ENV = "MOKA_OAUTH_CLIENT_METADATA_URL"
HTTP_TIMEOUT = 30.0
SET_SECRET_HINT = "store it with `moka servers oauth NAME --client-secret-stdin`, or in the server's Edit dialog"
log = logging.getLogger("moka.oauth")
# The SDK logs a traceback for every flow that stops, including a sign-in nobody asked for yet.
logging.getLogger("mcp.client.auth.oauth2").setLevel(logging.CRITICAL)


def _margin(expires_in: int | str | None) -> float:
    """How long before expiry to refresh: a tenth of the lifetime, at most a minute."""
    try:
        return min(60.0, int(expires_in) * 0.1) if expires_in is not None else 0.0
    except ValueError:
        return 0.0


class _Context(OAuthContext):
    """The SDK's context, but a token counts as expired a little before it is (so it is refreshed in time)."""

    def update_token_expiry(self, token: OAuthToken) -> None:
        """Expiry minus the margin."""
        super().update_token_expiry(token)
        if self.token_expiry_time is not None:
            self.token_expiry_time -= _margin(token.expires_in)


def client_metadata(redirect_uri: str) -> OAuthClientMetadata:
    """What Moka registers as: a native public client with a loopback redirect (SEP-837, RFC 8252)."""
    return OAuthClientMetadata(client_name="Moka", client_uri=None, software_id="moka-shell",
                               software_version=__version__, redirect_uris=[redirect_uri],  # type: ignore[list-item]
                               grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                               token_endpoint_auth_method="none", application_type="native")


def configured_client(url: str, settings: OAuthSettings, redirect_uri: str) -> OAuthClientInformationFull:
    """The client the server's owner gave (``oauth.clientId``), confidential when a secret is stored for it."""
    assert settings.client_id
    secret = ClientSecrets(url).get("clientSecret")
    method = settings.auth_method or ("client_secret_basic" if secret else "none")
    if method in ("client_secret_basic", "client_secret_post") and not secret:
        raise SignInError(f"the OAuth client {settings.client_id!r} signs in with a client secret ({method}), "
                          "and none is stored", hint=SET_SECRET_HINT)
    if method == "private_key_jwt":
        raise SignInError("private_key_jwt is for the client_credentials grant, not a sign-in in the browser")
    return OAuthClientInformationFull(client_id=settings.client_id, client_secret=secret if method != "none" else None,
                                      redirect_uris=[redirect_uri],  # type: ignore[list-item]
                                      token_endpoint_auth_method=method, issuer=settings.issuer,
                                      grant_types=["authorization_code", "refresh_token"])


class MokaOAuthProvider(OAuthClientProvider):
    """``OAuthClientProvider`` with Moka's store; restores the token's expiry when tokens are loaded.

    ``client``: the server's ``oauth`` settings; a client id there is used instead of registering.
    """

    def __init__(self, store: OAuthStore, redirect_uri: str,
                 redirect_handler: Callable[[str], Awaitable[None]],
                 callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
                 client: OAuthSettings | None = None) -> None:
        cimd = os.environ.get(CIMD_ENV) or None
        if cimd is not None and not is_valid_client_metadata_url(cimd):
            raise SignInError(f"{CIMD_ENV} must be an https URL with a path, got {cimd!r}")
        super().__init__(server_url=store.key, client_metadata=client_metadata(redirect_uri), storage=store,
                         redirect_handler=redirect_handler, callback_handler=callback_handler,
                         client_metadata_url=cimd)
        ctx = self.context
        self.context = _Context(**{f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)})
        self.store = store
        self.configured = configured_client(store.key, client, redirect_uri) if client and client.client_id else None
        if client and client.scope:
            self.context.client_metadata.scope = client.scope

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # A step-up noted by a connection (a 403 insufficient_scope) is asked for now, with what was
        # granted before (SEP-2350): the 401 that starts a sign-in names only the base scope.
        wanted = self.store.record().get("stepUpScope")
        if isinstance(wanted, str):
            self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope, wanted)
        return await super()._perform_authorization_code_grant()

    async def _initialize(self) -> None:
        await super()._initialize()
        if self.configured is not None:  # the owner's client, never a registration of Moka's own
            self.context.client_info = self.configured
        # The SDK forgets when a loaded token expires; without this a new process presents an
        # expired token, gets 401 and asks the person again instead of refreshing.
        expires = self.store.expires_at()
        tokens = self.context.current_tokens
        if expires is not None and tokens is not None:
            self.context.token_expiry_time = expires - _margin(tokens.expires_in)
        # Likewise the metadata: a refresh before any 401 would go to the resource's own /token,
        # without `resource`. What the sign-in discovered is kept (it is public) and used until a 401
        # discovers it again.
        record = self.store.record()
        try:
            if self.context.oauth_metadata is None and isinstance(record.get("asMetadata"), dict):
                self.context.oauth_metadata = OAuthMetadata.model_validate(record["asMetadata"])
            if self.context.protected_resource_metadata is None and isinstance(record.get("resourceMetadata"), dict):
                self.context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(
                    record["resourceMetadata"])
        except ValueError:  # not what we wrote: discover again on the next 401
            self.context.oauth_metadata = self.context.protected_resource_metadata = None


def _is_step_up(response: httpx2.Response) -> bool:
    return response.status_code == 403 and extract_field_from_www_auth(response, "error") == "insufficient_scope"


class _ConnectionProvider(MokaOAuthProvider):
    """A connection's auth: a 401 that needs a person raises SignInRequiredError (the connection waits
    for a sign-in); a 403 ``insufficient_scope`` is noted for the next sign-in and handed back, so one
    operation fails with the server's words and the connection stays up."""

    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, with a step-up that needs a person turned into the 403 it answered."""
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                try:
                    outgoing = await flow.asend(response)
                except OAuthRegistrationError:  # a person must bring a client id: that is a sign-in too
                    raise SignInRequiredError("this server needs a sign-in, and does not let Moka register "
                                              "itself", hint=NO_REGISTRATION_HINT) from None
                except SignInRequiredError:
                    if outgoing is not request or not _is_step_up(response):
                        raise
                    granted = self.context.current_tokens.scope if self.context.current_tokens else None
                    self.store.remember(stepUpScope=union_scopes(granted, extract_scope_from_www_auth(response)))
                    return  # httpx2 returns this 403 to the transport
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()


def uses_oauth(headers: dict[str, str]) -> bool:
    """A server configured with its own Authorization header is never signed in by Moka."""
    return not any(k.lower() == "authorization" for k in headers)


def sign_in_url(name: str, url: str | None, headers: dict[str, str], *, header_hint: str) -> str:
    """The URL Moka signs in to for server ``name`` (the UI's and the CLI's rule), or SignInError saying why not.

    ``header_hint`` says, in the words of the surface that asks, how to remove the server's own header.
    """
    if not url:
        raise SignInError(f"{name!r} is not an HTTP server; only streamable-HTTP servers sign in")
    if not uses_oauth(headers):
        raise SignInError(f"{name!r} sends its own Authorization header, so Moka does not sign in to it",
                          hint=header_hint)
    return url


def _free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redirect_uri_for(store: OAuthStore) -> str:
    """The redirect URI this server's registration uses (kept with the registration), or a fresh one.

    Nothing is written here: a server that never asks for OAuth leaves no record behind.
    """
    uri = store.record().get("redirectUri")
    if isinstance(uri, str) and uri.startswith("http://127.0.0.1:"):
        return uri
    return f"http://127.0.0.1:{_free_loopback_port()}/callback"


def connection_auth(url: str, settings: OAuthSettings | None = None) -> httpx2.Auth:
    """The auth for a connection: uses and refreshes stored tokens; a needed sign-in raises, never waits.

    A grant that needs no person (``client_credentials``, ``cross_app_access``) gets its tokens itself.
    """
    if settings is not None and settings.grant != "authorization_code":
        from moka_shell.core.mcp.oauth.machine import machine_auth

        return machine_auth(url, settings)
    store = OAuthStore(url)

    async def needs_person(_authorization_url: str) -> None:
        raise SignInRequiredError(
            "this server needs a sign-in (it answered 401 and publishes OAuth metadata)",
            hint="press Sign in on its card, or run `moka servers login NAME`")

    async def never() -> AuthorizationCodeResult:  # needs_person always raises first
        raise SignInRequiredError("this server needs a sign-in")

    return _ConnectionProvider(store, redirect_uri_for(store), needs_person, never, settings)


def find_sign_in_required(exc: BaseException) -> SignInRequiredError | None:
    """The SignInRequiredError in ``exc`` or in the exception groups and causes around it."""
    found = _find(exc, SignInRequiredError)
    return found if isinstance(found, SignInRequiredError) else None


def find_oauth_failure(exc: BaseException) -> OAuthFlowError | None:
    """The SDK's OAuth error (a refused token request, a wrong issuer …) in ``exc`` or around it."""
    found = _find(exc, OAuthFlowError)
    return found if isinstance(found, OAuthFlowError) else None


def _find(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: set[int] = set()
    todo: list[BaseException] = [exc]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kind):
            return e
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        todo.extend(x for x in (e.__cause__, e.__context__) if x is not None)
    return None


NO_REGISTRATION_HINT = ("ask the server's owner for a client id (a public client with the redirect URI "
                        "http://127.0.0.1/callback, any port), then `moka servers login NAME --client-id ID` "
                        "or give it when Sign in asks")


def auth_state(url: str | None, headers: dict[str, str], settings: OAuthSettings | None = None) -> str | None:
    """``signed-in``, ``step-up`` (signed in, but an operation asked for more scope), ``signed-out``,
    or None for a server no person signs in to (stdio, its own Authorization header, a grant with no person)."""
    if not url or not uses_oauth(headers) or (settings is not None and settings.grant != "authorization_code"):
        return None
    record = OAuthStore(url).record()
    if not isinstance(record.get("tokens"), dict):
        return "signed-out"
    return "step-up" if record.get("stepUpScope") else "signed-in"
