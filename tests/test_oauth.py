"""OAuth sign-in against a real authorization server and protected MCP server on 127.0.0.1 (issue 15, item 1).

The server is tests/servers/oauth_server.py: RFC 9728 metadata through WWW-Authenticate, RFC 8414,
dynamic registration, PKCE S256, `resource`, `iss`, short-lived tokens, refresh and revocation.
No test touches the person's keyring: the CLI runs get PYTHON_KEYRING_BACKEND (no keyring, or a
file-backed test keyring), the in-process ones set the keyring backend for their duration.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import keyring
import pytest
from keyring.backends import fail

from oauth_support import SERVERS, OAuthServer, browse, oauth_server  # noqa: F401 - the fixture
from moka_shell.config import ServerConfig
from moka_shell.core.mcp.oauth import store as oauth_store
from moka_shell.core.mcp.oauth.login import sign_in
from moka_shell.core.mcp.oauth.loopback import LoopbackReceiver
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.errors import SignInError, ToolCallError
from moka_shell.inspector import Inspector
from moka_shell.plugins import PluginHost

NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def moka_env(tmp_path: Path, extra: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
            **extra}


def moka(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True,
                          env=moka_env(tmp_path, env), timeout=120)


def configure(tmp_path: Path, server: OAuthServer) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"remote": {"url": server.url}}}))


def cli_login(tmp_path: Path, env: dict[str, str]) -> tuple[str, str, str]:
    """`moka servers login remote --no-browser`; the 'browser' opens the printed URL. Returns (url, out, err)."""
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell", "servers", "login", "remote", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=moka_env(tmp_path, env))
    assert proc.stdout is not None
    seen, url = [], None
    for line in proc.stdout:
        seen.append(line)
        found = re.search(r"(http://127\.0\.0\.1:\d+/as/authorize\?\S+)", line)
        if found:
            url = found.group(1)
            break
    assert url, "".join(seen)
    page = browse(url)
    assert page.status_code == 200 and "Signed in to remote" in page.text
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return url, "".join(seen) + out, err


def leaked(secrets: list[str], texts: list[str], files: list[Path]) -> list[str]:
    """Which secrets appear in the texts or files."""
    blobs = texts + [p.read_bytes().decode("latin-1") for p in files]
    return [s for s in secrets if any(s in b for b in blobs)]


def test_cli_login_tools_refresh_logout_and_no_token_anywhere(tmp_path: Path, oauth_server: OAuthServer) -> None:
    """login --no-browser completes; tools list; expiry is refreshed; logout forgets; no token leaks."""
    configure(tmp_path, oauth_server)
    before = moka(tmp_path, "servers", "list", "--check", env=NO_KEYRING)
    assert before.returncode == 1 and "sign in required" in before.stdout and "moka servers login" in before.stdout
    assert "Server returned an error response" not in before.stdout + before.stderr

    oauth_server.configure(ttl=3)  # short-lived access tokens, so the later calls must refresh
    url, login_out, login_err = cli_login(tmp_path, NO_KEYRING)
    assert "code_challenge_method=S256" in url and "resource=" in url
    assert f"open this page of 127.0.0.1:{oauth_server.port} in your browser" in login_out
    token_file = tmp_path / "data" / "oauth-tokens.json"
    assert "no OS keyring is available" in login_out and str(token_file) in login_out
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    seen = oauth_server.state()
    assert seen["registrations"][0]["application_type"] == "native"
    assert seen["authorizations"][-1]["resource"] == oauth_server.url
    assert all(r["resource"] == oauth_server.url for r in seen["token_requests"])
    assert "signed in" in moka(tmp_path, "servers", "list", env=NO_KEYRING).stdout

    outputs = [login_out, login_err]
    tools = moka(tmp_path, "tools", "remote", env=NO_KEYRING)
    assert tools.returncode == 0 and "remote/whoami" in tools.stdout, tools.stderr
    outputs += [tools.stdout, tools.stderr]
    first_token = json.loads(token_file.read_text())[oauth_server.url]["tokens"]["access_token"]
    while time.time() < json.loads(token_file.read_text())[oauth_server.url]["expiresAt"] + 0.5:
        time.sleep(0.2)  # wait (not a timing assertion) until the stored access token has expired
    call = moka(tmp_path, "call", "remote", "whoami", env=NO_KEYRING)
    assert call.returncode == 0 and "oauth-test says hello" in call.stdout, call.stderr
    outputs += [call.stdout, call.stderr]
    assert oauth_server.state()["refreshes"] >= 1
    assert json.loads(token_file.read_text())[oauth_server.url]["tokens"]["access_token"] != first_token

    logout = moka(tmp_path, "servers", "logout", "remote", env=NO_KEYRING)
    assert logout.returncode == 0 and "revoked at the server" in logout.stdout, logout.stderr
    outputs += [logout.stdout, logout.stderr]
    assert oauth_server.url not in json.loads(token_file.read_text())
    after = moka(tmp_path, "servers", "list", "--check", env=NO_KEYRING)
    assert after.returncode == 1 and "sign in required" in after.stdout
    outputs += [after.stdout, after.stderr]

    secrets = oauth_server.secrets()
    assert len(secrets) >= 3
    stored = [p for p in (tmp_path / "data").rglob("*") if p.is_file() and p.name != "oauth-tokens.json"]
    assert any("inspector" in p.parts for p in stored)  # the inspector did log these runs
    assert leaked(secrets, outputs, stored + [tmp_path / "config.json"]) == []


def test_tokens_go_to_the_os_keyring_when_there_is_one(tmp_path: Path, oauth_server: OAuthServer) -> None:
    """With a working keyring backend the sign-in lives there, not in a file; logout removes it."""
    configure(tmp_path, oauth_server)
    ring = tmp_path / "keyring.json"
    env = {"PYTHON_KEYRING_BACKEND": "file_keyring.FileKeyring", "MOKA_TEST_KEYRING_FILE": str(ring),
           "PYTHONPATH": os.pathsep.join([str(SERVERS), os.environ.get("PYTHONPATH", "")])}
    _url, out, _err = cli_login(tmp_path, env)
    assert "the OS keyring (file_keyring.FileKeyring)" in out
    record = json.loads(json.loads(ring.read_text())["moka-oauth"][oauth_server.url])
    assert record["issuer"] == oauth_server.issuer and record["tokens"]["access_token"]
    assert not (tmp_path / "data" / "oauth-tokens.json").exists()
    assert "remote/echo" in moka(tmp_path, "tools", "remote", env=env).stdout
    assert moka(tmp_path, "servers", "logout", "remote", env=env).returncode == 0
    assert oauth_server.url not in json.loads(ring.read_text()).get("moka-oauth", {})


@pytest.fixture
def no_keyring(tmp_path: Path) -> Iterator[Path]:
    """In-process runs: no keyring backend, the fallback file under tmp_path."""
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    oauth_store.use_data_dir(tmp_path / "data")
    try:
        yield tmp_path / "data"
    finally:
        keyring.set_keyring(old)
        oauth_store.use_data_dir(None)


async def browser_opens(url: str) -> None:
    """The person's browser: follows the authorization redirects back to the loopback receiver."""
    asyncio.get_running_loop().run_in_executor(None, browse, url)


async def wait_status(conn: Any, status: str, limit: float = 30) -> None:
    deadline = time.monotonic() + limit
    while conn.status != status and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert conn.status == status, (conn.status, conn.error)


@pytest.mark.anyio
async def test_connection_waits_for_sign_in_refreshes_and_asks_again_after_revocation(
        no_keyring: Path, oauth_server: OAuthServer) -> None:
    """401 → 'signin' with no retries; sign in → ready; expiry refreshes in-session; revoked → 'signin' again."""
    mgr = ServerManager(PluginHost().registry("transports"), Inspector(no_keyring / "inspector"))
    mgr.load({"remote": ServerConfig(url=oauth_server.url)})
    mgr.start_all()
    conn = mgr.get("remote")
    try:
        await wait_status(conn, "signin")
        assert "needs a sign-in" in (conn.error or "") and conn.generation == 1
        await asyncio.sleep(1.5)  # a failed server would have retried by now (its first backoff is shorter)
        assert conn.generation == 1 and conn.status == "signin"

        oauth_server.configure(ttl=2)
        result = await sign_in(oauth_server.url, "remote", browser_opens)
        assert result["issuer"] == oauth_server.issuer
        await conn.restart()
        assert await conn.wait_ready(30), conn.error
        expires = oauth_store.OAuthStore(oauth_server.url).expires_at()
        assert expires is not None
        while time.time() < expires + 0.5:
            await asyncio.sleep(0.2)
        reply = await conn.call_tool("echo", {"text": "still here"})
        assert reply["content"][0]["text"] == "still here"
        assert oauth_server.state()["refreshes"] >= 1

        oauth_server.revoke_all()  # tokens die at the server: the next request is a 401 that refresh can't fix
        with pytest.raises(ToolCallError):
            await conn.call_tool("echo", {"text": "x"})
        await wait_status(conn, "signin")
    finally:
        await mgr.stop_all()


@pytest.mark.anyio
async def test_a_wrong_iss_in_the_redirect_is_refused(no_keyring: Path, oauth_server: OAuthServer) -> None:
    """RFC 9207: an authorization response from another issuer is rejected and no token is kept."""
    oauth_server.configure(bad_iss=True)
    with pytest.raises(SignInError, match="iss"):
        await sign_in(oauth_server.url, "remote", browser_opens, timeout=60)
    assert not oauth_store.OAuthStore(oauth_server.url).signed_in()
    assert oauth_server.state()["token_requests"] == []


@pytest.mark.anyio
async def test_a_sign_in_page_that_hides_its_host_is_not_opened(no_keyring: Path, oauth_server: OAuthServer) -> None:
    """An authorization endpoint with a user name before its host (finding G2) is refused before any browser opens."""
    oauth_server.configure(authorize_at=f"https://accounts.google.com@127.0.0.1:{oauth_server.port}/as/authorize")
    opened: list[str] = []

    async def browser(url: str) -> None:
        opened.append(url)

    with pytest.raises(SignInError, match="user name before its host"):
        await sign_in(oauth_server.url, "remote", browser, timeout=60)
    assert opened == [] and oauth_server.state()["authorizations"] == []


@pytest.mark.anyio
async def test_loopback_receiver_ignores_a_redirect_of_another_sign_in(tmp_path: Path) -> None:
    """Only the redirect carrying this sign-in's state completes it; anything else gets an error page."""
    import httpx2

    receiver = LoopbackReceiver("remote")
    uri = await receiver.start()
    receiver.expected_state = "the-right-state"
    try:
        async with httpx2.AsyncClient() as http:
            stray = await http.get(f"{uri}?code=stolen&state=wrong")
            assert stray.status_code == 400
            other = await http.get(uri.replace("/callback", "/elsewhere"))
            assert other.status_code == 404
            good = await http.get(f"{uri}?code=abc&state=the-right-state&iss=x")
            assert good.status_code == 200 and "Signed in to remote" in good.text
        result = await asyncio.wait_for(receiver.wait(), 5)
        assert (result.code, result.iss) == ("abc", "x")
    finally:
        await receiver.close()


@pytest.mark.anyio
async def test_insufficient_scope_keeps_the_connection_and_the_next_sign_in_asks_for_more(
        no_keyring: Path, oauth_server: OAuthServer) -> None:
    """Step-up: a 403 insufficient_scope fails that call in the server's words, the connection stays ready,
    the card says more access is wanted, and the next sign-in asks for the union of scopes."""
    await sign_in(oauth_server.url, "remote", browser_opens)
    mgr = ServerManager(PluginHost().registry("transports"), Inspector(no_keyring / "inspector"))
    mgr.load({"remote": ServerConfig(url=oauth_server.url)})
    mgr.start_all()
    conn = mgr.get("remote")
    try:
        assert await conn.wait_ready(30), conn.error
        assert conn.info()["auth"] == "signed-in"
        with pytest.raises(ToolCallError, match="needs the admin scope"):
            await conn.call_tool("admin_report", {})
        assert conn.status == "ready" and conn.generation == 1
        assert (await conn.call_tool("whoami", {}))["content"][0]["text"] == "oauth-test says hello"
        assert conn.info()["auth"] == "step-up"

        await sign_in(oauth_server.url, "remote", browser_opens)
        assert set(oauth_server.state()["authorizations"][-1]["scope"].split()) == {"mcp", "admin"}
        assert conn.info()["auth"] == "signed-in"
        await conn.restart()
        assert await conn.wait_ready(30), conn.error
        assert (await conn.call_tool("admin_report", {}))["content"][0]["text"] == "the admin report"
    finally:
        await mgr.stop_all()


@pytest.mark.anyio
async def test_a_server_without_registration_asks_for_a_client_id(no_keyring: Path, oauth_server: OAuthServer) -> None:
    """No dynamic registration: the card says sign in (not a retry loop), the sign-in asks for a client id,
    and one the owner gave works (registered by hand for http://127.0.0.1/callback, any port)."""
    oauth_server.configure(dcr=False)
    mgr = ServerManager(PluginHost().registry("transports"), Inspector(no_keyring / "inspector"))
    mgr.load({"remote": ServerConfig(url=oauth_server.url)})
    mgr.start_all()
    conn = mgr.get("remote")
    try:
        await wait_status(conn, "signin")
        assert "does not let Moka register itself" in (conn.error or "") and "--client-id" in (conn.error or "")
        with pytest.raises(SignInError) as refused:
            await sign_in(oauth_server.url, "remote", browser_opens)
        assert refused.value.needs_client_id and "client id" in str(refused.value)
        httpx2.post(f"{oauth_server.base}/test/preregister", json={"client_id": "given-by-owner"}).raise_for_status()
        await sign_in(oauth_server.url, "remote", browser_opens, client_id="given-by-owner")
        assert oauth_server.state()["authorizations"][-1]["client_id"] == "given-by-owner"
        await conn.restart()
        assert await conn.wait_ready(30), conn.error
        assert oauth_server.state()["registrations"] == []
    finally:
        await mgr.stop_all()


@pytest.mark.anyio
async def test_openid_discovery_is_the_fallback(no_keyring: Path, oauth_server: OAuthServer) -> None:
    """An authorization server that publishes only OpenID Connect discovery metadata still signs in."""
    oauth_server.configure(oidc_only=True)
    result = await sign_in(oauth_server.url, "remote", browser_opens)
    assert result["issuer"] == oauth_server.issuer
    assert oauth_server.state()["oidc_fetched"] is True


@pytest.mark.anyio
async def test_a_server_that_needs_no_sign_in_leaves_no_record(no_keyring: Path) -> None:
    """An open HTTP server connects as before; Moka stores nothing for it and shows no auth state."""
    from support import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell.demo", "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mgr = ServerManager(PluginHost().registry("transports"), Inspector(no_keyring / "inspector"))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx2.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except httpx2.HTTPError:
                await asyncio.sleep(0.1)
        mgr.load({"open": ServerConfig(url=f"http://127.0.0.1:{port}/mcp")})
        mgr.start_all()
        conn = mgr.get("open")
        assert await conn.wait_ready(30), conn.error
        assert conn.info()["auth"] == "signed-out"
        assert not (no_keyring / oauth_store.FILE_NAME).exists()
    finally:
        await mgr.stop_all()
        proc.terminate()
        proc.wait(10)


@pytest.mark.anyio
async def test_a_client_id_metadata_document_is_used_where_the_server_supports_it(
        no_keyring: Path, oauth_server: OAuthServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """With MOKA_OAUTH_CLIENT_METADATA_URL set and CIMD advertised, the URL is the client id: no registration."""
    doc = "https://moka.example/oauth/client.json"
    monkeypatch.setenv("MOKA_OAUTH_CLIENT_METADATA_URL", doc)
    oauth_server.configure(cimd=True)
    await sign_in(oauth_server.url, "remote", browser_opens)
    seen = oauth_server.state()
    assert seen["authorizations"][-1]["client_id"] == doc and seen["registrations"] == []
    monkeypatch.setenv("MOKA_OAUTH_CLIENT_METADATA_URL", "http://not-https.example/x")
    with pytest.raises(SignInError, match="https URL"):
        await sign_in(oauth_server.url, "remote", browser_opens)


@pytest.mark.anyio
async def test_desktop_sign_in_goes_through_the_shells_open_link(tmp_path: Path, oauth_server: OAuthServer) -> None:
    """servers.login in the desktop app hands the authorization URL to the shell (the system browser);
    when the browser comes back the server turns ready; servers.logout brings 'signin' back."""
    from moka_shell.bridge import Bridge
    from moka_shell.testing import EventRecorder, RecordingShell, start_app

    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"remote": {"url": oauth_server.url}}}))
    shell = RecordingShell()
    events = EventRecorder()
    app = await start_app(tmp_path, mode="desktop", actions=shell, events=events, store=False, endpoints=None,
                          ready_within=None)  # the server waits for a sign-in
    bridge = Bridge(app)
    try:
        conn = app.servers.get("remote")
        await wait_status(conn, "signin")
        reply = await bridge.handle({"id": 1, "method": "servers.login", "params": {"name": "remote"}})
        url = reply["result"]["url"]  # type: ignore[index]
        assert shell.links == [url] and "/as/authorize?" in url
        await browser_opens(url)  # the system browser
        await wait_status(conn, "ready")
        assert ("servers.signin", {"name": "remote", "ok": True, "issuer": oauth_server.issuer}) in events
        out = await bridge.handle({"id": 2, "method": "servers.logout", "params": {"name": "remote"}})
        assert out["result"]["signedOut"] and out["result"]["revoked"]  # type: ignore[index]
        await wait_status(conn, "signin")
        assert conn.info()["auth"] == "signed-out"
    finally:
        await app.stop()
        keyring.set_keyring(old)
        oauth_store.use_data_dir(None)
