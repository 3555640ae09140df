"""Edits of a server's config entry (core/server_configs.py): one meaning of "replace" for the UI and the CLI."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.server_configs import ServerConfigs, replaced
from moka_shell.errors import InvalidParamsError, ServerExistsError, UnknownServerError
from moka_shell.paths import Paths
from moka_shell.testing import start_app


def moka_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `moka` CLI in a process of its own, on this config file."""
    env = {**os.environ, "MOKA_CONFIG": str(config), "MOKA_DATA_DIR": str(config.parent / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def starting_config(root: Path) -> dict[str, Any]:
    """A server with every setting an editor does not show, set away from its default."""
    return {"mcpServers": {"tool": {
        "command": "node", "args": ["old.js"], "env": {"OLD": "1"}, "cwd": str(root),
        "disabled": True, "timeout": 12, "useInstructions": False, "allowUnsafeEval": True,
        "logLevel": "debug", "roots": [str(root)], "madeUpByAPlugin": {"x": 1}}}}


STDIO_EDIT = {"command": "node", "args": ["new.js", "--flag"], "env": {"NEW": "2"}}


async def edit_in_the_ui(folder: Path, config: dict[str, Any], edit: dict[str, Any] = STDIO_EDIT) -> dict[str, Any]:
    """What the Edit dialog sends (js/servers/dialog.js read()), through the bridge of a real app."""
    paths = Paths(folder / "config.json", folder / "data")
    paths.config_file.write_text(json.dumps(config))
    app = await start_app(paths, store=False, endpoints=None, ready_within=None)
    try:
        reply = await Bridge(app).handle({"id": 1, "method": "servers.add", "params": {
            "name": "tool", "replace": True, "config": edit}})
        assert "error" not in reply, reply
    finally:
        await app.stop()
    entry: dict[str, Any] = json.loads(paths.config_file.read_text())["mcpServers"]["tool"]
    return entry


@pytest.mark.anyio
async def test_cli_replace_and_the_ui_edit_give_the_same_entry(tmp_path: Path) -> None:
    """Issue 25 item 3: `moka servers add --replace` overwrote the whole entry while the UI kept the settings."""
    start = starting_config(tmp_path)
    (tmp_path / "cli").mkdir()
    cli_config = tmp_path / "cli" / "config.json"
    cli_config.write_text(json.dumps(start))
    done = await asyncio.to_thread(moka_cli, cli_config, "servers", "add", "tool", "--replace", "--env", "NEW=2",
                                   "--", "node", "new.js", "--flag")
    assert done.returncode == 0, done.stderr
    by_cli = json.loads(cli_config.read_text())["mcpServers"]["tool"]
    (tmp_path / "ui").mkdir()
    by_ui = await edit_in_the_ui(tmp_path / "ui", start)
    assert by_cli == by_ui
    kept = {k: v for k, v in start["mcpServers"]["tool"].items() if k not in ("command", "args", "env", "cwd")}
    assert by_ui == {"command": "node", "args": ["new.js", "--flag"], "env": {"NEW": "2"}, **kept}


URL = "http://127.0.0.1:9/mcp"


@pytest.mark.anyio
@pytest.mark.parametrize(("entry", "cli", "ui", "expected"), [
    # The bridge may be sent `type: "http"` for a URL (the dialog's configFrom did so); the CLI sends none.
    ({"type": "http", "url": URL, "trustAnnotations": True, "disabled": True},
     ["--url", URL], {"type": "http", "url": URL},
     {"type": "http", "url": URL, "trustAnnotations": True, "disabled": True}),
    ({"url": URL, "trustAnnotations": True},
     ["--url", URL], {"type": "http", "url": URL},
     {"url": URL, "trustAnnotations": True}),
    ({"type": "streamable-http", "url": URL, "trustAnnotations": True},
     ["--url", URL, "--header", "X-Key=1"], {"type": "http", "url": URL, "headers": {"X-Key": "1"}},
     {"type": "streamable-http", "url": URL, "headers": {"X-Key": "1"}, "trustAnnotations": True}),
    # Legacy HTTP+SSE: the dialog shows a plugin/other transport's type and sends it; the CLI gives --type.
    ({"type": "sse", "url": URL, "trustAnnotations": True},
     ["--url", URL, "--type", "sse"], {"type": "sse", "url": URL},
     {"type": "sse", "url": URL, "trustAnnotations": True}),
    # Another URL is another server: trust is not brought along, by either surface.
    ({"type": "http", "url": URL, "trustAnnotations": True, "timeout": 5},
     ["--url", URL + "/other"], {"type": "http", "url": URL + "/other"},
     {"type": "http", "url": URL + "/other", "timeout": 5}),
    # SSE to streamable HTTP on the same URL is another transport: its type goes, and the trust with it.
    ({"type": "sse", "url": URL, "trustAnnotations": True},
     ["--url", URL], {"url": URL},  # the dialog's Remote choice with its type field cleared
     {"url": URL}),
], ids=["http", "url-without-type", "streamable-http-spelling", "sse", "other-url", "sse-to-http"])
async def test_cli_replace_and_the_ui_edit_give_the_same_entry_for_a_url(
        tmp_path: Path, entry: dict[str, Any], cli: list[str], ui: dict[str, Any], expected: dict[str, Any]) -> None:
    """`same_server` compared the raw `type` (None from the CLI, "http" from the dialog): replacing an HTTP
    entry with the same URL, the CLI dropped its `type` and `trustAnnotations` while the UI kept both."""
    start = {"mcpServers": {"tool": entry}}
    (tmp_path / "cli").mkdir()
    cli_config = tmp_path / "cli" / "config.json"
    cli_config.write_text(json.dumps(start))
    done = await asyncio.to_thread(moka_cli, cli_config, "servers", "add", "tool", "--replace", *cli)
    assert done.returncode == 0, done.stderr
    by_cli = json.loads(cli_config.read_text())["mcpServers"]["tool"]
    (tmp_path / "ui").mkdir()
    by_ui = await edit_in_the_ui(tmp_path / "ui", start, ui)
    assert by_cli == by_ui == expected


def test_replace_sets_the_connection_and_keeps_the_settings() -> None:
    """A field of the connection the new entry lacks is gone (stdio → HTTP drops command and env)."""
    old = ServerConfig.model_validate({"command": "node", "env": {"A": "1"}, "disabled": True, "logLevel": "error"})
    new = replaced(old, ServerConfig(url="http://127.0.0.1:9/mcp"))
    assert new.to_json() == {"url": "http://127.0.0.1:9/mcp", "disabled": True, "logLevel": "error"}
    assert replaced(None, new) == new


def test_the_service_saves_each_edit_and_says_what_is_wrong() -> None:
    """add refuses a taken name, change refuses connection fields, remove names what exists; each edit saves."""
    saves: list[dict[str, Any]] = []
    config = MokaConfig()
    running = {"ghost"}
    configs = ServerConfigs(config, lambda: saves.append(config.to_json()), in_use=running.__contains__)
    configs.add("a", ServerConfig(command="node"), taken_hint="pick another")
    with pytest.raises(ServerExistsError, match="already exists") as err:
        configs.add("a", ServerConfig(command="other"), taken_hint="pick another")
    assert err.value.hint == "pick another"
    with pytest.raises(ServerExistsError):  # running, though not in the config
        configs.add("ghost", ServerConfig(command="node"), taken_hint="-")
    with pytest.raises(InvalidParamsError, match="needs a name"):
        configs.add("  ", ServerConfig(command="node"), taken_hint="-")
    assert configs.change("a", disabled=True, allowUnsafeEval=True).to_json() == {
        "command": "node", "disabled": True, "allowUnsafeEval": True}
    assert configs.change("a", disabled=False).to_json() == {"command": "node", "allowUnsafeEval": True}
    with pytest.raises(InvalidParamsError, match="command change by replacing"):
        configs.change("a", command="evil")
    with pytest.raises(UnknownServerError):
        configs.change("nope", disabled=True)
    imported = configs.add_new({"a": ServerConfig(command="x"), "b": ServerConfig(command="y")})
    assert imported.added == ["b"] and imported.skipped == [("a", "a server with this name already exists")]
    assert configs.remove("a") is not None and configs.remove("ghost") is None
    with pytest.raises(UnknownServerError):
        configs.remove("a")
    assert list(saves[-1]["mcpServers"]) == ["b"] and len(saves) == 5


def test_trust_in_a_servers_annotations_stays_with_that_server() -> None:
    """G3: trustAnnotations is kept while the server is reached as before, dropped when it points elsewhere,
    never brought by an import, and set and cleared by `change`."""
    old = ServerConfig.model_validate({"command": "node", "args": ["srv.js"], "env": {"A": "1"},
                                       "trustAnnotations": True, "disabled": True})
    same = replaced(old, ServerConfig(command="node", args=["srv.js"], env={"A": "2"}))  # only its env changed
    assert same.trust_annotations is True and same.disabled
    moved = replaced(old, ServerConfig(command="node", args=["other.js"]))  # another program
    assert moved.trust_annotations is None and moved.disabled and not moved.annotations_trusted
    said = replaced(old, ServerConfig(command="node", args=["other.js"], trustAnnotations=True))  # the editor says so
    assert said.trust_annotations is True
    config = MokaConfig()
    configs = ServerConfigs(config, lambda: None)
    done = configs.add_new({"imported": ServerConfig(command="x", trustAnnotations=True)})
    assert done.added == ["imported"] and not configs.get("imported").annotations_trusted
    assert "trustAnnotations" not in configs.get("imported").to_json()
    assert configs.change("imported", trustAnnotations=True).annotations_trusted
    assert configs.change("imported", trustAnnotations=None).to_json() == {"command": "x"}


def test_moka_servers_trust_and_list(tmp_path: Path) -> None:
    """`moka servers trust NAME [--off]` sets trustAnnotations; `servers list` says which servers' hints count."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {"mine": {"command": "node", "args": ["x.js"]},
                                                 "moka-demo": {"command": "moka", "args": ["demo-server"]}}}))
    listed = moka_cli(config, "servers", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {r["name"]: r["trustsAnnotations"] for r in json.loads(listed.stdout)} == {"mine": False, "moka-demo": True}
    done = moka_cli(config, "servers", "trust", "mine")
    assert done.returncode == 0 and "read-only run without asking" in done.stdout
    assert json.loads(config.read_text())["mcpServers"]["mine"]["trustAnnotations"] is True
    assert "trusts hints" in moka_cli(config, "servers", "list").stdout.splitlines()[0]
    assert moka_cli(config, "servers", "trust", "mine", "--off").returncode == 0
    assert json.loads(config.read_text())["mcpServers"]["mine"]["trustAnnotations"] is False
    missing = moka_cli(config, "servers", "trust", "nope")
    assert missing.returncode == 1 and "nope" in missing.stderr
    added = moka_cli(config, "servers", "add", "other", "--trust-annotations", "--", "node", "y.js")
    assert added.returncode == 0 and json.loads(config.read_text())["mcpServers"]["other"]["trustAnnotations"] is True
