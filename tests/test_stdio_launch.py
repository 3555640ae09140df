"""A stdio server's process starts before Moka imports the MCP SDK, and its connection adopts it.

A server's interpreter and imports take about as long as Moka's import of the SDK, and neither needs
the other: ``ServerManager.launch_early`` starts the process first, so both run at once
(docs/performance.md §19). A process no connection adopts is ended, not left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from moka_shell.core.mcp.stdio_launch import INHERITED_ENV, StdioLaunch, inherited_environment, spawn
from moka_shell.paths import Paths

# Run in a fresh interpreter: the SDK must not be loaded yet. At the first import of the SDK (its
# types package comes first), the script notes which processes are its children by then.
SCRIPT = textwrap.dedent("""
    import asyncio, json, os, sys
    from pathlib import Path

    children_at_sdk = []

    def children():
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = open(f"/proc/{entry}/stat").read()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                    found.append(int(entry))
        return found

    class Watch:
        def find_spec(self, name, path=None, target=None):
            if name in ("mcp", "mcp_types") and not children_at_sdk:
                children_at_sdk.append(children())
            return None

    sys.meta_path.insert(0, Watch())

    from moka_shell.core.app import MokaApp
    from moka_shell.paths import Paths

    async def main():
        app = MokaApp(Paths(Path(sys.argv[1]), Path(sys.argv[2])), mode="check")
        await app.start(servers=["moka-demo"], store=False)
        await app.servers.wait_ready(timeout=60)
        conn = app.servers.get("moka-demo")
        out = {"status": conn.status, "tools": sorted(conn.tools), "at_sdk": children_at_sdk[0],
               "children_ready": children()}
        await app.stop()
        out["children_after"] = children()
        print(json.dumps(out))

    asyncio.run(main())
""")


def test_the_server_process_starts_before_the_sdk_is_imported(paths: Paths) -> None:
    paths.config_file.write_text(json.dumps({"mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}}}))
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(paths.config_file), str(paths.data_dir)],
                          capture_output=True, text=True, timeout=120, env={**os.environ})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["status"] == "ready" and "roll_dice" in out["tools"]
    # The server's process was there before the SDK began to load, and it is the one that answered.
    assert len(out["at_sdk"]) == 1, out
    assert out["children_ready"] == out["at_sdk"], out
    assert out["children_after"] == []


@pytest.mark.anyio
async def test_a_process_no_connection_adopts_is_ended(paths: Paths) -> None:
    from moka_shell.core.app import MokaApp

    paths.config_file.write_text(json.dumps({"mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}}}))
    app = MokaApp(paths, mode="check")
    app.open(servers=["moka-demo"], store=False)
    await app.launch_servers_early(["moka-demo"])
    [early] = app.servers._early.values()
    pid = early.process.process.pid
    assert _alive(pid)
    await app.stop()  # Moka stops before the SDK loaded (or its import failed): no connection was made
    assert not _alive(pid)
    assert app.servers._early == {}


@pytest.mark.anyio
async def test_a_server_that_cannot_start_is_left_to_its_connection(paths: Paths) -> None:
    from moka_shell.core.app import MokaApp

    servers = {"missing": {"command": "no-such-command-for-moka"}, "nowhere": {"command": "moka", "args": ["demo-server"],
                                                                               "cwd": str(paths.data_dir / "absent")}}
    paths.config_file.write_text(json.dumps({"mcpServers": servers}))
    app = MokaApp(paths, mode="check")
    await app.start(store=False)
    try:
        await app.servers.wait_ready(timeout=30)
        assert app.servers._early == {}
        assert "command not found" in (app.servers.get("missing").error or "")
        assert "working directory does not exist" in (app.servers.get("nowhere").error or "")
    finally:
        await app.stop()


def test_the_inherited_environment_is_the_sdks() -> None:
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

    assert sorted(INHERITED_ENV) == sorted(DEFAULT_INHERITED_ENV_VARS)
    assert inherited_environment() == get_default_environment()


@pytest.mark.anyio
async def test_spawn_gives_the_config_env_and_no_secret_of_moka(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOKA_TEST_SECRET", "s3cret")
    out = tmp_path / "env.json"
    script = f"import json, os; open({str(out)!r}, 'w').write(json.dumps(dict(os.environ)))"
    with open(os.devnull, "w") as errlog:
        process = await spawn(StdioLaunch(sys.executable, ["-c", script], {"GIVEN": "1"}, str(tmp_path)), errlog)
        await process.wait()
    env = json.loads(out.read_text())
    assert env["GIVEN"] == "1" and "MOKA_TEST_SECRET" not in env
    assert process.returncode == 0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
