"""Take screenshots of every screen in light and dark into docs/screenshots/.

    .venv/bin/python scripts/screenshots.py

Starts Moka in browser mode with the demo server and a local fake model (so the chat has a
real conversation with a tool call and its view), then drives the UI in Chromium.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--no-first-run", "--disable-sync", "--disable-component-update"]
REPLY = ("Here are your dice. **Three six-sided dice** came up as shown in the view above.\n\n"
         "- Press *Roll again* in the view to re-roll (the view calls the app-only `reroll_dice` tool).\n"
         "- Ask me to `summarize_rolls` for the history.\n")


def call(core: CoreThread, method: str, params: dict[str, Any] | None = None) -> Any:
    """One Bridge call on the core loop."""
    assert core.web is not None
    reply = core.submit(core.web.bridge.handle({"id": 1, "method": method, "params": params or {}})).result(60)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply["result"]


def wait(page: Any, predicate: Any, timeout: float = 20.0) -> None:
    """Poll a predicate while letting Playwright process events."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        page.wait_for_timeout(100)
    raise TimeoutError("screenshot setup timed out")


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        print("screenshots: Debian's chromium is needed (scripts/setup.sh installs it)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="moka-shots-"))
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("Rolling three dice for you. "), ToolCall("roll_dice", {"sides": 6, "count": 3}, fragments=4)],
                     [Text(REPLY)]])
        config = {"mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}},
                  "agent": {"backend": "ollama", "model": "llama3.2", "baseUrls": {"ollama": srv.base_url}}}
        (tmp / "config.json").write_text(json.dumps(config))
        core = CoreThread(Paths(tmp / "config.json", tmp / "data"), mode="browser")
        core.start()
        app = core.app
        assert app is not None and core.web is not None
        core.submit(app.servers.wait_ready(timeout=30)).result(60)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 820}, device_scale_factor=1)
            page.goto(core.web.url + "#chat")
            page.wait_for_selector('#conn[data-status="online"]')
            call(core, "theme.set", {"mode": "light"})
            page.wait_for_selector("#welcome .welcome-tool", timeout=20000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(OUT / "welcome-light.png"))
            page.fill("#composer", "Roll three dice, please")
            page.keyboard.press("Enter")
            wait(page, lambda: any(v.state == "ready" and "result_sent" in v.timings for v in app.view_host.views.values()))
            page.wait_for_selector('.msg[data-role="assistant"] strong')
            page.wait_for_timeout(800)
            call(core, "tools.run", {"server": "moka-demo", "tool": "open_playground", "arguments": {}})
            for mode in ("light", "dark"):
                call(core, "theme.set", {"mode": mode})
                page.wait_for_timeout(600)
                for screen in ("chat", "runner", "servers", "inspector", "settings"):
                    page.click(f"#nav-{screen}")
                    if screen == "runner":
                        page.evaluate("location.hash = '#runner?server=moka-demo&tool=roll_dice'")
                    page.wait_for_timeout(900)
                    page.screenshot(path=str(OUT / f"{screen}-{mode}.png"))
                    print(f"wrote docs/screenshots/{screen}-{mode}.png")
            browser.close()
        core.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
