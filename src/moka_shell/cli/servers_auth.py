"""``moka servers login NAME`` and ``moka servers logout NAME``: OAuth sign-in for HTTP servers."""

from __future__ import annotations

import argparse
import webbrowser
from typing import TYPE_CHECKING, Any

from moka_shell.cli.run import paths_of
from moka_shell.errors import UnknownServerError

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
                                 client_id=args.client_id))
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
