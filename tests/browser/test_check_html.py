"""`moka check --html FILE` on the demo server, an official app and a failing view: one file that
opens with no network, in light and dark, with the screenshots, the findings and their fixes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from browser_support import npm_stdio
from support import SERVERS

SERVERS_CONFIG = {"moka-demo": {"command": "moka", "args": ["demo-server"]},
                  "late": {"command": sys.executable, "args": [str(SERVERS / "late_failures_server.py")]}}


def check_html(tmp_path: Path, servers: dict[str, Any], *args: str) -> tuple[int, Path, dict[str, Any]]:
    """`moka check ARGS --html FILE --json`: its exit code, the page, and the JSON report."""
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    page = tmp_path / "out" / f"{args[0]}.html"
    proc = subprocess.run([sys.executable, "-m", "moka_shell", "check", *args, "--html", str(page), "--json"],
                          capture_output=True, text=True, env=env, timeout=240)
    assert page.is_file(), proc.stderr[-3000:]
    return proc.returncode, page, json.loads(proc.stdout)


def open_offline(browser: Any, page_file: Path, scheme: str) -> tuple[Any, Any, list[str]]:
    """The report in Chromium with every request but the file itself refused (and recorded)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", lambda m: refused.append(f"console {m.type}: {m.text}"))
    page.goto(page_file.as_uri())
    return context, page, refused


def test_the_report_of_the_demo_and_an_official_app_opens_offline_in_light_and_dark(tmp_path: Path,
                                                                                     browser: Any) -> None:
    """Two passing servers: each view's verdict and both screenshots, nothing fetched, the theme switch works."""
    servers = {**SERVERS_CONFIG, "vanilla": npm_stdio("mcp-server-basic-vanillajs")}
    for server, tools in (("moka-demo", 2), ("vanilla", 1)):
        code, page_file, report = check_html(tmp_path, servers, server)
        assert code == 0, report
        assert all(v["screenshots"] == {} for v in report["views"])  # taken for the page only, then gone
        for scheme in ("light", "dark"):
            context, page, refused = open_offline(browser, page_file, scheme)
            assert page.evaluate("document.documentElement.dataset.theme") == scheme
            assert page.locator(".view-report").count() == tools
            verdicts = page.locator(".view-report-head > .badge:first-child").all_inner_texts()
            assert len(verdicts) == tools and set(verdicts) <= {"PASS", "WARN"}, verdicts
            images = page.locator(".shot img")
            assert images.count() == 2 * tools
            assert all(images.nth(i).evaluate("(img) => img.complete && img.naturalWidth > 100")
                       for i in range(images.count()))
            page.click("#theme-toggle")
            assert page.evaluate("document.documentElement.dataset.theme") == ("dark" if scheme == "light" else "light")
            assert refused == [], refused
            context.close()


def test_the_report_of_a_failing_view_names_the_block_and_its_fix(tmp_path: Path, browser: Any) -> None:
    """A CSP block after the result: FAILED, the entry that would allow it, the fix, the timeline."""
    code, page_file, _ = check_html(tmp_path, SERVERS_CONFIG, "late", "--tool", "csp_late")
    assert code == 1
    context, page, refused = open_offline(browser, page_file, "light")
    assert page.locator(".report-head .verdict").inner_text() == "FAILED"
    failure = page.locator('.finding[data-severity="failure"]').first
    assert "https://undeclared.example" in failure.inner_text()
    assert '"connectDomains": ["https://undeclared.example"]' in failure.locator(".finding-fix").inner_text()
    page.locator("summary", has_text="Timeline").click()
    assert page.locator(".timeline td", has_text="ui/notifications/tool-result").count() >= 1
    assert refused == [], refused
    context.close()
