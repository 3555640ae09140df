"""``moka servers login|logout|oauth NAME``: OAuth sign-in for HTTP servers, and the OAuth client they use."""

from __future__ import annotations

import argparse
import sys
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.cli.run import paths_of
from moka_shell.errors import UnknownServerError, UsageError

if TYPE_CHECKING:
    from moka_shell.config import ServerConfig

# The OAuth modules import the MCP SDK (seconds on a busy machine), and the config the pydantic
# models: loaded by the commands that sign in or out, not by every `moka` start (the parser is
# built before the desktop window opens, which would wait for them).
SIGN_IN_TIMEOUT = 300.0  # seconds; the default of --timeout (core.mcp.oauth.provider keeps its own default)


def add_parsers(ssub: Any) -> None:
    """Add ``login`` and ``logout`` to the ``moka servers`` subcommands."""
    li = ssub.add_parser("login", help="sign in to an HTTP server that asks for OAuth (opens the browser)")
    li.add_argument("name")
    li.add_argument("--no-browser", action="store_true", help="only print the URL to open; do not open a browser")
    li.add_argument("--client-id", metavar="ID",
                    help="a client id the server's owner gave (for servers that let no client register itself)")
    li.add_argument("--timeout", type=float, default=SIGN_IN_TIMEOUT,
                    help=f"seconds to wait for the sign-in to finish (default {SIGN_IN_TIMEOUT:g})")
    li.set_defaults(func=servers_login)
    lo = ssub.add_parser("logout", help="forget (and revoke) an HTTP server's sign-in")
    lo.add_argument("name")
    lo.set_defaults(func=servers_logout)
    _oauth_parser(ssub)


GRANTS = {"authorization-code": "authorization_code", "client-credentials": "client_credentials",
          "cross-app-access": "cross_app_access"}
# option → (config key, kind); secrets are read from a file or stdin, never from the command line.
SETTINGS = {"client_id": "clientId", "grant": "grant", "auth_method": "authMethod", "issuer": "issuer",
            "scope": "scope", "signing_alg": "signingAlgorithm", "idp_token_endpoint": "idpTokenEndpoint",
            "idp_client_id": "idpClientId"}
SECRET_FILES = {"client_secret_file": "clientSecret", "private_key_file": "privateKey",
                "idp_client_secret_file": "idpClientSecret", "id_token_file": "idToken"}


def _oauth_parser(ssub: Any) -> None:
    o = ssub.add_parser(
        "oauth", help="set the OAuth client an HTTP server uses: an owner's client id and secret, or a grant "
                      "with no person (client credentials, cross-app access)",
        description="With no option, shows the settings (and which secrets are stored, never their values). "
                    "Secrets are read from a file or stdin (FILE '-') and kept in the OS keyring, or the "
                    "owner-only token file; the settings go in the server's config entry. An option given "
                    "as '' removes that setting.",
        epilog="client credentials: --grant client-credentials --client-id ID (--client-secret-stdin | "
               "--private-key-file KEY.pem [--signing-alg ES256]). Cross-app access: --grant cross-app-access "
               "--client-id ID --client-secret-stdin --idp-token-endpoint URL --idp-client-id ID "
               "--id-token-file FILE. Without --issuer those grants send their credentials only to the "
               "authorization server the server names now.")
    o.add_argument("name")
    o.add_argument("--client-id", metavar="ID", help="the client id the server's owner gave")
    o.add_argument("--client-secret-stdin", action="store_true", help="read the client secret from stdin")
    o.add_argument("--client-secret-file", metavar="FILE", help="read the client secret from FILE")
    o.add_argument("--grant", choices=sorted(GRANTS), help="how tokens are got (default authorization-code: "
                                                           "a person signs in)")
    o.add_argument("--auth-method", choices=["none", "client_secret_basic", "client_secret_post", "private_key_jwt"],
                   help="how the client proves itself at the token endpoint (default: by what is stored)")
    o.add_argument("--issuer", metavar="URL", help="the authorization server the credentials belong to")
    o.add_argument("--scope", help="scopes to ask for, space-separated")
    o.add_argument("--private-key-file", metavar="FILE", help="PEM private key for private_key_jwt")
    o.add_argument("--signing-alg", metavar="ALG", help="its JWT algorithm (default RS256; e.g. ES256)")
    o.add_argument("--idp-token-endpoint", metavar="URL", help="cross-app access: the identity provider's token URL")
    o.add_argument("--idp-client-id", metavar="ID", help="cross-app access: Moka's client id at the identity provider")
    o.add_argument("--idp-client-secret-file", metavar="FILE", help="cross-app access: that client's secret")
    o.add_argument("--id-token-file", metavar="FILE", help="cross-app access: the person's ID token")
    o.add_argument("--clear", action="store_true", help="forget the settings and their secrets")
    o.set_defaults(func=servers_oauth)


def _read_secret(where: str, what: str) -> str:
    try:
        text = sys.stdin.read() if where == "-" else Path(where).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"could not read the {what} from {where}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        raise UsageError(f"the {what} in {where} is empty")
    return text.strip()


def servers_oauth(args: argparse.Namespace) -> int:
    """Set, show or clear a server's OAuth client (``core/mcp/oauth/client_setup.py``)."""
    from moka_shell.cli.commands import run
    from moka_shell.config import ConfigFile
    from moka_shell.core.mcp.oauth import client_setup
    from moka_shell.core.mcp.oauth.store import use_data_dir, where
    from moka_shell.core.server_configs import ServerConfigs

    paths = paths_of(args)
    use_data_dir(paths.data_dir)
    cfg_file = ConfigFile(paths.config_file)
    configs = ServerConfigs(cfg_file.config, cfg_file.save)
    if args.client_secret_stdin:
        if args.client_secret_file:
            raise UsageError("give the client secret once: --client-secret-stdin or --client-secret-file")
        args.client_secret_file = "-"
    if [getattr(args, k) for k in SECRET_FILES].count("-") > 1:
        raise UsageError("only one secret can be read from stdin; give the others as files")
    changes: dict[str, Any] = {key: (getattr(args, opt) or None) for opt, key in SETTINGS.items() if getattr(args, opt) is not None}
    if "grant" in changes:
        changes["grant"] = GRANTS[changes["grant"]]
    secrets: dict[str, str | None] = {key: _read_secret(getattr(args, opt), key) for opt, key in SECRET_FILES.items()
               if getattr(args, opt) is not None}
    if args.clear:
        if changes or secrets:
            raise UsageError("--clear forgets everything; give it alone")
        client_setup.clear_client(configs, args.name)
        print(f"{args.name} has no OAuth client settings now; its secrets are forgotten.")
        return 0
    if changes or secrets:
        done = run(lambda: client_setup.set_client(configs, args.name, changes, secrets))
        if done["issuerLearnt"]:
            print(f"The client's credentials will be sent only to {done['issuerLearnt']}, the authorization "
                  f"server {args.name} names; give --issuer to choose another.")
    else:
        done = client_setup.describe(configs, args.name)
    settings = done["oauth"]
    print(f"{args.name}: " + (", ".join(f"{k} {v}" for k, v in settings.items()) or "no OAuth client settings "
                                                                                 "(Moka registers itself)"))
    if done["secrets"]:
        print(f"Stored: {', '.join(done['secrets'])}, in {where()}.")
    return 0


def _oauth_server(args: argparse.Namespace) -> ServerConfig:
    from moka_shell.config import ConfigFile
    from moka_shell.core.mcp.oauth.provider import sign_in_url
    from moka_shell.core.mcp.oauth.store import use_data_dir

    paths = paths_of(args)
    use_data_dir(paths.data_dir)
    servers = ConfigFile(paths.config_file).config.mcp_servers
    server = servers.get(args.name)
    if server is None:
        raise UnknownServerError(args.name, sorted(servers))
    sign_in_url(args.name, server.url, server.headers,
                header_hint=f"remove the header (`moka servers add {args.name} --url URL --replace`) to sign in")
    return server


def servers_login(args: argparse.Namespace) -> int:
    """Sign in: print (and open) the authorization URL, wait for the redirect, keep the tokens."""
    from moka_shell.cli.commands import run
    from moka_shell.core.links import web_link
    from moka_shell.core.mcp.oauth.login import sign_in

    server = _oauth_server(args)
    assert server.url is not None

    async def show(url: str) -> None:
        host = web_link(url).host  # the address came normalised from sign_in: this is where it goes
        print(f"To sign in to {args.name}, open this page of {host} in your browser:\n\n  {url}\n", flush=True)
        if not args.no_browser:
            webbrowser.open(url)
        print("Waiting for the browser to come back to Moka…", flush=True)

    result = run(lambda: sign_in(server.url or "", args.name, show, headers=server.headers, timeout=args.timeout,
                                 client_id=args.client_id, client=server.oauth))
    scope = f", scope {result['scope']}" if result.get("scope") else ""
    print(f"Signed in to {args.name} (issuer {result.get('issuer') or 'unknown'}{scope}).")
    print(f"Tokens are kept in {result['storage']}.")
    return 0


def servers_logout(args: argparse.Namespace) -> int:
    """Forget the server's tokens (revoking them at the server when it offers that)."""
    from moka_shell.cli.commands import run
    from moka_shell.core.mcp.oauth.login import sign_out

    server = _oauth_server(args)
    result = run(lambda: sign_out(server.url or ""))
    if not result["signedOut"]:
        print(f"{args.name} had no sign-in to forget.")
    else:
        print(f"Signed out of {args.name}: its tokens are forgotten"
              + (" and revoked at the server." if result["revoked"] else "."))
    return 0
