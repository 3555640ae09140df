"""Plugins: built-ins through the same hooks, installed distributions through entry points,
broken plugins reported and skipped, MOKA_LOAD_PLUGINS, and one `test_hook_<name>` per hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from moka_shell import (AgentRequest, BaseBackend, Done, PluginApp, RegisterBackend, RegisterDisplayMode, RegisterTheme,
                        TextDelta)
from moka_shell import hookimpl, hookspecs
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import RecordingShell, start_app
from moka_shell.testing.memory import InMemoryTransport

GOOD = '''
from moka_shell import hookimpl

class Sepia:
    theme_id = "sepia"
    label = "Sepia"
    def variables(self, mode):
        return {"--color-background-primary": "#f4ecd8", "--not-standard": "dropped"}
    def ui_variables(self, mode):
        return {}

@hookimpl
def register_themes(register):
    register(Sepia())
'''

RAISES = '''
from moka_shell import hookimpl

@hookimpl
def register_display_modes(register):
    raise RuntimeError("boom in the hook")
'''

BAD_IMPORT = "import this_module_does_not_exist_anywhere\n"

MISSPELT = '''
from moka_shell import hookimpl

@hookimpl
def register_theme(register):  # the hook is register_themes
    raise AssertionError("never called")
'''


def install_fake_dist(site: Path, dist: str, module: str, code: str, version: str = "1.2.3") -> None:
    """Lay out a package and its .dist-info exactly as pip would, entry point included."""
    (site / module).mkdir(parents=True)
    (site / module / "__init__.py").write_text(code)
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[moka]\n{module.removeprefix('moka_')} = {module}\n")


@pytest.fixture
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    install_fake_dist(site, "moka-sepia", "moka_sepia", GOOD)
    install_fake_dist(site, "moka-raises", "moka_raises", RAISES, "0.1")
    install_fake_dist(site, "moka-badimport", "moka_badimport", BAD_IMPORT, "0.2")
    install_fake_dist(site, "moka-misspelt", "moka_misspelt", MISSPELT, "0.3")
    return site


def run_moka(site: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
                **(env or {})}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True,
                          env=full_env, timeout=60)


def test_moka_plugins_lists_builtins_and_installed(site: Path) -> None:
    """`moka plugins` shows every plugin with version, kind and hooks, and why a broken one was skipped."""
    proc = run_moka(site, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    infos = {p["name"]: p for p in json.loads(proc.stdout)}
    assert infos["moka.transports"]["builtin"] and infos["moka.transports"]["hooks"] == ["register_transports"]
    assert infos["sepia"]["version"] == "1.2.3" and not infos["sepia"]["builtin"]
    assert infos["sepia"]["hooks"] == ["register_themes"] and infos["sepia"]["error"] is None
    assert "boom in the hook" in infos["raises"]["error"]
    assert "this_module_does_not_exist_anywhere" in infos["badimport"]["error"]
    assert "unknown hook 'register_theme'" in infos["misspelt"]["error"]
    assert infos["misspelt"]["hooks"] == ["register_theme"] and infos["misspelt"]["version"] == "0.3"
    text = run_moka(site, "plugins").stdout
    assert "(skipped)" in text and "sepia" in text


def test_broken_plugins_do_not_stop_moka(site: Path) -> None:
    """With broken plugins installed, Moka still lists and calls tools."""
    proc = run_moka(site, "call", "moka-demo", "roll_dice", '{"sides": 4, "count": 2}')
    assert proc.returncode == 0, proc.stderr
    assert "Rolled 2d4" in proc.stdout


def test_moka_load_plugins_limits_what_loads(site: Path) -> None:
    """MOKA_LOAD_PLUGINS names the distributions to load; others are not even imported."""
    proc = run_moka(site, "plugins", "--json", env={"MOKA_LOAD_PLUGINS": "moka-sepia"})
    names = {p["name"] for p in json.loads(proc.stdout)}
    assert "sepia" in names and not {"raises", "badimport", "misspelt"} & names
    proc = run_moka(site, "plugins", "--json", env={"MOKA_LOAD_PLUGINS": ""})
    assert {p["name"] for p in json.loads(proc.stdout)} == {n for n in names if n.startswith("moka.")}


def test_registration_isolates_a_raising_plugin() -> None:
    """A plugin that raises in one hook is recorded; the built-ins' registrations survive."""

    class Raises:
        __name__ = "raises"

        @hookspecs.hookimpl
        def register_display_modes(self, register):  # type: ignore[no-untyped-def]
            raise ValueError("nope")

    host = PluginHost(load_entrypoints=False, extra=[Raises()])
    modes = host.registry("display_modes")
    assert {"inline", "fullscreen", "pip", "popout"} <= set(modes)
    assert "nope" in (host.infos["raises"].error or "")


def test_duplicate_ids_keep_the_first_and_report_the_second() -> None:
    """Two plugins registering the same id: the first wins, the second is reported."""

    class Dup:
        __name__ = "dup"

        @hookspecs.hookimpl
        def register_transports(self, register):  # type: ignore[no-untyped-def]
            register(type("T", (), {"transport_id": "stdio", "open": lambda self, config, errlog: None})())

    host = PluginHost(load_entrypoints=False, extra=[Dup()])
    transports = host.registry("transports")
    assert transports["stdio"].plugin == "moka.transports"
    assert "already registered" in (host.infos["dup"].error or "")


def test_every_hook_has_a_docstring() -> None:
    """Each hook spec documents itself (docs/plugins.md builds on these)."""
    for name in dir(hookspecs):
        fn = getattr(hookspecs, name)
        if callable(fn) and getattr(fn, "moka_spec", None) is not None:
            assert fn.__doc__ and len(fn.__doc__.strip()) > 20, name


def test_an_unknown_hook_is_an_error_and_the_plugin_is_skipped() -> None:
    """check_pending: a hook no spec knows is reported for that plugin, which then registers nothing."""

    class Typo:
        __name__ = "typo"

        @hookimpl
        def register_theme(self, register: RegisterTheme) -> None:
            """Misspelt: the hook is register_themes."""

        @hookimpl
        def register_display_modes(self, register: RegisterDisplayMode) -> None:
            """Valid, but the plugin is skipped as a whole."""
            register(type("Big", (), {"mode_id": "big", "wire_mode": "fullscreen", "label": "Big",
                                      "fixed_size": True, "opens_window": False})())

    host = PluginHost(load_entrypoints=False, extra=[Typo()])
    assert "unknown hook 'register_theme'" in (host.infos["typo"].error or "")
    assert "big" not in host.registry("display_modes")
    assert [e.plugin for e in host.broken()] == ["typo"]


def test_an_object_breaking_the_contract_is_reported() -> None:
    """A registered object must satisfy its registry's Protocol; the message names what is missing."""

    class Half:
        __name__ = "half"

        @hookimpl
        def register_themes(self, register: RegisterTheme) -> None:
            """A theme without variables() or ui_variables()."""
            register(type("Grey", (), {"theme_id": "grey", "label": "Grey"})())  # type: ignore[arg-type]

    host = PluginHost(load_entrypoints=False, extra=[Half()])
    assert "grey" not in host.registry("themes")
    assert "not a ThemeProvider (missing ui_variables, variables)" in (host.infos["half"].error or "")


def test_trace_shows_each_hook_call(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """MOKA_TRACE_PLUGINS prints every call and its outcome to stderr."""
    monkeypatch.setenv("MOKA_TRACE_PLUGINS", "1")
    host = PluginHost(load_entrypoints=False)
    host.first_result("moka_consent", action="open_link", server="s", detail={})
    host.registry("display_modes")
    err = capsys.readouterr().err
    assert "moka.display_modes.register_display_modes(register='<callback>')" in err
    assert "moka.display_modes.register_display_modes -> [" in err


# ---- one test per hook (test_every_hook_has_a_test checks the names) ----------------------------


async def running(paths: Paths, *plugins: Any, shell: RecordingShell | None = None) -> MokaApp:
    """A started MokaApp with the demo server in memory, and only these plugins besides the built-ins."""
    host = PluginHost(load_entrypoints=False, extra=[InMemoryTransport(build_server).plugin(), *plugins])
    app = await start_app(paths, config=MokaConfig(mcpServers={"moka-demo": ServerConfig(type="memory")}),
                          plugins=host, actions=shell, store=False, ready_within=10)
    assert not host.broken(), host.broken()
    return app


async def handshake(app: MokaApp, view_id: str) -> dict[str, Any]:
    """ui/initialize then initialized, as a view does; returns the initialize result."""
    reply = await app.view_host.dispatcher.handle(view_id, {
        "jsonrpc": "2.0", "id": 0, "method": "ui/initialize",
        "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    assert reply is not None and "result" in reply, reply
    await app.view_host.dispatcher.handle(view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    return reply["result"]


@pytest.mark.anyio
async def test_hook_register_transports(paths: Paths) -> None:
    """A transport registered by a plugin is the one a server of its `type` connects through."""
    memory = InMemoryTransport(build_server, "in-process")
    app = await start_app(paths, config=MokaConfig(mcpServers={"demo": ServerConfig(type="in-process")}),
                          plugins=PluginHost(load_entrypoints=False, extra=[memory.plugin()]), store=False,
                          endpoints=None, ready_within=10)
    try:
        assert app.servers.get("demo").status == "ready" and memory.opened == 1
    finally:
        await app.stop()


@pytest.mark.anyio
async def test_hook_register_agent_backends(paths: Paths) -> None:
    """A plugin's backend answers the chat, imported only from `moka_shell`."""

    class Hello(BaseBackend):
        backend_id = "hello"
        display_name = "Hello"
        default_model = "hello-1"

        async def stream(self, request: AgentRequest) -> AsyncIterator[Any]:
            """Always says hello."""
            yield TextDelta(text="hello")
            yield Done(stop_reason="end_turn")

    class Plugin:
        __name__ = "hello"

        @hookimpl
        def register_agent_backends(self, register: RegisterBackend) -> None:
            """Add the hello backend."""
            register(Hello())

    app = await running(paths, Plugin())
    try:
        assert app.backends["hello"].plugin == "hello"
    finally:
        await app.stop()
    events = [e async for e in app.backends["hello"].obj.stream(AgentRequest(model="hello-1", messages=[]))]
    assert events == [TextDelta(text="hello"), Done(stop_reason="end_turn")]


def test_hook_register_themes(site: Path) -> None:
    """An installed theme is listed by `moka plugins` with its hook (the Sepia plugin in the fixture)."""
    host_env = {"MOKA_LOAD_PLUGINS": "moka-sepia"}
    proc = run_moka(site, "plugins", "--json", env=host_env)
    assert {p["name"]: p for p in json.loads(proc.stdout)}["sepia"]["hooks"] == ["register_themes"]


@pytest.mark.anyio
async def test_hook_register_display_modes(paths: Paths) -> None:
    """A plugin's display mode is offered to views, under the wire mode it names."""

    class Plugin:
        __name__ = "big"

        @hookimpl
        def register_display_modes(self, register: RegisterDisplayMode) -> None:
            """Add a fullscreen variant."""
            register(type("Big", (), {"mode_id": "big", "wire_mode": "fullscreen", "label": "Big",
                                      "fixed_size": True, "opens_window": False})())

    app = await running(paths, Plugin())
    try:
        assert app.display_modes["big"].plugin == "big"
        assert "fullscreen" in app.view_host.available_wire_modes()
    finally:
        await app.stop()


@pytest.mark.anyio
async def test_hook_moka_startup(paths: Paths) -> None:
    """moka_startup runs once, after the servers were loaded and started connecting."""
    seen: list[tuple[str, list[str]]] = []

    class Plugin:
        __name__ = "startup"

        @hookimpl
        def moka_startup(self, app: PluginApp) -> None:
            """Record which servers exist when Moka has started."""
            seen.append(("startup", sorted(app.servers.connections)))

    app = await running(paths, Plugin())
    await app.stop()
    assert seen == [("startup", ["moka-demo"])]


@pytest.mark.anyio
async def test_hook_moka_shutdown(paths: Paths) -> None:
    """moka_shutdown runs once, before the servers stop (they are still ready when it runs)."""
    seen: list[str] = []

    class Plugin:
        __name__ = "shutdown"

        @hookimpl
        def moka_shutdown(self, app: PluginApp) -> None:
            """Record the demo server's status as Moka stops."""
            seen.append(app.servers.get("moka-demo").status)

    app = await running(paths, Plugin())
    assert seen == []
    await app.stop()
    assert seen == ["ready"] and app.servers.get("moka-demo").status == "stopped"


@pytest.mark.anyio
async def test_hook_moka_consent(paths: Paths) -> None:
    """A plugin decides a view's open-link before the setting: it allows one site, denies another."""
    asked: list[tuple[str, str, dict[str, Any]]] = []

    class Plugin:
        __name__ = "links"

        @hookimpl
        def moka_consent(self, action: str, server: str, detail: dict[str, Any]) -> bool | None:
            """Allow links to modelcontextprotocol.io, deny example.com, leave the rest to the setting."""
            asked.append((action, server, detail))
            url = str(detail.get("url", ""))
            if url.startswith("https://modelcontextprotocol.io"):
                return True
            return False if "example.com" in url else None

    shell = RecordingShell()
    app = await running(paths, Plugin(), shell=shell)
    app.config.consent.open_link = "deny"  # the plugin's True must win over this
    try:
        view = await app.view_host.open_view("moka-demo", "open_playground")
        assert view is not None
        await handshake(app, view.id)
        handle = app.view_host.dispatcher.handle
        ok = await handle(view.id, {"jsonrpc": "2.0", "id": 1, "method": "ui/open-link",
                                    "params": {"url": "https://modelcontextprotocol.io/apps"}})
        no = await handle(view.id, {"jsonrpc": "2.0", "id": 2, "method": "ui/open-link",
                                    "params": {"url": "https://example.com/"}})
    finally:
        await app.stop()
    assert ok is not None and ok["result"] == {}
    assert no is not None and no["result"] == {"isError": True}  # denied, as the spec words it
    assert shell.links == ["https://modelcontextprotocol.io/apps"]
    assert asked[0] == ("open_link", "moka-demo", {"url": "https://modelcontextprotocol.io/apps",
                                                   "host": "modelcontextprotocol.io", "international": False})


@pytest.mark.anyio
async def test_hook_moka_host_context(paths: Paths) -> None:
    """A plugin adds a key to a view's hostContext; it cannot replace a core key, and None is dropped."""

    class Plugin:
        __name__ = "context"

        @hookimpl
        def moka_host_context(self, server: str, tool: str, context: dict[str, Any]) -> dict[str, Any] | None:
            """Tell the dice view which server and tool it belongs to."""
            if tool != "roll_dice":
                return None
            return {"origin": f"{server}/{tool}", "theme": "hijacked", "nothing": None}

    app = await running(paths, Plugin())
    try:
        view = await app.view_host.open_view("moka-demo", "roll_dice")
        assert view is not None
        context = (await handshake(app, view.id))["hostContext"]
    finally:
        await app.stop()
    assert context["origin"] == "moka-demo/roll_dice"
    assert context["theme"] != "hijacked" and "nothing" not in context


def test_every_hook_has_a_test() -> None:
    """datasette's guard: each hookspec has a test_hook_<name> in this module."""
    specs = [n for n in dir(hookspecs) if getattr(getattr(hookspecs, n), "moka_spec", None) is not None]
    assert len(specs) == 8
    missing = [n for n in specs if f"test_hook_{n}" not in globals()]
    assert not missing, missing


def test_a_display_mode_icon_must_be_path_data() -> None:
    """A mode's optional icon is SVG path data; anything else (markup, a URL) is refused, naming the rule."""
    from dataclasses import dataclass

    from moka_shell.testing.plugins import registered

    @dataclass(frozen=True)
    class Mode:
        mode_id: str
        icon: str | None
        label: str = "A mode"
        wire_mode: str = "pip"
        fixed_size: bool = True
        opens_window: bool = False

    class Modes:
        @hookimpl
        def register_display_modes(self, register: RegisterDisplayMode) -> None:
            register(Mode("good", "M4 5h16v14H4zM13 9h5v6h-5z"))
            register(Mode("plain", None))
            register(Mode("markup", '<path d="M0 0"/>'))
            register(Mode("link", "url(https://example.com/i.svg)"))

    host = PluginHost(load_entrypoints=False, extra=[Modes()])
    modes = host.registry("display_modes")
    assert {"good", "plain"} <= set(modes) and not {"markup", "link"} & set(modes)
    assert "icon must be SVG path data" in str(host.broken()[0])
    try:
        registered(Modes(), "display_modes")
    except AssertionError as exc:
        assert "'markup' was rejected: icon must be SVG path data" in str(exc)
    else:
        raise AssertionError("registered() let an invalid icon through")
