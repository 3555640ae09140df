"""Helpers shared by the tests: where the test servers and npm example servers are."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVERS = Path(__file__).resolve().parent / "servers"
NPM_BIN = ROOT / "tests" / "npm" / "node_modules" / ".bin"


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
