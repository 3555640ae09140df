"""Take screenshots of the chat composer into docs/screenshots/: the model picker, the "/" prompt
menu and an attached image, each in light and dark.

    .venv/bin/python scripts/screenshots_composer.py

Like scripts/screenshots.py: Moka in browser mode with a local fake model (which lists two
models) and tests/servers/prompts_server.py (a prompt and a resource), driven in Chromium.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--no-first-run", "--disable-sync", "--disable-component-update"]
# A small picture to attach: 2×2 red pixels, scaled up by the chip's thumbnail.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP8z8DAwMDAxAAAHwQCAB7dVEMAAAAASUVORK5CYII="
PASTE = """(b64) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const dt = new DataTransfer();
  dt.items.add(new File([bytes], "chart.png", { type: "image/png" }));
  const box = document.querySelector('#composer');
  box.focus();
  box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
}"""


def call(core: CoreThread, method: str, params: dict[str, Any] | None = None) -> Any:
    """One Bridge call on the core loop."""
    assert core.web is not None
    reply = core.submit(core.web.bridge.handle({"id": 1, "method": method, "params": params or {}})).result(60)
    if "error" in reply:
        raise RuntimeError(reply["error"])
    return reply["result"]


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        print("screenshots: Debian's chromium is needed (scripts/setup.sh installs it)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="moka-shots-"))
    with FakeOpenAIServer(models=("llama3.2", "qwen2.5-vl")) as srv:
        srv.enqueue([Text("A bar chart: sales rise each quarter.")])
        config = {"mcpServers": {"trips": {"command": sys.executable,
                                           "args": [str(ROOT / "tests" / "servers" / "prompts_server.py")]}},
                  "agent": {"backend": "ollama", "model": "llama3.2", "baseUrls": {"ollama": srv.base_url}}}
        (tmp / "config.json").write_text(json.dumps(config))
        core = CoreThread(Paths(tmp / "config.json", tmp / "data"), mode="browser")
        core.start()
        assert core.app is not None and core.web is not None
        core.submit(core.app.servers.wait_ready(timeout=30)).result(60)
        call(core, "settings.testBackend", {"backend": "ollama"})  # the picker lists the endpoint's models
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
            page = browser.new_page(viewport={"width": 1100, "height": 720}, device_scale_factor=1)
            page.goto(core.web.url + "#chat")
            page.wait_for_selector('#conn[data-status="online"]')
            page.locator("#composer").wait_for(state="visible", timeout=20000)
            for mode in ("light", "dark"):
                call(core, "theme.set", {"mode": mode})
                page.wait_for_timeout(500)
                page.click("#composer-model")
                page.locator("#composer-model-pick").wait_for(timeout=10000)
                page.select_option("#composer-model-pick", "qwen2.5-vl")
                page.fill("#composer-system", "Answer briefly, with numbers.")
                page.wait_for_timeout(300)
                page.screenshot(path=str(OUT / f"composer-model-picker-{mode}.png"))
                page.keyboard.press("Escape")
                page.fill("#composer", "")
                page.locator("#composer").type("/pla")
                page.locator('#slash-menu .slash-item[data-name="plan_trip"]').wait_for(timeout=15000)
                page.wait_for_timeout(200)
                page.screenshot(path=str(OUT / f"composer-slash-{mode}.png"))
                page.keyboard.press("Escape")
                page.fill("#composer", "What does this chart show?")
                page.evaluate(PASTE, PNG)
                page.locator("#composer-chips .attach-chip").wait_for(timeout=10000)
                page.wait_for_timeout(200)
                page.screenshot(path=str(OUT / f"composer-attachment-{mode}.png"))
                page.locator("#composer-chips .attach-remove").click()
                for name in ("model-picker", "slash", "attachment"):
                    print(f"wrote docs/screenshots/composer-{name}-{mode}.png")
            browser.close()
        core.stop()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
