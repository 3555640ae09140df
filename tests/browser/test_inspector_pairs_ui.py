"""The Inspector's exchange view: a request and its response in one row, timed, with copy as JSON/curl."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from typing import Any

from support import free_port, wait_listening

ROWS = "#inspector-list .insp-row"


def start_http_demo() -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell.demo", "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def test_one_row_per_exchange_with_its_time_and_a_curl_to_repeat_it(moka_factory: Any) -> None:
    proc, url = start_http_demo()
    try:
        moka = moka_factory({"demo-http": {"url": url}})
        moka.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=moka.url)
        page = moka.open("runner")
        moka.call("tools.run", {"server": "demo-http", "tool": "roll_dice", "arguments": {"count": 2}})
        moka.wait_view_ready("roll_dice")
        page.click("#nav-inspector")
        page.select_option("#inspector-filter-channel", "mcp.rpc")
        page.fill("#inspector-filter-method", "tools/call")
        # Exchanges (the default): the request and its response are one row, with the time taken.
        moka.wait(lambda: page.locator(ROWS).count() == 1, what="one row for the tools/call exchange")
        timing = page.locator(f"{ROWS} .c-ms")
        moka.wait(lambda: re.fullmatch(r"\d+ ms|\d+(\.\d)? s", timing.inner_text().strip()), what="a duration")
        assert "st-ok" in (timing.get_attribute("class") or "")
        page.locator(ROWS).first.click()
        detail = page.locator("#inspector-detail")
        parts = detail.locator(".insp-part").all_text_contents()
        assert parts[0] == "Request" and parts[1].startswith("Response · ")
        assert "content" in page.locator("#inspector-detail .insp-response").inner_text()

        page.get_by_role("button", name="Copy as curl").click()
        curl = moka.wait(lambda: page.evaluate("navigator.clipboard.readText()"), what="the curl command")
        words = shlex.split(curl.replace("\\\n", " "))
        assert words[:5] == ["curl", "-sS", "-X", "POST", url]
        body = json.loads(words[words.index("--data") + 1])
        assert body["method"] == "tools/call" and body["params"]["name"] == "roll_dice"

        # Events: every message on its own row again; the response says what it answers.
        page.click("label:has(#inspector-mode-events)")
        moka.wait(lambda: page.locator(ROWS).count() == 2, what="the request and the response as two rows")
        methods = page.locator(f"{ROWS} .c-method").all_inner_texts()
        assert methods == ["tools/call", "result · tools/call"], methods
        page.locator(ROWS).nth(1).click()
        page.get_by_role("button", name="Show request").click()
        # The list re-renders in the next animation frame (select → schedule): wait for it, not one look.
        moka.wait(lambda: page.locator(f"{ROWS}.selected .c-method").all_inner_texts() == ["tools/call"],
                  10, "the request's row selected")
        assert not moka.console or not any("pageerror" in c for c in moka.console), moka.console
    finally:
        proc.kill()  # an HTTP server with open streams may take its time over a graceful stop
        proc.wait(10)
