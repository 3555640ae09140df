"""`moka check` as app authors run it in CI: passes on good servers, fails with reasons on a broken one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from browser_support import npm_stdio
from support import SERVERS


def moka(tmp_path: Path, servers: dict[str, object], *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=env,
                          timeout=240)


def test_check_passes_on_the_demo_and_the_official_apps(tmp_path: Path) -> None:
    """Every UI tool of moka-demo, basic-vanillajs, budget-allocator and system-monitor renders and passes."""
    servers = {"moka-demo": {"command": "moka", "args": ["demo-server"]},
               "vanilla": npm_stdio("mcp-server-basic-vanillajs"),
               "budget": npm_stdio("mcp-budget-allocator-server"),
               "sysmon": npm_stdio("mcp-system-monitor-server")}
    for name, tools in (("moka-demo", 2), ("vanilla", 1), ("budget", 1), ("sysmon", 1)):
        proc = moka(tmp_path, servers, "check", name, "--json", "--timeout", "20")
        report = json.loads(proc.stdout)
        assert proc.returncode == 0, (name, proc.stdout[-3000:], proc.stderr[-2000:])
        assert report["ok"] and len(report["views"]) == tools
        for view in report["views"]:
            assert view["ok"] and view["timings_ms"]["initialized"] > 0
            methods = [t.get("method") for t in view["transcript"]]
            assert methods.index("ui/initialize") < methods.index("ui/notifications/initialized") \
                < methods.index("ui/notifications/tool-input") < methods.index("ui/notifications/tool-result")


def test_check_fails_with_reasons_on_a_broken_server(tmp_path: Path) -> None:
    """Wrong mime type, missing resource, no handshake, a throwing view, a CSP violation, metadata mistakes."""
    servers = {"broken": {"command": sys.executable, "args": [str(SERVERS / "broken_apps_server.py")]}}
    proc = moka(tmp_path, servers, "check", "broken", "--timeout", "6")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    for expected in ("PASS  ok", "FAIL  wrong_mime", "exactly 'text/html;profile=mcp-app'", "FAIL  no_handshake",
                     "no ui/initialize arrived", "FAIL  throws", "deliberate uncaught error", "FAIL  csp_violation",
                     "connect-src", "FAIL  missing_resource", "bad_uri: _meta.ui.resourceUri must be a ui:// URI",
                     "csp_on_tool: _meta.ui.csp belongs on the ui:// resource", "bad_visibility", "unreachable"):
        assert expected in out, (expected, out)


def test_check_single_tool_with_args_and_unknown_server(tmp_path: Path) -> None:
    """--tool/--args pick one view; an unknown server is a clear error with exit 1."""
    servers = {"moka-demo": {"command": "moka", "args": ["demo-server"]}}
    proc = moka(tmp_path, servers, "check", "moka-demo", "--tool", "roll_dice", "--args", '{"count": 5}', "--json")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and [v["tool"] for v in report["views"]] == ["roll_dice"]
    assert report["views"][0]["arguments"] == {"count": 5}
    bad = moka(tmp_path, servers, "check", "nope")
    assert bad.returncode == 1 and "no server named 'nope'" in bad.stderr
    usage = moka(tmp_path, servers, "check", "moka-demo", "--args", "{}")
    assert usage.returncode == 2 and "--args needs --tool" in usage.stderr


@pytest.mark.gui
def test_check_with_the_webview_engine(tmp_path: Path) -> None:
    """The same check in the pywebview engine (Qt offscreen): how the frozen app checks itself."""
    servers = {"moka-demo": {"command": "moka", "args": ["demo-server"]}}
    proc = moka(tmp_path, servers, "check", "moka-demo", "--engine", "webview", "--json", "--timeout", "30")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert json.loads(proc.stdout)["engine"] == "webview"
