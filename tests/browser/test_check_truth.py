"""`moka check` tells the truth in both directions (findings C1-C7, V1): valid apps pass, broken ones
fail naming the cause, at the size a view really gets in Moka, and the exit code agrees with the matrix."""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from browser_support import Moka, npm_stdio
from support import SERVERS, until_sync

TRUTH = {"command": sys.executable, "args": [str(SERVERS / "truth_server.py")]}
NO_UI = {"command": sys.executable, "args": [str(SERVERS / "truth_server.py"), "--no-ui"]}
START_HEIGHT = 600  # a frame's height before its view sizes itself (css/views.css)


def check(tmp_path: Path, *args: str, servers: dict[str, Any] | None = None) -> tuple[int, dict[str, Any], str]:
    """`moka check ARGS --json` in a subprocess: its exit code, its report, and stderr."""
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": servers or {"truth": TRUTH, "noui": NO_UI}}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-m", "moka_shell", "check", *args, "--json"], capture_output=True,
                          text=True, env=env, timeout=240)
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
    if report:
        cells = [s for row in report["matrix"].values() for s in row.values()]
        # The exit code always agrees with the matrix: 1 exactly when some cell is FAIL.
        assert (proc.returncode == 1) == ("FAIL" in cells), (proc.returncode, report["matrix"])
    return proc.returncode, report, proc.stderr


def findings(view: dict[str, Any], severity: str | None = None) -> list[dict[str, Any]]:
    return [f for f in view["findings"] if severity is None or f["severity"] == severity]


def test_declared_permissions_are_what_the_person_would_be_asked(tmp_path: Path) -> None:
    """C1: declaring clipboardWrite and microphone is valid: information, never a metadata failure."""
    code, report, err = check(tmp_path, "truth", "--tool", "permissions")
    assert code == 0, (report, err)
    assert report["metadataProblems"] == [] and report["matrix"] == {"permissions": {"moka": "PASS"}}
    (view,) = report["views"]
    (info,) = findings(view, "info")
    assert info["class"] == "asks-permission"
    assert "would ask the person for clipboardWrite, microphone" in info["message"]
    assert "_meta" not in info["fix"] or "remove" not in info["fix"].lower()
    assert not any("Fix the tool's _meta" in f["fix"] for f in view["findings"])


def test_a_harmless_csp_entry_is_a_warning_and_the_exit_code_agrees(tmp_path: Path) -> None:
    """C2: `blob:` in resourceDomains is ignored harmlessly: a warning in every profile, exit 0."""
    code, report, err = check(tmp_path, "truth", "--tool", "blob_csp", "--profile", "moka,vscode")
    assert code == 0, (report, err)
    assert report["metadataProblems"] == []
    assert report["matrix"] == {"blob_csp": {"moka": "WARN", "vscode": "WARN"}}
    assert any("blob:" in w["problem"] for w in report["metadataWarnings"])


def test_a_view_that_paints_nothing_fails_as_blank(tmp_path: Path) -> None:
    """C3: its text is in the DOM, but its pixels are one colour: blank, judged by what is painted."""
    code, report, _ = check(tmp_path, "truth", "--tool", "painted_blank")
    assert code == 1
    (view,) = report["views"]
    assert view["findings"][0]["class"] == "blank-view", view["findings"]
    assert "painted nothing" in view["failure"]
    assert view["size"]["rendered"]["text"] > 0  # what the old DOM probe saw, and passed
    assert view["size"]["painted"]["colours"] == 1


def test_a_script_that_fails_to_load_is_named_as_the_cause(tmp_path: Path) -> None:
    """C4: the entry script from a declared origin answers 404: the URL and the status are the cause."""
    code, report, _ = check(tmp_path, "truth", "--tool", "cdn_missing")
    assert code == 1
    (view,) = report["views"]
    first = view["findings"][0]
    assert first["class"] == "load-failed", view["findings"]
    assert re.search(r"http://127\.0\.0\.1:\d+/sdk/app\.js", first["message"]) and "404" in first["message"], first
    assert view["failure"] == first["message"]


def test_a_csp_blocked_entry_script_fails_at_once(tmp_path: Path) -> None:
    """C5: the block is certain once the document has loaded without a handshake; no waiting for --timeout.

    With --timeout 600 a check that waited for it would outlive the subprocess's 240 s limit.
    """
    code, report, _ = check(tmp_path, "truth", "--tool", "csp_blocked_entry", "--timeout", "600")
    assert code == 1
    (view,) = report["views"]
    assert [f["class"] for f in findings(view, "failure")][:2] == ["csp-blocked", "no-handshake"], view["findings"]
    assert "cdn.undeclared.example" in view["failure"]


def test_a_server_with_no_ui_tool_has_nothing_to_check(tmp_path: Path) -> None:
    """C6: say so plainly, with its own exit code (5), in text and in JSON."""
    code, report, _ = check(tmp_path, "noui")
    assert code == 5 and report["nothingToCheck"] and not report["ok"], report
    (tmp_path / "text").mkdir()
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    text = subprocess.run([sys.executable, "-m", "moka_shell", "check", "noui"], capture_output=True, text=True,
                          env=env, timeout=240)
    assert text.returncode == 5 and "nothing to check" in text.stdout and "no UI tool" in text.stdout, text.stdout
    one = subprocess.run([sys.executable, "-m", "moka_shell", "check", "truth", "--tool", "plain"],
                         capture_output=True, text=True, env=env, timeout=240)
    assert one.returncode == 5 and "nothing to check" in one.stdout, one.stdout + one.stderr


def test_a_check_with_nothing_to_render_leaves_no_browser_behind(tmp_path: Path) -> None:
    """Chromium launches while the core starts; with no UI tool nothing waits for it, and it must not outlive `moka check`.

    Every process the run starts (its server, Playwright's driver, Chromium's own) carries a marker in
    its environment; once the check has answered, all of them must end, the browser included.
    """
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"noui": NO_UI}}))
    mark = f"moka-check-{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
           "MOKA_TEST_MARK": mark}
    done = subprocess.run([sys.executable, "-m", "moka_shell", "check", "noui"], capture_output=True, text=True,
                          env=env, timeout=240)
    assert done.returncode == 5 and "nothing to check" in done.stdout, done.stdout + done.stderr
    until_sync(lambda: not marked(mark), "every process of the check gone, Chromium's included", timeout=60)


def test_a_check_remembers_a_server_with_nothing_to_render_and_launches_no_browser_for_it(tmp_path: Path) -> None:
    """The browser launches early, and the web server starts, only when the server's last listing had
    something to render (launch_hint.py).

    Which modules a run imported (``python -X importtime``) shows whether it started Playwright at all.
    When the memory is out of date (a tool that now has a UI), the view is rendered all the same.
    """
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"truth": TRUTH}}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}

    def imports(*args: str) -> set[str]:
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "moka_shell", "check", *args],
                              capture_output=True, text=True, env=env, timeout=240)
        assert proc.returncode == 5 and "nothing to check" in proc.stdout, proc.stdout + proc.stderr[-2000:]
        return {line.rpartition("|")[2].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}

    imports("truth", "--tool", "plain")  # first check of this server: nothing remembered, the browser launches early
    hints = json.loads((tmp_path / "data" / "check-hints.json").read_text())
    assert "plain" not in hints["truth"]["ui"] and "sizes_from_frame" in hints["truth"]["ui"], hints
    second = imports("truth", "--tool", "plain")
    assert "moka_shell.shells.check.run" in second  # the import list was read
    assert not {m for m in second if m.split(".")[0] == "playwright"}, "a browser was started for a tool with no UI"
    # Nor a web server, a bridge or a view host for views that will not come (they wait for one).
    assert not {"moka_shell.web.server", "moka_shell.bridge", "moka_shell.core.views.host"} & second, second

    # Out of date: the memory says the server has no UI tool at all, and one is checked (the browser
    # and the web server start once the listing shows it).
    (tmp_path / "data" / "check-hints.json").write_text(json.dumps({"truth": {"ui": []}}))
    code, report, _ = check(tmp_path, "truth", "--tool", "sizes_from_frame", servers={"truth": TRUTH})
    assert code == 0 and report["views"][0]["size"]["rendered"]["frame"]["height"] == START_HEIGHT, report
    hints = json.loads((tmp_path / "data" / "check-hints.json").read_text())
    assert "sizes_from_frame" in hints["truth"]["ui"], hints


@pytest.mark.parametrize("to", ["process", "another thread"])
def test_ctrl_c_ends_a_check_whose_view_is_still_rendering(tmp_path: Path, to: str) -> None:
    """Ctrl-C during a view's render (on the browser's own thread) ends `moka check` at once, and all it started.

    The view never says ui/initialize and --timeout is 600 s: a check that waited for the render to
    end before stopping would outlive this test's wait. The kernel gives a process's SIGINT to any of
    its threads that does not block it (often another one when the machine is loaded), and Python
    acts on it only when its main thread runs again: a main thread in one long wait never did, and
    the check went on (seen about one run in ten under load). ``another thread`` sends it so, always.
    """
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"broken": {
        "command": sys.executable, "args": [str(SERVERS / "broken_apps_server.py")]}}}))
    mark = f"moka-check-int-{os.getpid()}-{tmp_path.name}"
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
           "MOKA_TEST_MARK": mark}
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell", "check", "broken", "--tool", "no_handshake",
                             "--timeout", "600"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        events = tmp_path / "data" / "inspector"
        until_sync(lambda: proc.poll() is not None or any("view/created" in f.read_text(errors="replace")
                                                          for f in events.glob("events-*.jsonl")),
                   "the view created (its render under way)", timeout=120)
        assert proc.poll() is None, proc.communicate()  # still rendering, as a view that never initializes does
        if to == "process":
            proc.send_signal(signal.SIGINT)
        else:
            other = max(int(t.name) for t in Path(f"/proc/{proc.pid}/task").iterdir() if int(t.name) != proc.pid)
            assert ctypes.CDLL(None, use_errno=True).tgkill(proc.pid, other, signal.SIGINT) == 0, ctypes.get_errno()
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 130, out + err
    until_sync(lambda: not marked(mark), "every process of the check gone, Chromium's included", timeout=60)


def marked(mark: str) -> list[str]:
    """The command lines of live processes whose environment carries ``MOKA_TEST_MARK=mark``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and f"MOKA_TEST_MARK={mark}".encode() in (proc / "environ").read_bytes():
                state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
                if state != "Z":  # a zombie has ended; its parent just has not reaped it
                    found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120])
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def test_check_renders_views_at_the_size_moka_gives_them(tmp_path: Path) -> None:
    """C7: a view that sizes itself from its frame gets Moka's starting height; one that needs more is clipped."""
    code, report, _ = check(tmp_path, "truth", "--tool", "sizes_from_frame")
    assert code == 0, report
    (view,) = report["views"]
    assert view["size"]["rendered"]["frame"]["height"] == START_HEIGHT, view["size"]
    assert view["size"]["requested"]["height"] == START_HEIGHT
    code, report, _ = check(tmp_path, "truth", "--tool", "clipped_by_frame")
    assert code == 1
    (view,) = report["views"]
    assert view["findings"][0]["class"] == "clipped", view["findings"]
    assert "700" in view["failure"] and str(START_HEIGHT) in view["failure"], view["failure"]


def test_official_apps_that_declare_permissions_pass(tmp_path: Path) -> None:
    """The official PDF viewer declares clipboardWrite: it passes, telling what the person would be asked."""
    code, report, err = check(tmp_path, "pdf", servers={"pdf": npm_stdio("mcp-pdf-server")})
    assert code == 0, (json.dumps(report)[-3000:], err[-2000:])
    infos = [f for v in report["views"] for f in findings(v, "info")]
    assert any("clipboardWrite" in f["message"] for f in infos), infos


def test_a_view_that_measures_while_its_screen_is_hidden_still_gets_its_room(moka_factory: Any) -> None:
    """A frame with no layout (its screen hidden) measures 0 px: that report is not its size (it stayed at 60 px)."""
    moka: Moka = moka_factory({"truth": TRUTH})
    page = moka.open("runner")
    page.wait_for_selector(".runner-layout", state="visible")
    page.click("#nav-chat")  # the Tool runner is hidden while the view loads and measures itself
    moka.call("tools.run", {"server": "truth", "tool": "sizes_from_frame", "arguments": {}})
    view = moka.wait_view_ready("sizes_from_frame")
    moka.wait(lambda: any(e.get("method") == "ui/notifications/size-changed" for e in moka.ui_rpc(view.id)),
              what="the hidden view reported a size")
    page.click("#nav-runner")
    iframe = page.locator(f'.view-frame[data-view-id="{view.id}"]')
    moka.wait(lambda: view.height == START_HEIGHT, what="the shown view reported its frame's height again")
    moka.wait(lambda: abs(iframe.bounding_box()["height"] - START_HEIGHT) < 1, what="the frame at 600 px")


def test_a_frame_starts_tall_enough_for_a_view_sized_from_it(moka_factory: Any) -> None:
    """V1: in the Tool runner, a view that reports its own frame's height renders whole (600 px, not 160)."""
    moka: Moka = moka_factory({"truth": TRUTH})
    moka.open("runner").wait_for_selector(".runner-layout", state="visible")  # run from a screen on show
    moka.call("tools.run", {"server": "truth", "tool": "sizes_from_frame", "arguments": {}})
    view = moka.wait_view_ready("sizes_from_frame")
    iframe = moka.page.locator(f'.view-frame[data-view-id="{view.id}"]')
    moka.wait(lambda: view.height == START_HEIGHT, what="the view reported its frame's height")
    moka.wait(lambda: abs(iframe.bounding_box()["height"] - START_HEIGHT) < 1, what="the frame at 600 px")
    frame = moka.frame(view.id)
    assert frame.evaluate("document.getElementById('end').getBoundingClientRect().bottom") <= START_HEIGHT
