"""moka_shell.testing's one way to start a core: start_app / running_app, and the EventRecorder."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.demo.server import build_server
from moka_shell.errors import InstanceRunningError
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import EventRecorder, running_app, start_app
from moka_shell.testing.memory import InMemoryTransport
from support import ROOT, until, until_sync

pytestmark = pytest.mark.anyio


def in_memory() -> PluginHost:
    """The built-ins and the demo server in memory (``"type": "memory"``), no installed plugins."""
    return PluginHost(load_entrypoints=False, extra=[InMemoryTransport(build_server).plugin()])


async def test_running_app_is_ready_inside_and_stopped_after_even_when_the_body_fails(paths: Paths) -> None:
    """The servers are ready in the body; a failing body still stops the app (servers stopped, lock released)."""
    events = EventRecorder()
    with pytest.raises(RuntimeError, match="the body failed"):
        async with running_app(paths, servers={"demo": ServerConfig(type="memory")}, plugins=in_memory(),
                               events=events) as app:
            assert app.servers.get("demo").status == "ready" and "roll_dice" in app.servers.get("demo").tools
            assert app.chat is not None  # store=True by default: conversations are kept
            raise RuntimeError("the body failed")
    assert app.servers.get("demo").status == "stopped"
    assert [d[0]["status"] for d in events.data("servers.changed")][-1] == "stopped"
    again = await start_app(paths, config=MokaConfig(), plugins=in_memory())  # the data dir is free again
    await again.stop()


async def test_a_start_that_fails_stops_what_it_began(paths: Paths) -> None:
    """A second app on a held data dir raises; the first keeps it, the failed one leaves nothing running."""
    first = await start_app(paths, config=MokaConfig(), plugins=in_memory())
    try:
        with pytest.raises(InstanceRunningError):
            await start_app(paths, servers={"demo": ServerConfig(type="memory")}, plugins=in_memory())
        assert first.instance_lock is not None and first.instance_lock.held
    finally:
        await first.stop()


async def test_servers_replace_the_configs_and_a_folder_is_enough(tmp_path: Path) -> None:
    """``servers`` replace those of ``config`` (its other settings stay); a folder stands for the test's Paths;
    ``prepare`` sees the app built and not yet started."""
    config = MokaConfig(mcpServers={"other": ServerConfig(type="memory")})
    config.agent.model = "kept-model"
    before: list[list[str]] = []
    async with running_app(tmp_path, servers={"demo": ServerConfig(type="memory")}, config=config,
                           plugins=in_memory(), store=False,
                           prepare=lambda app: before.append(sorted(app.servers.connections))) as app:
        assert sorted(app.servers.connections) == ["demo"] and app.config.agent.model == "kept-model"
        assert app.paths.data_dir == tmp_path / "data" and before == [[]]


def test_the_recorder_keeps_what_it_is_told_to() -> None:
    """Everything in order; with names, only those events; ``data()`` reads the payloads."""
    everything, asked = EventRecorder(), EventRecorder("consent.request")
    for event, data in [("servers.changed", [1]), ("consent.request", {"id": "a"}), ("view.post", {})]:
        everything(event, data)
        asked(event, data)
    assert [e for e, _ in everything] == ["servers.changed", "consent.request", "view.post"]
    assert asked == [("consent.request", {"id": "a"})] and asked.data() == [{"id": "a"}]
    assert everything.data("servers.changed") == [[1]]


def test_one_until_for_every_test() -> None:
    """tests/support.py holds the tests' one ``until`` (and its form for a test without an event loop);
    no other test module waits with a copy of its own (tests/reliability had two)."""
    copies = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        if "node_modules" in path.parts or path == ROOT / "tests" / "support.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("until"):
                copies.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert copies == []


async def test_until_returns_what_it_waited_for_and_names_what_never_came() -> None:
    """Both forms: the truthy value is returned; a condition never met fails with its name."""
    looks = iter([0, None, "there"])
    assert until_sync(lambda: next(looks), "the third look") == "there"
    with pytest.raises(AssertionError, match="never happened within 0.05 s: the sky falling"):
        until_sync(lambda: False, "the sky falling", timeout=0.05)
    looks = iter([[], [1]])
    assert await until(lambda: next(looks)) == [1]
    with pytest.raises(AssertionError, match="the sky falling"):
        await until(lambda: False, "the sky falling", timeout=0.05)
