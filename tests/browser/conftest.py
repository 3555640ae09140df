"""Browser end-to-end fixtures: Moka's browser mode on real loopback ports, driven by Chromium."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_support import ARGS, Moka
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One Chromium per module (Debian's, through Playwright).

    Module scope, not session: the sync API keeps an event loop running on this thread,
    which the anyio tests that follow need to be gone.
    """
    chromium = os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium")
    if not chromium:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: scripts/setup.sh installs it")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def moka_factory(tmp_path: Path, browser: Any) -> Iterator[Callable[..., Moka]]:
    """Start Moka with the given servers (and settings) in browser mode."""
    started: list[Moka] = []

    def start(servers: dict[str, Any], **settings: Any) -> Moka:
        config = {"mcpServers": servers, **settings}
        paths = Paths(tmp_path / "config.json", tmp_path / "data")
        paths.config_file.write_text(json.dumps(config))
        core = CoreThread(paths, mode="browser")
        core.start()
        core.submit(core.app.servers.wait_ready(timeout=30)).result(60)  # type: ignore[union-attr]
        for conn in core.app.servers.connections.values():  # type: ignore[union-attr]
            assert conn.status == "ready", (conn.name, conn.error)
        moka = Moka(core, browser)
        started.append(moka)
        return moka

    yield start
    for moka in started:
        moka.close()
        moka.core.stop()


