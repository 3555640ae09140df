"""Live reload (issue 30.3): an edit of the server's file restarts it and re-renders its open views.

A real server script is copied into tmp_path and edited there, as an author edits theirs; Moka
runs in browser mode with the reloader ``moka dev`` starts (core/dev/reload.py) watching the
script's folder, and Chromium shows the Tool runner with the tool's view. An edit of the view's
HTML text re-renders the same view card with the new text and the same tool result (no new
call); a broken edit (a syntax error, a resource that cannot be read) says so on the card and
keeps the view; the next good edit brings it back. The Inspector keeps what came before.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from browser_support import DEMO, Moka, npm_stdio
from moka_shell.core.dev.reload import DevReload
from support import SERVERS

HEADLINE = "Hello from version one"


def view_frame(moka: Moka, view_id: str, key: str) -> Any:
    """The view document's frame loaded with this key (a reload gives the view a new one)."""
    return moka.wait(lambda: next((f for f in moka.page.frames if f"/view/{view_id}?k={key}" in f.url
                                   and not f.is_detached()), None), 30, f"the frame of {view_id}")


def text(frame: Any, selector: str) -> str:
    try:
        return str(frame.evaluate(f"document.querySelector({selector!r})?.textContent || ''"))
    except Exception:  # noqa: BLE001 - the frame went (a reload under way): nothing shown yet
        return ""


def edit(script: Path, old: str, new: str) -> None:
    source = script.read_text()
    assert old in source, old
    script.write_text(source.replace(old, new))


def rendered(moka: Moka, view: Any, headline: str) -> Any:
    """The view's current frame once it shows ``headline`` and a result."""
    def shown() -> Any:
        if view.state != "ready" or "result_sent" not in view.timings:
            return None
        frame = view_frame(moka, view.id, view.key)
        return frame if text(frame, "#headline") == headline and text(frame, "#result") else None
    return moka.wait(shown, 60, f"the view showing {headline!r}")


def test_an_edit_re_renders_the_open_view_and_a_broken_one_keeps_it(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app_dir = tmp_path / "my-app"
    app_dir.mkdir()
    script = app_dir / "server.py"
    shutil.copy(SERVERS / "dev_app_server.py", script)
    moka: Moka = moka_factory({"dev": {"command": sys.executable, "args": [str(script)]}})
    dev = DevReload(moka.app, "dev", [app_dir])
    moka.core.submit(dev.start()).result(30)
    try:
        page = moka.open("runner?server=dev&tool=greet")
        page.locator("#runner-tool").wait_for(timeout=20000)
        moka.wait(lambda: page.locator("#runner-tool").input_value() == "greet", 20, "the tool picked")
        page.click("#runner-run")
        view = moka.wait_view_ready("greet")
        frame = rendered(moka, view, HEADLINE)
        result = text(frame, "#result")
        assert result.startswith("greeted Ada #")
        card = page.locator(f'.view-card[data-view-id="{view.id}"]')
        first_key = view.key
        before = [e for e in moka.app.inspector.query(limit=100000) if e.get("view") == view.id]
        assert before

        # 1. An edit of the view's text: the same card shows the new text with the same result.
        edit(script, HEADLINE, "Hello from version two")
        frame = rendered(moka, view, "Hello from version two")
        assert view.key != first_key and text(frame, "#result") == result
        assert card.count() == 1 and moka.views() == [view]
        calls = [e for e in moka.app.inspector.query(limit=100000)
                 if e["channel"] == "mcp.rpc" and e.get("method") == "tools/call" and e.get("direction") == "out"]
        assert len(calls) == 1, "a reload must not call the tool again"
        # The Tool runner keeps the tool picked (the server's tools went while it restarted).
        # The server restarted for seconds, so the runner's list was emptied meanwhile; once it is back
        # the same tool is picked, not the server's first.
        moka.wait(lambda: page.locator("#runner-tool option").count() == 2, 30, "the tools listed again")
        assert page.locator("#runner-tool").input_value() == "greet"
        after = [e for e in moka.app.inspector.query(limit=100000) if e.get("view") == view.id]
        assert after[:len(before)] == before, "the Inspector keeps what came before the reload"

        # 2. A broken edit: the server cannot start. The card says why and keeps the view.
        edit(script, "def build_server() -> MCPServer:", "def build_server( -> MCPServer:")
        strip = card.locator('.view-reload[data-state="failed"]')
        strip.wait_for(timeout=60000)
        assert "SyntaxError" in strip.inner_text(), strip.inner_text()
        assert card.count() == 1 and view.state == "ready"
        assert text(view_frame(moka, view.id, view.key), "#headline") == "Hello from version two"
        assert moka.app.servers.get("dev").status == "failed"

        # 3. The fix brings it back, with the edit made meanwhile.
        edit(script, "def build_server( -> MCPServer:", "def build_server() -> MCPServer:")
        edit(script, "Hello from version two", "Hello from version three")
        frame = rendered(moka, view, "Hello from version three")
        assert text(frame, "#result") == result
        card.locator(".view-reload").wait_for(state="detached", timeout=30000)

        # 4. A resource that cannot be read: said on the card, the last good view stays.
        edit(script, '    """The view document, read again on every resources/read."""',
             '    """The view document, read again on every resources/read."""\n    raise RuntimeError("no page today")')
        strip.wait_for(timeout=60000)
        assert "no page today" in strip.inner_text() or "resources/read" in strip.inner_text(), strip.inner_text()
        assert text(view_frame(moka, view.id, view.key), "#headline") == "Hello from version three"
        edit(script, '\n    raise RuntimeError("no page today")', "")
        edit(script, "Hello from version three", "Hello from version four")
        frame = rendered(moka, view, "Hello from version four")
        assert text(frame, "#result") == result and card.count() == 1
    finally:
        moka.core.submit(dev.stop()).result(30)


@pytest.mark.parametrize("server,tool", [("moka-demo", "roll_dice"), ("vanilla", "get-time")])
def test_the_demo_and_an_official_example_app_re_render_after_a_reload(moka_factory, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                      server: str, tool: str) -> None:
    """A save in the watched folder restarts the demo server (or an official example app from tests/npm):
    its view comes back in the same card, fed the same input and result, with no new call."""
    config = DEMO if server == "moka-demo" else npm_stdio("mcp-server-basic-vanillajs")
    moka: Moka = moka_factory({server: config})
    watched = tmp_path / "src"
    watched.mkdir()
    (watched / "app.ts").write_text("// v1")
    dev = DevReload(moka.app, server, [watched])
    moka.core.submit(dev.start()).result(30)
    try:
        moka.open("runner")
        view_id = moka.call("tools.run", {"server": server, "tool": tool, "arguments": {}})["viewId"]
        view = moka.wait_view_ready(tool)
        assert view.id == view_id
        view_frame(moka, view.id, view.key)
        first_key, generation = view.key, moka.app.servers.get(server).generation

        (watched / "app.ts").write_text("// v2")
        moka.wait(lambda: view.key != first_key and view.state == "ready" and "result_sent" in view.timings, 90,
                  "the view re-rendered")
        view_frame(moka, view.id, view.key)
        assert moka.app.servers.get(server).generation > generation
        sent = [e["message"] for e in moka.ui_rpc(view.id) if e["direction"] == "out"
                and e["message"].get("method") == "ui/notifications/tool-result"]
        assert len(sent) == 2 and sent[0] == sent[1], "the new frame gets the same result"
        assert moka.page.locator(f'.view-card[data-view-id="{view.id}"]').count() == 1
        moka.wait(lambda: moka.page.locator(".view-reload").count() == 0, 20, "no reload strip left")
    finally:
        moka.core.submit(dev.stop()).result(30)
