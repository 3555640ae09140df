"""OAuth clients Moka does not register itself, against a real authorization server on 127.0.0.1
(tests/servers/client_auth_server.py; findings: truth-and-conformance "MCP client", issue 29 item 5):
an owner's confidential client (id and secret), the client_credentials grant with a client secret
and with private_key_jwt, and enterprise cross-app access (token exchange, then jwt-bearer).

Each failed before: there was no `moka servers oauth`, a given client id was always a public
client (the token request was refused), and no grant without a person existed.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from oauth_support import SERVERS
from support import free_port
from test_oauth import NO_KEYRING, cli_login, moka

pytestmark = pytest.mark.slow


class AuthServer:
    """The running MCP server with its authorization server and identity provider."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.url, self.issuer = f"{self.base}/mcp", f"{self.base}/as"

    def state(self) -> dict[str, Any]:
        return httpx2.get(f"{self.base}/test/state").json()  # type: ignore[no-any-return]

    def keys(self) -> dict[str, Any]:
        return httpx2.get(f"{self.base}/test/keys").json()  # type: ignore[no-any-return]


@pytest.fixture
def auth_server() -> Iterator[AuthServer]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(SERVERS / "client_auth_server.py"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = AuthServer(port)
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx2.get(f"{server.base}/test/state", timeout=1)
            break
        except httpx2.HTTPError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the test authorization server did not start") from None
            time.sleep(0.1)
    try:
        yield server
    finally:
        proc.terminate()
        proc.wait(10)


def configure(tmp_path: Path, server: AuthServer) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))


def oauth(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
           **NO_KEYRING}
    return subprocess.run([sys.executable, "-m", "moka_shell", "servers", "oauth", "remote", *args], input=stdin,
                          capture_output=True, text=True, env=env, timeout=120)


def secret_file(tmp_path: Path, name: str, value: str) -> str:
    path = tmp_path / name
    path.write_text(value + "\n")
    return str(path)


def no_secret_in(tmp_path: Path, texts: list[str], *values: str) -> None:
    """The config file and every output are free of the secrets; the token file holds them, owner-only."""
    config = (tmp_path / "config.json").read_text()
    for value in values:
        assert value not in config and not any(value in t for t in texts), value
    token_file = tmp_path / "data" / "oauth-tokens.json"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600


def test_an_owners_confidential_client_signs_in_with_its_secret(tmp_path: Path, auth_server: AuthServer) -> None:
    """clientId in the config, the secret in the token store: the code is exchanged with client_secret_basic."""
    configure(tmp_path, auth_server)
    secret = auth_server.keys()["secrets"]["owner-app"]
    done = oauth(tmp_path, "--client-id", "owner-app", "--client-secret-stdin", stdin=secret + "\n")
    assert done.returncode == 0, done.stderr
    assert "remote: clientId owner-app" in done.stdout and "Stored: clientSecret, in" in done.stdout
    assert json.loads((tmp_path / "config.json").read_text())["mcpServers"]["remote"]["oauth"] == \
        {"clientId": "owner-app"}
    _url, login_out, login_err = cli_login(tmp_path, NO_KEYRING)
    call = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert call.returncode == 0 and "owner-app via authorization_code" in call.stdout, call.stderr
    requests = auth_server.state()["token_requests"]
    assert [(r["grant_type"], r["auth"]) for r in requests] == [("authorization_code", "client_secret_basic")]
    no_secret_in(tmp_path, [done.stdout, done.stderr, login_out, login_err, call.stdout, call.stderr], secret)
    shown = oauth(tmp_path)
    assert "clientId owner-app" in shown.stdout and "Stored: clientSecret" in shown.stdout and secret not in shown.stdout
    # Signing out forgets the tokens, not the client the owner gave.
    assert moka(tmp_path, "servers", "logout", "remote", env=NO_KEYRING).returncode == 0
    assert "Stored: clientSecret" in oauth(tmp_path).stdout


def test_a_client_secret_goes_to_the_os_keyring_when_there_is_one(tmp_path: Path, auth_server: AuthServer) -> None:
    """With a working keyring the secret lives there (not in the token file, not in the config), and the
    client credentials grant reads it back from there."""
    configure(tmp_path, auth_server)
    ring = tmp_path / "keyring.json"
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
           "PYTHON_KEYRING_BACKEND": "file_keyring.FileKeyring", "MOKA_TEST_KEYRING_FILE": str(ring),
           "PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")])}
    secret = auth_server.keys()["secrets"]["robot"]
    done = subprocess.run([sys.executable, "-m", "moka_shell", "servers", "oauth", "remote", "--grant",
                           "client-credentials", "--client-id", "robot", "--client-secret-stdin"], input=secret + "\n",
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the OS keyring (file_keyring.FileKeyring)" in done.stdout, done.stdout
    assert secret in ring.read_text() and not (tmp_path / "data" / "oauth-tokens.json").exists()
    assert secret not in (tmp_path / "config.json").read_text() and secret not in done.stdout + done.stderr
    call = subprocess.run([sys.executable, "-m", "moka_shell", "call", "remote", "whoami"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert call.returncode == 0 and "robot via client_credentials" in call.stdout, call.stderr


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_client_credentials_with_a_secret(tmp_path: Path, auth_server: AuthServer, method: str) -> None:
    """No person: the issuer is learnt from the server's metadata and said; tools work at once."""
    configure(tmp_path, auth_server)
    secret = auth_server.keys()["secrets"]["robot"]
    done = oauth(tmp_path, "--grant", "client-credentials", "--client-id", "robot", "--auth-method", method,
                 "--client-secret-file", secret_file(tmp_path, "secret", secret))
    assert done.returncode == 0, done.stderr
    assert f"sent only to {auth_server.issuer}, the authorization server remote names" in done.stdout
    listed = moka(tmp_path, "servers", "list", env=NO_KEYRING)
    assert "sign" not in listed.stdout  # nobody signs in to it
    call = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert call.returncode == 0 and "robot via client_credentials" in call.stdout, call.stderr
    assert [(r["grant_type"], r["auth"]) for r in auth_server.state()["token_requests"]] == \
        [("client_credentials", method)]
    no_secret_in(tmp_path, [done.stdout, done.stderr, call.stdout, call.stderr], secret)


def test_client_credentials_with_private_key_jwt(tmp_path: Path, auth_server: AuthServer) -> None:
    """The owner's private key signs the client assertion (RFC 7523); the key is stored, not the file's path."""
    configure(tmp_path, auth_server)
    key = auth_server.keys()["signer_private_key"]
    done = oauth(tmp_path, "--grant", "client-credentials", "--client-id", "signer", "--signing-alg", "ES256",
                 "--private-key-file", secret_file(tmp_path, "key.pem", key))
    assert done.returncode == 0 and "Stored: privateKey" in done.stdout, done.stderr
    call = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert call.returncode == 0 and "signer via client_credentials" in call.stdout, call.stderr
    assert [(r["grant_type"], r["auth"]) for r in auth_server.state()["token_requests"]] == \
        [("client_credentials", "private_key_jwt")]
    no_secret_in(tmp_path, [done.stdout, call.stdout, call.stderr], key.splitlines()[1])


def test_cross_app_access_exchanges_the_id_token_then_uses_jwt_bearer(tmp_path: Path, auth_server: AuthServer) -> None:
    """The ID token goes to the identity provider (RFC 8693) for an ID-JAG, which the jwt-bearer grant trades."""
    configure(tmp_path, auth_server)
    keys = auth_server.keys()
    done = oauth(tmp_path, "--grant", "cross-app-access", "--client-id", "xaa-app", "--client-secret-stdin",
                 "--idp-token-endpoint", f"{auth_server.base}/idp/token", "--idp-client-id", "moka-at-idp",
                 "--id-token-file", secret_file(tmp_path, "id-token", keys["id_token"]),
                 stdin=keys["secrets"]["xaa-app"])
    assert done.returncode == 0 and "Stored: clientSecret, idToken" in done.stdout, done.stderr
    call = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert call.returncode == 0 and "xaa-app for ada@example.com via urn:ietf:params:oauth:grant-type:jwt-bearer" \
        in call.stdout, call.stderr
    seen = auth_server.state()
    assert seen["exchanges"] == [{"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                                  "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
                                  "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
                                  "audience": auth_server.issuer, "resource": auth_server.url,
                                  "client_id": "moka-at-idp"}]
    assert [(r["grant_type"], r["auth"]) for r in seen["token_requests"]] == \
        [("urn:ietf:params:oauth:grant-type:jwt-bearer", "client_secret_basic")]
    no_secret_in(tmp_path, [done.stdout, call.stdout, call.stderr], keys["secrets"]["xaa-app"], keys["id_token"])
    # An ID token that has expired: the identity provider's refusal is said, with what to do.
    oauth(tmp_path, "--id-token-file", secret_file(tmp_path, "old", keys["expired_id_token"]))
    stale = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert stale.returncode == 1
    assert "the identity provider refused the token exchange" in stale.stderr and "may have expired" in stale.stderr


def test_refusals_and_mistakes_are_said_plainly(tmp_path: Path, auth_server: AuthServer) -> None:
    """A wrong secret, a missing one, and option mistakes each get a message that says what to do."""
    configure(tmp_path, auth_server)
    assert oauth(tmp_path, "--grant", "client-credentials", "--client-id", "robot").returncode == 0
    missing = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert missing.returncode == 1 and "has no client secret stored" in missing.stderr
    assert "moka servers oauth" in missing.stderr
    oauth(tmp_path, "--client-secret-stdin", stdin="not-the-secret")
    wrong = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert wrong.returncode == 1 and "OAuth:" in wrong.stderr and "401" in wrong.stderr, wrong.stderr
    assert "not-the-secret" not in wrong.stdout + wrong.stderr
    both = oauth(tmp_path, "--client-secret-stdin", "--id-token-file", "-", stdin="x")
    assert both.returncode == 2 and "only one secret can be read from stdin" in both.stderr
    assert oauth(tmp_path, "--clear", "--scope", "a").returncode == 2
    cleared = oauth(tmp_path, "--clear")
    assert cleared.returncode == 0 and "its secrets are forgotten" in cleared.stdout
    assert "oauth" not in json.loads((tmp_path / "config.json").read_text())["mcpServers"]["remote"]
    assert "Stored:" not in oauth(tmp_path).stdout
    bad = oauth(tmp_path, "--grant", "cross-app-access", "--client-id", "x", "--issuer", auth_server.issuer)
    assert bad.returncode == 1 and "needs idpTokenEndpoint, idpClientId" in bad.stderr
