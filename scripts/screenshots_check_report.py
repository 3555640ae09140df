"""Take screenshots of `moka check --html`'s report in light and dark into docs/screenshots/.

    .venv/bin/python scripts/screenshots_check_report.py

Checks the demo server and the late-failures fixture (a passing, a failing and a warning view
each) into HTML reports, then opens the late-failures one in Chromium with no network.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "screenshots"
SERVERS = {"late": {"command": sys.executable, "args": [str(ROOT / "tests" / "servers" / "late_failures_server.py")]}}


def main() -> int:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        print("screenshots: Debian's chromium is needed (scripts/setup.sh installs it)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="moka-report-") as tmp:
        folder = Path(tmp)
        (folder / "config.json").write_text(json.dumps({"mcpServers": SERVERS}))
        env = {**os.environ, "MOKA_CONFIG": str(folder / "config.json"), "MOKA_DATA_DIR": str(folder / "data")}
        page_file = folder / "report.html"
        subprocess.run([sys.executable, "-m", "moka_shell", "check", "late", "--tool", "csp_late",
                        "--html", str(page_file)], env=env, capture_output=True, check=False, timeout=240)
        OUT.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            for scheme in ("light", "dark"):
                context = browser.new_context(viewport={"width": 1200, "height": 860}, color_scheme=scheme)
                context.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
                page = context.new_page()
                page.goto(page_file.as_uri())
                page.locator("summary", has_text="Timeline").click()
                page.evaluate("scrollTo(0, 0)")
                page.screenshot(path=str(OUT / f"check-report-{scheme}.png"))
                context.close()
            browser.close()
    print(f"screenshots: wrote {OUT}/check-report-light.png and -dark.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
