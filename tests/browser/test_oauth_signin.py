"""Browser mode: a server that needs OAuth shows "sign in required"; Sign in (a popup) makes it ready; Sign out undoes it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import keyring
import pytest
from keyring.backends import fail

from browser_support import Moka
from oauth_support import OAuthServer, oauth_server  # noqa: F401 - the fixture
from moka_shell.core.mcp.oauth import store as oauth_store
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """The person's keyring stays untouched: no backend, so tokens go to the data dir's file."""
    old = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        yield
    finally:
        keyring.set_keyring(old)
        oauth_store.use_data_dir(None)


def test_sign_in_button_opens_a_popup_and_the_server_turns_ready(
        tmp_path: Path, browser: Any, oauth_server: OAuthServer, no_keyring: None) -> None:
    paths = Paths(tmp_path / "config.json", tmp_path / "data")
    paths.config_file.write_text(json.dumps({"mcpServers": {"remote": {"url": oauth_server.url}}}))
    core = CoreThread(paths, mode="browser")
    core.start()
    moka = Moka(core, browser)
    try:
        conn = core.app.servers.get("remote")  # type: ignore[union-attr]
        moka.wait(lambda: conn.status == "signin", 30, "sign in required")
        page = moka.open("servers")
        card = page.locator('.server-card[data-server="remote"]')
        card.locator('.status-badge[data-status="signin"]').wait_for(timeout=10000)
        assert card.locator(".status-badge").inner_text().lower() == "sign in required"
        assert "Server returned an error response" not in card.inner_text()
        page.screenshot(path=str(tmp_path / "signin-light.png"))
        moka.call("theme.set", {"mode": "dark"})
        page.wait_for_timeout(300)  # the theme.changed push repaints the page
        page.screenshot(path=str(tmp_path / "signin-dark.png"))
        moka.call("theme.set", {"mode": "light"})

        with page.expect_popup(timeout=20000) as popup_info:
            card.locator('[data-action="sign-in"]').click()
        popup = popup_info.value
        # The popup goes to the authorization server, which sends it back to Moka's loopback receiver.
        popup.wait_for_url("http://127.0.0.1:*/callback?*", timeout=20000)
        card.locator('.status-badge[data-status="ready"]').wait_for(timeout=30000)
        assert conn.status == "ready" and "whoami" in conn.tools
        moka.wait(popup.is_closed, 10, "the receiver's page to close its window")
        assert card.locator('[data-action="sign-out"]').is_visible()
        page.screenshot(path=str(tmp_path / "signed-in-light.png"))
        seen = oauth_server.state()
        assert seen["authorizations"][-1]["resource"] == oauth_server.url
        assert seen["authorizations"][-1]["code_challenge_method"] == "S256"

        card.locator('[data-action="sign-out"]').click()
        card.locator('.status-badge[data-status="signin"]').wait_for(timeout=30000)
        assert card.locator('[data-action="sign-in"]').is_visible()
        assert not oauth_store.OAuthStore(oauth_server.url).signed_in()
        assert oauth_server.state()["revoked"], "sign out revokes the tokens at the server"

        secrets = oauth_server.secrets()
        assert secrets
        files = [p for p in (tmp_path / "data").rglob("*") if p.is_file() and p.name != "oauth-tokens.json"]
        assert any(p.name.startswith("moka.sqlite3") for p in files)  # the database exists and is checked
        blobs = [p.read_bytes().decode("latin-1") for p in files] + moka.console + [page.content()]
        assert [s for s in secrets if any(s in b for b in blobs)] == []
        assert not [c for c in moka.console if c.startswith(("error", "pageerror"))], moka.console
    finally:
        moka.close()
        core.stop()


def test_a_server_without_registration_asks_for_a_client_id_on_the_card(
        tmp_path: Path, browser: Any, oauth_server: OAuthServer, no_keyring: None) -> None:
    """Sign in on a server with no dynamic registration opens the Client ID dialog; the id signs in."""
    oauth_server.configure(dcr=False)
    httpx2.post(f"{oauth_server.base}/test/preregister", json={"client_id": "given-by-owner"}).raise_for_status()
    paths = Paths(tmp_path / "config.json", tmp_path / "data")
    paths.config_file.write_text(json.dumps({"mcpServers": {"remote": {"url": oauth_server.url}}}))
    core = CoreThread(paths, mode="browser")
    core.start()
    moka = Moka(core, browser)
    try:
        conn = core.app.servers.get("remote")  # type: ignore[union-attr]
        moka.wait(lambda: conn.status == "signin", 30, "sign in required")
        page = moka.open("servers")
        card = page.locator('.server-card[data-server="remote"]')
        card.locator('[data-action="sign-in"]').click()
        dialog = page.locator("#sign-in-client-dialog")
        dialog.wait_for(timeout=20000)
        assert "does not let Moka register itself" in dialog.inner_text()
        page.screenshot(path=str(tmp_path / "client-id-dialog.png"))
        page.fill("#sign-in-client-id", "given-by-owner")
        with page.expect_popup(timeout=20000) as popup_info:
            page.click("#sign-in-client-go")
        popup_info.value.wait_for_url("http://127.0.0.1:*/callback?*", timeout=20000)
        card.locator('.status-badge[data-status="ready"]').wait_for(timeout=30000)
        assert oauth_server.state()["authorizations"][-1]["client_id"] == "given-by-owner"
        assert oauth_server.state()["registrations"] == []
    finally:
        moka.close()
        core.stop()
