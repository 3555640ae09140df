"""The wheel is the product: built from a clean copy of the checkout, installed into a venv that cannot
see the checkout, it runs every command, serves the UI and a view, takes plugins, and starts new ones.

One venv for the module (tests/conftest.py keeps this module on one worker); the wheel is built once
per run (tests/wheel_support.py) and shared with the packaging builds.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import tarfile
import time
import tomllib
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.request import urlopen
from zipfile import ZipFile

import pytest

import moka_shell
from moka_shell import _pyinstaller
from wheel_support import ROOT, built_dist, user_venv, venv_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return built_dist(tmp_path_factory)


@pytest.fixture(scope="module")
def venv_home(tmp_path_factory: pytest.TempPathFactory, dist: dict[str, Path]) -> Path:
    """A person's venv, outside the checkout, with the wheel installed (and pytest and setuptools, for plugins)."""
    return user_venv(tmp_path_factory.mktemp("user") / "venv", dist["wheel"], more=["pytest", "setuptools"])


def moka(venv: Path, *args: str, cwd: Path, timeout: float = 180, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the venv's `moka` with a config and data dir of its own, from a folder outside the checkout."""
    env = venv_env(venv, MOKA_CONFIG=str(cwd / "config.json"), MOKA_DATA_DIR=str(cwd / "data"),
                   PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    done = subprocess.run([str(venv / "bin" / "moka"), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if check:
        assert done.returncode == 0, f"moka {' '.join(args)}: rc={done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _metadata(wheel: Path) -> Any:
    with ZipFile(wheel) as zf:
        return Parser().parsestr(zf.read(f"moka_shell-{moka_shell.__version__}.dist-info/METADATA").decode())


def test_the_wheel_carries_all_run_time_files_and_complete_metadata(dist: dict[str, Path]) -> None:
    with ZipFile(dist["wheel"]) as zf:
        names = set(zf.namelist())
    for rel in _pyinstaller.data_files():  # the UI, the sandbox page, the demo views, icons, profiles
        assert f"moka_shell/{rel}" in names, rel
    assert {"moka_shell/web/static/icon.png", "moka_shell/web/static/sandbox/proxy.html",
            "moka_shell/check_profiles/claude.json", "moka_shell/core/chat/store_health.py"} <= names
    assert not any(n.startswith(("tests/", "moka_shell/testing/__pycache__")) for n in names)
    meta = _metadata(dist["wheel"])
    assert meta["Version"] == moka_shell.__version__ and meta["Name"] == "moka-shell"
    assert meta["License-Expression"] == "Apache-2.0" and meta["Requires-Python"] == ">=3.11"
    assert {u.split(",")[0] for u in meta.get_all("Project-URL")} >= {"Homepage", "Documentation", "Source", "Issues"}
    assert any(c.startswith("Programming Language :: Python :: 3.11") for c in meta.get_all("Classifier"))
    assert meta["Description-Content-Type"] == "text/markdown" and "# Moka" in meta.get_payload()
    requires = meta.get_all("Requires-Dist")
    # Ranges, each with a lower bound: plugins can bring their own versions of shared packages.
    runtime = [r for r in requires if "extra ==" not in r]
    assert runtime and all(">=" in r for r in runtime), runtime
    assert {"check", "dev"} <= set(meta.get_all("Provides-Extra"))
    with tarfile.open(dist["sdist"]) as tf:
        members = {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    assert {"LICENSE", "README.md", "pyproject.toml", "src/moka_shell/web/static/index.html",
            "src/moka_shell/demo/views/dice.html"} <= members


def test_the_version_is_written_in_one_place() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "moka_shell.version.__version__"}


def test_the_anthropic_plugin_builds_its_own_wheel(dist: dict[str, Path]) -> None:
    with ZipFile(dist["moka-anthropic"]) as zf:
        names = zf.namelist()
        meta = Parser().parsestr(zf.read(next(n for n in names if n.endswith("/METADATA"))).decode())
        entry_points = zf.read(next(n for n in names if n.endswith("/entry_points.txt"))).decode()
    assert "moka_anthropic/__init__.py" in names and meta["Name"] == "moka-anthropic"
    assert "[moka]\nanthropic = moka_anthropic" in entry_points


def test_the_installed_wheel_runs_outside_the_checkout(venv_home: Path, tmp_path: Path) -> None:
    where = subprocess.run([str(venv_home / "bin" / "python"), "-c", "import moka_shell; print(moka_shell.__file__)"],
                           cwd=tmp_path, env=venv_env(venv_home), capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()).is_relative_to(venv_home) and not Path(where.stdout.strip()).is_relative_to(ROOT)
    assert moka(venv_home, "--version", cwd=tmp_path).stdout.strip() == f"moka {moka_shell.__version__}"
    assert "moka-demo/roll_dice" in moka(venv_home, "tools", "moka-demo", cwd=tmp_path).stdout
    rolled = moka(venv_home, "call", "moka-demo", "roll_dice", '{"sides": 6, "count": 3}', cwd=tmp_path).stdout
    assert re.search(r"Rolled 3d6: [1-6], [1-6], [1-6] \(total \d+\)", rolled), rolled
    # No Playwright in a plain install: `moka check` renders in the app's own webview (Qt offscreen).
    checked = moka(venv_home, "check", "moka-demo", "--timeout", "60", cwd=tmp_path, timeout=300).stdout
    assert re.search(r"^OK: 2 of 2 views passed", checked, re.MULTILINE), checked


@pytest.fixture
def served(venv_home: Path, tmp_path: Path) -> Iterator[str]:
    env = venv_env(venv_home, MOKA_CONFIG=str(tmp_path / "config.json"), MOKA_DATA_DIR=str(tmp_path / "data"),
                   PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    proc = subprocess.Popen([str(venv_home / "bin" / "moka"), "serve", "--port", "0"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        url = ""
        for line in proc.stdout:  # the URL line comes once the server listens
            if m := re.search(r"Moka is running at (\S+)", line):
                url = m.group(1)
                break
        assert url, "moka serve printed no URL"
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright (the test is skipped where it is not installed)."""
    import shutil

    chromium = shutil.which("chromium")
    if not chromium:
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw.chromium.launch(executable_path=chromium, headless=True,
                                 args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])


def test_moka_serve_from_the_wheel_serves_the_ui_and_a_view(served: str) -> None:
    with chromium_browser() as browser:
        try:
            page = browser.new_page()
            page.goto(served + "#runner?server=moka-demo&tool=roll_dice")
            page.wait_for_selector('#conn[data-status="online"]', timeout=30000)
            page.wait_for_selector("#runner-run:not([disabled])", timeout=30000)
            page.click("#runner-run")
            deadline = time.monotonic() + 60
            frame = None
            while frame is None and time.monotonic() < deadline:
                frame = next((f for f in page.frames if "/view/" in f.url), None)
                page.wait_for_timeout(100)
            assert frame is not None, "no view frame appeared"
            frame.wait_for_function("() => /Rolled|total/i.test(document.body.innerText)", timeout=30000)
        finally:
            browser.close()


def test_a_plugin_wheel_installs_lists_chats_and_uninstalls_in_a_venv_install(
        venv_home: Path, dist: dict[str, Path], tmp_path: Path) -> None:
    out = moka(venv_home, "plugins", "install", str(dist["moka-parrot"]), cwd=tmp_path)
    assert "Moka loads it at its next start" in out.stdout, out.stdout + out.stderr
    plugins = {p["name"]: p for p in json.loads(moka(venv_home, "plugins", "--json", cwd=tmp_path).stdout)}
    assert plugins["parrot"]["error"] is None and plugins["parrot"]["distribution"] == "moka-parrot"
    assert not plugins["parrot"]["in_folder"]  # into the venv itself, as llm install does
    said = moka(venv_home, "chat", "--backend", "parrot", "hello from the venv", cwd=tmp_path).stdout
    assert "hello from the venv" in said.split("\n", 1)[-1], said
    moka(venv_home, "plugins", "uninstall", "parrot", cwd=tmp_path)
    plugins = {p["name"] for p in json.loads(moka(venv_home, "plugins", "--json", cwd=tmp_path).stdout)}
    assert "parrot" not in plugins
    gone = moka(venv_home, "chat", "--backend", "parrot", "hi", cwd=tmp_path, check=False)
    assert gone.returncode != 0 and "unknown backend 'parrot'" in gone.stderr


def test_plugins_new_writes_packages_that_install_pass_their_tests_and_work(venv_home: Path, tmp_path: Path) -> None:
    for kind, name in (("backend", "hello"), ("theme", "harbor"), ("display-mode", "sidecar")):
        moka(venv_home, "plugins", "new", kind, name, "--dir", str(tmp_path), cwd=tmp_path)
    pip = [str(venv_home / "bin" / "python"), "-m", "pip", "install", "--no-index", "--no-build-isolation", "-q"]
    packages = [str(tmp_path / f"moka-{n}") for n in ("hello", "harbor", "sidecar")]
    try:
        done = subprocess.run(pip + [a for p in packages for a in ("-e", p)], env=venv_env(venv_home),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        # Each package's own test, as written (one pytest run for the three: each has its own rootdir).
        ran = subprocess.run([str(venv_home / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *(f"{p}/tests" for p in packages)], cwd=tmp_path, env=venv_env(venv_home),
                             capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0 and "3 passed" in ran.stdout, ran.stdout[-2000:] + ran.stderr[-2000:]
        plugins = {p["name"]: p for p in json.loads(moka(venv_home, "plugins", "--json", cwd=tmp_path).stdout)}
        assert {"hello", "harbor", "sidecar"} <= set(plugins)
        assert all(plugins[n]["error"] is None for n in ("hello", "harbor", "sidecar"))
        said = moka(venv_home, "chat", "--backend", "hello", "good morning", cwd=tmp_path).stdout
        assert "Hello from hello! You said: good morning" in said, said
    finally:
        subprocess.run([str(venv_home / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q",
                        "moka-hello", "moka-harbor", "moka-sidecar"], env=venv_env(venv_home), capture_output=True)


def test_without_pip_plugins_go_into_the_plugin_folder(tmp_path_factory: pytest.TempPathFactory,
                                                       dist: dict[str, Path], tmp_path: Path) -> None:
    """An environment with no pip (as `uv tool install` makes) installs plugins as the packaged apps do."""
    home = user_venv(tmp_path_factory.mktemp("nopip") / "venv", dist["wheel"])
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "uninstall", "-y", "-q", "pip"], check=True,
                   env=venv_env(home), capture_output=True)
    out = moka(home, "plugins", "install", str(dist["moka-parrot"]), cwd=tmp_path)
    assert f"into {tmp_path / 'data' / 'plugins' / 'moka-parrot'}" in out.stdout, out.stdout + out.stderr
    plugins = {p["name"]: p for p in json.loads(moka(home, "plugins", "--json", cwd=tmp_path).stdout)}
    assert plugins["parrot"]["in_folder"] and plugins["parrot"]["error"] is None
    said = moka(home, "chat", "--backend", "parrot", "hello from the folder", cwd=tmp_path).stdout
    assert "hello from the folder" in said.split("\n", 1)[-1], said
    assert "uninstalled moka-parrot" in moka(home, "plugins", "uninstall", "parrot", cwd=tmp_path).stdout
    assert list((tmp_path / "data" / "plugins").iterdir()) == []


def test_the_wheel_carries_the_docs_and_moka_serve_shows_them(dist: dict[str, Path], served: str) -> None:
    """Help → Documentation opens /docs/ of the running install: the wheel carries docs/*.md (setup.py), the
    page lists them, renders one, and a link to another page opens it in place (no web page named that a
    release might not have)."""
    from urllib.parse import urlsplit

    from moka_shell.shells.desktop.menu import DOCS_PATH

    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    with ZipFile(dist["wheel"]) as zf:
        assert sorted(n.rsplit("/", 1)[1] for n in zf.namelist() if n.startswith("moka_shell/docs/")) == pages
    with tarfile.open(dist["sdist"]) as tf:
        assert {f"docs/{p}" for p in pages} <= {m.name.split("/", 1)[1] for m in tf.getmembers() if "/" in m.name}
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(served))
    with urlopen(origin + "/docs/plugins.md") as reply:
        assert reply.read().decode() == (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    for wrong in ("/docs/../pyproject.toml", "/docs/nope.md", "/docs/%2e%2e%2fREADME.md"):
        with pytest.raises(HTTPError) as refused:
            urlopen(origin + wrong)
        assert refused.value.code == 404, wrong
    with chromium_browser() as browser:
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(origin + DOCS_PATH)
            page.wait_for_selector("#docs-body .md-h", timeout=30000)
            assert page.locator("#docs-body .md-h").first.inner_text() == "Installing Moka"  # install.md opens first
            assert page.locator("#docs-list a").count() == len(pages)
            link = page.locator('#docs-body a[href*="/docs/#plugins"]').first
            link.click()
            page.wait_for_function("() => document.querySelector('#docs-body .md-h')?.textContent === 'Writing plugins'",
                                   timeout=30000)
            assert "/docs/#plugins" in page.url and len(page.context.pages) == 1 and not errors, errors
            if ":" in page.url.rsplit("#", 1)[1]:  # the link named a heading: it is there, with that anchor
                assert page.locator(f"#{page.url.rsplit(':', 1)[1]}").count() == 1
            page.goto(served + "#settings")  # browser mode: Settings → About links to them
            page.wait_for_selector("#about-docs", timeout=30000)
            assert page.get_attribute("#about-docs", "href") == DOCS_PATH
        finally:
            browser.close()
