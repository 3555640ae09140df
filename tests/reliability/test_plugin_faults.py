"""Plugins isolated in time and checked at registration (findings R4.5, R4.6, R4.7): a plugin that blocks
is named and skipped, Moka starts, answers and stops on SIGTERM; a theme of the wrong types is rejected,
and a theme that fails at use is never saved."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from serve_driver import Serve
from moka_shell import hookimpl
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.demo.server import build_server
from moka_shell.errors import InvalidParamsError
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import RecordingShell, start_app
from moka_shell.testing.memory import InMemoryTransport

BLOCKS = '''
import threading, time
from moka_shell import hookimpl
# Waits on something that never comes: time.sleep(10**6) would do the same.
NEVER = threading.Event()

@hookimpl
def {hook}({args}):
    NEVER.wait()
'''


def fake_dist(site: Path, dist: str, module: str, code: str) -> None:
    """A package and its .dist-info with a `moka` entry point, as pip lays them out."""
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(code)
    info = site / f"{dist.replace('-', '_')}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[moka]\n{module} = {module}\n")


def env_with(site: Path, dists: str) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
            "MOKA_LOAD_PLUGINS": dists, "MOKA_HOOK_TIMEOUT": "1"}


def test_a_registration_hook_that_blocks_does_not_hang_moka_plugins(tmp_path: Path) -> None:
    """`moka plugins` returns, names the blocked plugin, and lists the built-ins (R4.6)."""
    site = tmp_path / "site"
    fake_dist(site, "moka-stuck-themes", "stuck_themes", BLOCKS.format(hook="register_themes", args="register"))
    done = subprocess.run([sys.executable, "-m", "moka_shell", "plugins", "--json"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **env_with(site, "moka-stuck-themes")})
    assert done.returncode == 0, done.stderr
    infos = {p["name"]: p for p in json.loads(done.stdout)}
    assert infos["stuck_themes"]["blocked"] is True
    assert "blocked in register_themes: did not return within 1 s" in infos["stuck_themes"]["error"]
    assert infos["moka.themes"]["error"] is None
    text = subprocess.run([sys.executable, "-m", "moka_shell", "plugins"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **env_with(site, "moka-stuck-themes")})
    assert "blocked in register_themes" in text.stdout and "(skipped)" in text.stdout


def test_a_startup_hook_that_blocks_leaves_moka_serving_and_stoppable(tmp_path: Path) -> None:
    """`moka serve` prints its URL, answers app.info naming the plugin, and exits on SIGTERM (R4.6)."""
    site = tmp_path / "site"
    fake_dist(site, "moka-stuck-start", "stuck_start", BLOCKS.format(hook="moka_startup", args="app"))
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {}}))
    serve = Serve(tmp_path / "config.json", tmp_path / "data", env=env_with(site, "moka-stuck-start"))
    try:
        serve.wait_url()
        info = serve.rpc("app.info")["result"]
        assert any("stuck_start" in p and "blocked in moka_startup" in p for p in info["problems"]), info
        assert "result" in serve.rpc("servers.list")
        # `moka plugins` (another process) names what blocked in the running Moka.
        listed = subprocess.run([sys.executable, "-m", "moka_shell", "--config", str(tmp_path / "config.json"),
                                 "--data-dir", str(tmp_path / "data"), "plugins", "--json"], capture_output=True,
                                text=True, timeout=60, env={**os.environ, **env_with(site, "moka-stuck-start")})
        infos = {p["name"]: p for p in json.loads(listed.stdout)}
        assert infos["stuck_start"]["blocked"] is True
        assert "in the running Moka: blocked in moka_startup" in infos["stuck_start"]["error"]
    finally:
        assert serve.terminate() == 0, serve.errors


async def started(paths: Paths, *plugins: Any, shell: RecordingShell | None = None) -> MokaApp:
    """A started MokaApp with the demo server in memory, these plugins, and short hook deadlines."""
    host = PluginHost(load_entrypoints=False, extra=[InMemoryTransport(build_server).plugin(), *plugins],
                      hook_timeout=0.5, decision_timeout=0.5)
    app = await start_app(paths, config=MokaConfig(mcpServers={"moka-demo": ServerConfig(type="memory")}),
                          plugins=host, actions=shell, store=False, ready_within=10)
    return app


async def initialize(app: MokaApp, view_id: str) -> dict[str, Any]:
    reply = await app.view_host.dispatcher.handle(view_id, {
        "jsonrpc": "2.0", "id": 0, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    assert reply is not None and "result" in reply, reply
    await app.view_host.dispatcher.handle(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    return dict(reply["result"])


class Stuck:
    """Blocks the calling thread in consent and host-context hooks until released."""

    __name__ = "stuck"

    def __init__(self) -> None:
        import threading

        self.release = threading.Event()
        self.calls: list[str] = []

    @hookimpl
    def moka_consent(self, action: str) -> bool | None:
        """Never answers (until the test ends)."""
        self.calls.append(action)
        self.release.wait()
        return True

    @hookimpl
    def moka_host_context(self, tool: str) -> dict[str, Any] | None:
        """Never answers either."""
        self.calls.append("context")
        self.release.wait()
        return {"stuck": True}


@pytest.mark.anyio
async def test_consent_and_host_context_hooks_that_block_never_freeze_the_core_loop(paths: Paths) -> None:
    """While the hooks block, tool calls are answered; then the plugin is skipped and the setting decides (R4.7)."""
    stuck = Stuck()
    shell = RecordingShell()
    app = await started(paths, stuck, shell=shell)
    app.config.consent.open_link = "allow"
    demo = app.servers.get("moka-demo")
    try:
        async def meanwhile() -> list[str]:
            out = []
            for i in range(5):  # the loop is free: these run while the plugin's thread is stuck
                out.append((await demo.call_tool("roll_dice", {"sides": 6, "count": 1}))["content"][0]["text"])
                await asyncio.sleep(0.02)
            return out

        view_task = asyncio.ensure_future(app.view_host.open_view("moka-demo", "open_playground"))
        rolls = await meanwhile()
        view = await view_task
        assert view is not None and len(rolls) == 5 and all("Rolled" in r for r in rolls)
        assert "stuck" not in (await initialize(app, view.id))["hostContext"]
        info = app.plugins.infos["stuck"]
        assert info.blocked and "blocked in moka_host_context" in (info.error or "")
        # Blocked once, skipped from then on: the setting decides, and nobody waits on the plugin.
        reply = await app.view_host.dispatcher.handle(view.id, {
            "jsonrpc": "2.0", "id": 1, "method": "ui/open-link", "params": {"url": "https://example.org/"}})
        assert reply is not None and reply["result"] == {} and shell.links == ["https://example.org/"]
        assert stuck.calls == ["context"]
    finally:
        stuck.release.set()
        await app.stop()


@pytest.mark.anyio
async def test_a_consent_hook_that_blocks_is_named_and_the_request_still_answered(paths: Paths) -> None:
    """The first consent call waits out the deadline only; the request is answered by the setting (R4.7)."""
    stuck = Stuck()

    class OnlyConsent:
        __name__ = "slow-consent"

        @hookimpl
        def moka_consent(self, action: str) -> bool | None:
            """Blocks like Stuck.moka_consent."""
            return Stuck.moka_consent(stuck, action)

    app = await started(paths, OnlyConsent())
    app.config.consent.open_link = "deny"
    try:
        view = await app.view_host.open_view("moka-demo", "open_playground")
        assert view is not None
        await initialize(app, view.id)
        roll = asyncio.ensure_future(app.servers.get("moka-demo").call_tool("roll_dice", {}))
        reply = await app.view_host.dispatcher.handle(view.id, {
            "jsonrpc": "2.0", "id": 1, "method": "ui/open-link", "params": {"url": "https://example.org/"}})
        assert reply is not None and reply["result"] == {"isError": True}  # the "deny" setting decided
        assert "Rolled" in (await roll)["content"][0]["text"]
        assert "blocked in moka_consent" in (app.plugins.infos["slow-consent"].error or "")
    finally:
        stuck.release.set()
        await app.stop()


def test_a_consent_hook_that_blocks_leaves_moka_serve_answering_sigterm(tmp_path: Path) -> None:
    """A real `moka serve` whose consent plugin never returns: servers.list answers, SIGTERM stops it (R4.7)."""
    site = tmp_path / "site"
    fake_dist(site, "moka-stuck-consent", "stuck_consent", BLOCKS.format(hook="moka_consent", args="action"))
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {
        "moka-demo": {"command": sys.executable, "args": ["-m", "moka_shell", "demo-server"]}}}))
    serve = Serve(tmp_path / "config.json", tmp_path / "data", env=env_with(site, "moka-stuck-consent"))
    try:
        serve.wait_url()
        deadline = time.monotonic() + 60
        while serve.rpc("servers.list")["result"][0]["status"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.1)
        run = serve.rpc("tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
        view_id = run["result"]["viewId"]
        init = {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
            "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}}
        serve.rpc("view.rpc", {"viewId": view_id, "message": init})
        serve.rpc("view.rpc", {"viewId": view_id, "message": {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}})
        link = serve.rpc("view.rpc", {"viewId": view_id, "message": {
            "jsonrpc": "2.0", "id": 1, "method": "ui/open-link", "params": {"url": "https://example.org/"}}})
        assert "reply" in link["result"]
        assert serve.rpc("servers.list")["result"][0]["status"] == "ready"
    finally:
        assert serve.terminate() == 0, serve.errors


class ListTheme:
    theme_id = "wrongtheme"
    label = "Wrong"

    def variables(self, mode: str) -> Any:
        return ["--color-background-primary", "#000"]

    def ui_variables(self, mode: str) -> dict[str, str]:
        return {}


class FailsLater:
    """Passes registration, then raises when used (it counts calls)."""

    theme_id = "flaky"
    label = "Flaky"

    def __init__(self) -> None:
        self.calls = 0

    def variables(self, mode: str) -> dict[str, str]:
        self.calls += 1
        if self.calls > 2:
            raise RuntimeError("the theme's data went away")
        return {"--color-background-primary": "#101010"}

    def ui_variables(self, mode: str) -> dict[str, str]:
        return {}


class Sideways:
    mode_id = "sideways"
    wire_mode = "sideways"
    label = "Sideways"
    fixed_size = False
    opens_window = False


class Themes:
    __name__ = "bad-themes"

    @hookimpl
    def register_themes(self, register: Any) -> None:
        """A theme of the wrong types and one that breaks later."""
        register(ListTheme())
        register(FailsLater())

    @hookimpl
    def register_display_modes(self, register: Any) -> None:
        """A display mode with a wire mode no view knows."""
        register(Sideways())


@pytest.mark.anyio
async def test_wrong_types_are_rejected_at_registration_and_a_failing_theme_is_never_saved(tmp_path: Path) -> None:
    """The list theme and the sideways mode are refused; theme.set of a theme that fails keeps the file (R4.5)."""
    from moka_shell.bridge import Bridge

    paths = Paths(tmp_path / "config.json", tmp_path / "data")
    paths.config_file.write_text(json.dumps({"mcpServers": {}}))
    app = MokaApp(paths, plugins=PluginHost(load_entrypoints=False, extra=[Themes()]))
    assert "wrongtheme" not in app.themes and "sideways" not in app.display_modes
    error = app.plugins.infos["bad-themes"].error or ""
    assert "'wrongtheme' was rejected: variables('light') returned list" in error
    assert "'sideways' was rejected: wire_mode 'sideways' is not one of inline, fullscreen, pip" in error
    await app.start(store=False)
    try:
        before = paths.config_file.read_bytes()
        with pytest.raises(InvalidParamsError, match="could not be applied .*the previous theme stays"):
            app.appearance.set(theme_id="flaky")
        assert paths.config_file.read_bytes() == before and app.config.theme.theme_id == "moka"
        via_settings = await Bridge(app).handle({"id": 2, "method": "settings.set",
                                                 "params": {"key": "theme.themeId", "value": "flaky"}})
        assert via_settings is not None and "could not be applied" in via_settings["error"]["message"]
        assert paths.config_file.read_bytes() == before and app.config.theme.theme_id == "moka"
        hello = await Bridge(app).handle({"id": 1, "method": "app.hello"})
        assert hello is not None and hello["result"]["theme"]["themeId"] == "moka", hello
    finally:
        await app.stop()
