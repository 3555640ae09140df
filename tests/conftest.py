"""Shared fixtures: isolated config/data dirs, the anyio backend, and helpers to find servers."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from moka_shell.paths import Paths

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def paths(tmp_path: Path) -> Paths:
    """A config file and data dir of this test's own."""
    return Paths(tmp_path / "config.json", tmp_path / "data")


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the real config, data dir or keyring; keep installed plugins out of core tests."""
    monkeypatch.setenv("MOKA_CONFIG", str(tmp_path / "config.json"))
    monkeypatch.setenv("MOKA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def server_script(name: str) -> list[str]:
    """Command to start one of the test servers in tests/servers."""
    return [sys.executable, str(SERVERS / name)]


def npm_server(bin_name: str) -> str:
    """Path of an npm example server's bin; skips when the npm packages are not installed."""
    path = NPM_BIN / bin_name
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing: scripts/setup.sh should have installed the npm example servers")
        pytest.skip(f"{bin_name} not installed (run MOKA_SETUP_TEST=1 scripts/setup.sh)")
    return str(path)


def node() -> str:
    """The node binary (the example servers need it)."""
    found = shutil.which("node")
    if not found:
        pytest.skip("node is not installed")
    return found
