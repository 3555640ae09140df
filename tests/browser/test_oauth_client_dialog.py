"""Browser mode: the server's Edit dialog sets an OAuth client (issue 29 item 5): a client id and secret
with the client_credentials grant turn a server that answered 401 ready, with the secret kept out of the
config and the page. Before, the dialog had no such fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from browser_support import Moka
from test_oauth_clients import AuthServer, auth_server  # noqa: F401 - the fixture
from test_oauth_signin import no_keyring  # noqa: F401 - the fixture
from moka_shell.core.mcp.oauth.credentials import ClientSecrets
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread


def test_the_edit_dialog_sets_a_client_and_its_secret(tmp_path: Path, browser: Any, auth_server: AuthServer,
                                                      no_keyring: None) -> None:
    paths = Paths(tmp_path / "config.json", tmp_path / "data")
    paths.config_file.write_text(json.dumps({"mcpServers": {"remote": {"url": auth_server.url}}}))
    core = CoreThread(paths, mode="browser")
    core.start()
    moka = Moka(core, browser)
    secret = auth_server.keys()["secrets"]["robot"]
    try:
        conn = core.app.servers.get("remote")  # type: ignore[union-attr]
        moka.wait(lambda: conn.status == "signin", 30, "sign in required")
        page = moka.open("servers")
        card = page.locator('.server-card[data-server="remote"]')
        card.locator('[data-action="edit"]').click()
        page.locator("#server-oauth summary").click()
        page.fill("#server-oauth-client-id", "robot")
        page.fill("#server-oauth-secret", secret)
        page.select_option("#server-oauth-grant", "client_credentials")
        page.screenshot(path=str(tmp_path / "oauth-dialog.png"))
        page.click("#server-add-save")
        card.locator('.status-badge[data-status="ready"]').wait_for(timeout=30000)
        entry = json.loads(paths.config_file.read_text())["mcpServers"]["remote"]
        assert entry["oauth"] == {"grant": "client_credentials", "clientId": "robot", "issuer": auth_server.issuer}
        assert ClientSecrets(auth_server.url).get("clientSecret") == secret
        assert [r["grant_type"] for r in auth_server.state()["token_requests"]] == ["client_credentials"]
        assert not card.locator('[data-action="sign-in"]').count()  # nobody signs in to it
        # Edit again: the secret is not shown, only that one is stored.
        card.locator('[data-action="edit"]').click()
        secret_field = page.locator("#server-oauth-secret")
        assert secret_field.input_value() == "" and "Stored" in (secret_field.get_attribute("placeholder") or "")
        page.screenshot(path=str(tmp_path / "oauth-dialog-stored.png"))
        assert secret not in page.content() and secret not in paths.config_file.read_text()
        assert not [c for c in moka.console if c.startswith(("error", "pageerror"))], moka.console
    finally:
        moka.close()
        core.stop()
