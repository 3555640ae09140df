"""Plugins: built-ins through the same hooks, installed distributions through entry points,
broken plugins reported and skipped, MOKA_LOAD_PLUGINS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from moka_shell import hookspecs
from moka_shell.plugins import PluginHost

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
    assert "sepia" in names and "raises" not in names and "badimport" not in names
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
