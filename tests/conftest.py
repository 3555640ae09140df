"""Shared fixtures: isolated config/data dirs, the anyio backend, and helpers to find servers.

Also the grouping the parallel run (pytest-xdist, ``-n 2 --dist loadgroup`` in scripts/test.sh)
needs: tests in one ``xdist_group`` always run one after another on the same worker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from moka_shell.paths import Paths

# Modules whose tests share one expensive module-scoped fixture (a `moka check` run, a pip install):
# kept on one worker so the fixture runs once, not once per worker.
SHARED_MODULE_FIXTURE = {"test_replay.py", "test_check_late.py", "test_plugin_tutorial.py", "test_wheel.py",
                         "test_check_baseline.py"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks on a worker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Group the tests that must not run at the same time as each other (see the module docstring)."""
    for item in items:
        name = Path(str(item.fspath)).name
        if name == "test_packaging.py" and item.get_closest_marker("slow"):
            # The two real builds both `pip install` this checkout (in-tree build/ and egg-info) and
            # may apt-get install: one after the other, while the rest of the suite runs beside them.
            item.add_marker(pytest.mark.xdist_group("packaging-builds"))
        elif name in SHARED_MODULE_FIXTURE:
            item.add_marker(pytest.mark.xdist_group(name))


@pytest.hookimpl(trylast=True)  # after pytest-xdist's worker has suffixed the grouped nodeids
def pytest_collection_finish(session: pytest.Session) -> None:
    """Refuse to run when pytest-xdist's groups would be ignored (pytest 9.2 with xdist 3.8 did so
    silently: both packaging builds then ran at once on two workers and broke each other)."""
    config = session.config
    if not (hasattr(config, "workerinput") and getattr(config.option, "loadgroup", False)):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(f"pytest-xdist did not group {lost[0]} (and {len(lost) - 1} more): this pytest "
                                "and pytest-xdist do not work together; use the versions pinned in requirements.lock")


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
