"""The Inspector's "Save this view's session": a recording that `moka replay --check` plays back with no server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from browser_support import Moka
from support import SERVERS

SHOTS = Path("/tmp/moka-recording")
SECRET = "sk-test-0123456789abcdef-never-in-a-file"


def test_save_this_views_session_then_replay_it(moka_factory: Any, tmp_path: Path) -> None:
    # A configured secret, which the model then passes as an argument: masked wherever it is echoed.
    keeper = {"command": sys.executable, "args": [str(SERVERS / "storage_server.py")], "env": {"KEEPER_TOKEN": SECRET}}
    moka: Moka = moka_factory({"keeper": keeper})
    page = moka.open("runner")
    moka.call("tools.run", {"server": "keeper", "tool": "remember", "arguments": {"topic": "first"}})
    first = moka.wait_view_ready("remember")
    moka.wait(lambda: moka.call("storage.usage", {"server": "keeper"})["localItems"] == 1, what="the first view's write")
    moka.call("tools.run", {"server": "keeper", "tool": "remember", "arguments": {"topic": SECRET}})
    view = moka.wait(lambda: next((v for v in moka.views() if v.id != first.id and v.state == "ready"
                                   and "result_sent" in v.timings), None), 30, "the second view")
    page.goto(moka.url + f"#inspector?view={view.id}")
    page.wait_for_selector("#inspector-list .insp-row", timeout=15000)
    page.locator("#inspector-list .insp-row").first.click()
    button = page.locator('#inspector-detail [data-action="save-session"]')
    button.wait_for(timeout=10000)
    SHOTS.mkdir(exist_ok=True)
    page.locator("#inspector-detail").screenshot(path=str(SHOTS / "inspector-detail.png"))
    with page.expect_download(timeout=15000) as dl:
        button.click()
    saved = tmp_path / dl.value.suggested_filename
    dl.value.save_as(saved)
    rec = json.loads(saved.read_text())
    assert rec["format"] == "moka-view-recording" and rec["tool"]["name"] == "remember" and rec["server"] == "keeper"
    assert rec["toolInput"] == {"topic": "[redacted]"} and "[redacted]" in json.dumps(rec["toolResult"])
    assert rec["storage"] == {"local": [["loads", "1"]], "session": []}  # what the view started with
    assert rec["resource"]["html"].startswith("<") and rec["hostContext"]["displayMode"] == "inline"
    methods = [m["message"].get("method") for m in rec["messages"]]
    assert methods[0] == "ui/initialize" and "ui/notifications/tool-result" in methods
    assert all(isinstance(m["t"], (int, float)) for m in rec["messages"])
    assert SECRET not in saved.read_text()
    moka.close()
    moka.core.stop()  # no Moka, no server: the replay has only the file
    done = subprocess.run([sys.executable, "-m", "moka_shell", "replay", str(saved), "--check", "--json"],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["divergences"] == [] and report["compared"] >= 2
