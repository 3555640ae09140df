"""Shared fixtures: isolated config/data dirs, the anyio backend, and helpers to find servers."""

from __future__ import annotations

from pathlib import Path

import pytest

from moka_shell.paths import Paths

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
