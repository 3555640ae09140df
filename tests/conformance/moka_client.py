"""Moka as the client under test of the official MCP conformance suite (client mode).

The suite (``@modelcontextprotocol/conformance``, pinned in tests/npm) starts one test server per
scenario and runs this script with the server's URL as its last argument, the scenario's name in
``MCP_CONFORMANCE_SCENARIO`` and, where the scenario hands the client credentials, a JSON object in
``MCP_CONFORMANCE_CONTEXT``. This script is the person at the keyboard: it drives only Moka's own
command line, as a script or CI job would (``moka servers add``, ``moka servers oauth``,
``moka servers login``, ``moka tools``, ``moka call``), in a config and data dir of its own, and
plays the browser for a sign-in (the suite's authorization servers approve at once). Nothing here
speaks MCP or OAuth itself.

Exit 0 when every command did what the scenario asks; the suite judges the traffic either way.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2

CIMD_URL = "https://conformance-test.local/client-metadata.json"  # the document the CIMD scenario expects
URL_IN_LOGIN = re.compile(r"^\s+(https?://\S+)\s*$", re.M)


class Moka:
    """Runs ``moka`` commands in one private config and data dir, the OS keyring out of reach."""

    def __init__(self, home: Path, env: dict[str, str] | None = None) -> None:
        self.home = home
        self.env = {**os.environ, "MOKA_CONFIG": str(home / "config.json"), "MOKA_DATA_DIR": str(home / "data"),
                    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring", **(env or {})}

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """One command; its output goes to this script's stderr, for the suite's stderr.txt."""
        done = subprocess.run([sys.executable, "-m", "moka_shell", *args], input=stdin, capture_output=True,
                              text=True, env=self.env, timeout=120)
        print(f"$ moka {' '.join(args)}  -> {done.returncode}\n{done.stdout}{done.stderr}", file=sys.stderr)
        return done

    def must(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """One command that has to succeed."""
        done = self.run(*args, stdin=stdin)
        if done.returncode != 0:
            raise SystemExit(f"moka {args[0]} failed with exit code {done.returncode}")
        return done

    def login(self) -> None:
        """``moka servers login test --no-browser``, with this script as the browser."""
        proc = subprocess.Popen([sys.executable, "-m", "moka_shell", "servers", "login", "test", "--no-browser"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env)
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            found = URL_IN_LOGIN.match(line)
            if found:
                # The person's browser: it follows the authorization server's redirect back to Moka.
                httpx2.get(found.group(1), follow_redirects=True, timeout=30)
                break
        out, err = proc.communicate(timeout=60)
        print(f"$ moka servers login test --no-browser  -> {proc.returncode}\n{''.join(seen)}{out}{err}",
              file=sys.stderr)
        if proc.returncode != 0:
            raise SystemExit("moka servers login failed")


def connect(moka: Moka, _url: str, _ctx: dict[str, Any]) -> None:
    """Connect and list the tools."""
    moka.must("tools", "test")


def tools_call(moka: Moka, _url: str, _ctx: dict[str, Any]) -> None:
    """Call the scenario's add_numbers tool."""
    moka.must("call", "test", "add_numbers", '{"a": 5, "b": 3}')


def elicitation_defaults(moka: Moka, _url: str, _ctx: dict[str, Any]) -> None:
    """Call the tool that asks a question, answering with the form's defaults (nobody is there to answer)."""
    moka.must("call", "test", "test_client_elicitation_defaults", "--answer-defaults")


def sse_retry(moka: Moka, _url: str, _ctx: dict[str, Any]) -> None:
    """Call the tool whose event stream the server closes before it answers."""
    moka.must("call", "test", "test_reconnection")


def signed_in_calls(moka: Moka) -> None:
    """List and call tools; a call refused for want of scope is retried once after signing in again."""
    moka.must("tools", "test")
    if moka.run("call", "test", "test-tool").returncode != 0:
        moka.login()  # the step-up: the person signs in again, for the scope the server asked for
        moka.must("call", "test", "test-tool")


def authorization_code(moka: Moka, _url: str, _ctx: dict[str, Any]) -> None:
    """Sign in in the browser, then use the server."""
    moka.login()
    signed_in_calls(moka)


def pre_registration(moka: Moka, _url: str, ctx: dict[str, Any]) -> None:
    """The owner gave a confidential client (id and secret): set it, sign in, use the server."""
    moka.must("servers", "oauth", "test", "--client-id", ctx["client_id"], "--client-secret-stdin",
              stdin=ctx["client_secret"] + "\n")
    authorization_code(moka, _url, ctx)


def client_credentials_basic(moka: Moka, _url: str, ctx: dict[str, Any]) -> None:
    """Machine to machine with a client secret: set the client, then use the server (nobody signs in)."""
    moka.must("servers", "oauth", "test", "--grant", "client-credentials", "--client-id", ctx["client_id"],
              "--client-secret-stdin", stdin=ctx["client_secret"] + "\n")
    moka.must("tools", "test")


def client_credentials_jwt(moka: Moka, _url: str, ctx: dict[str, Any]) -> None:
    """Machine to machine with private_key_jwt: the key is a file the owner gave."""
    key = moka.home / "client-key.pem"
    key.write_text(ctx["private_key_pem"])
    moka.must("servers", "oauth", "test", "--grant", "client-credentials", "--client-id", ctx["client_id"],
              "--private-key-file", str(key), "--signing-alg", ctx.get("signing_algorithm") or "ES256")
    moka.must("tools", "test")


def cross_app_access(moka: Moka, _url: str, ctx: dict[str, Any]) -> None:
    """Enterprise cross-app access: the person's ID token from their identity provider, then the server."""
    id_token = moka.home / "id-token"
    id_token.write_text(ctx["idp_id_token"])
    moka.must("servers", "oauth", "test", "--grant", "cross-app-access", "--client-id", ctx["client_id"],
              "--client-secret-stdin", "--idp-token-endpoint", ctx["idp_token_endpoint"],
              "--idp-client-id", ctx["idp_client_id"], "--id-token-file", str(id_token),
              stdin=ctx["client_secret"] + "\n")
    moka.must("tools", "test")


HANDLERS: dict[str, Callable[[Moka, str, dict[str, Any]], None]] = {
    "initialize": connect,
    "tools_call": tools_call,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "auth/pre-registration": pre_registration,
    "auth/client-credentials-basic": client_credentials_basic,
    "auth/client-credentials-jwt": client_credentials_jwt,
    "auth/cross-app-access-complete-flow": cross_app_access,
}


def main() -> int:
    """Run the scenario the suite names against the URL it gives."""
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    handler = HANDLERS.get(scenario) or (authorization_code if scenario.startswith("auth/") else connect)
    # A person who hosts a client metadata document says so; only the CIMD scenario has one.
    env = {"MOKA_OAUTH_CLIENT_METADATA_URL": CIMD_URL} if scenario == "auth/basic-cimd" else {}
    with tempfile.TemporaryDirectory(prefix="moka-conformance-") as home:
        moka = Moka(Path(home), env)
        moka.must("servers", "add", "test", "--url", url)
        handler(moka, url, ctx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
