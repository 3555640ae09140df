"""Moka against the official ext-apps AppBridge, side by side in the same Chromium.

The reference is a host page of our own (bench/appbridge/host.js) built on the AppBridge of
``@modelcontextprotocol/ext-apps`` (pinned in tests/npm), bundled by scripts/setup.sh into
bench/appbridge/dist/host.js. For each render it mounts a fresh sandboxed iframe with the app's
HTML, the way the spec's minimal host does, and times mount → ``ui/notifications/initialized``
in the page. Moka's figure is its tool call → view initialized (bench/harness.py's
render_once). Both run in one Playwright Chromium, one tab each, and the series take turns
(the order flips every round), so the machine's drift hits both alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import statistics
import threading
from collections.abc import Iterator
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.context import Context
from bench.env import BENCH, npm, workspace
from bench.harness import VIEWPORT_SIZE, Chromium, Core, core_with_page, render_once
from bench.stats import Result, Target

HOST_DIR = BENCH / "appbridge"
BUNDLE = HOST_DIR / "dist" / "host.js"
APPS = {"vanilla": ("mcp-server-basic-vanillajs", "get-time", "basic-vanillajs"),
        "react": ("mcp-server-basic-react", "get-time", "basic-react"),
        "budget": ("mcp-budget-allocator-server", "get-budget-data", "budget-allocator"),
        "monitor": ("mcp-system-monitor-server", "get-system-info", "system-monitor")}
QUICK, FULL = ["vanilla", "react"], list(APPS)
TARGET = Target(0.8, "Moka's tool call → initialized ≤ 0.8x AppBridge's mount → initialized (median)")
MOUNT = "([html, tool, args, result]) => window.benchMount(html, tool, args, result)"


def missing_bundle() -> str | None:
    """Why the reference cannot run, or None when its bundle is there."""
    if BUNDLE.exists():
        return None
    return (f"{BUNDLE.relative_to(BENCH.parent)} is missing: bundle the AppBridge reference host with "
            "`MOKA_SETUP_TEST=1 bash scripts/setup.sh` (it runs the pinned esbuild from tests/npm)")


def app_document(server: dict[str, Any], tool: str) -> dict[str, Any]:
    """With a bare mcp client: the tool's ui:// HTML and one real result of the tool (as JSON)."""

    async def go() -> dict[str, Any]:
        async with Client(StdioServerParameters(command=server["command"], args=server["args"])) as client:
            listed = await client.list_tools()
            meta = next(t.meta for t in listed.tools if t.name == tool) or {}
            uri = (meta.get("ui") or {}).get("resourceUri") or meta.get("ui/resourceUri")
            if not uri:
                raise RuntimeError(f"{tool} has no ui:// resource")
            read = await client.read_resource(uri)
            html = getattr(read.contents[0], "text", None)
            if not html:
                raise RuntimeError(f"{uri} has no HTML text")
            result = await client.call_tool(tool, {})
            return {"html": html, "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}

    return asyncio.run(go())


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """No request log on stderr."""


@contextlib.contextmanager
def host_server() -> Iterator[str]:
    """The reference host page served from 127.0.0.1 on a free port; yields its URL."""
    handler = functools.partial(_Quiet, directory=str(HOST_DIR))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="appbridge-host", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/host.html"
    finally:
        server.shutdown()
        server.server_close()


def series(core: Core, browser: Chromium, url: str, docs: dict[str, dict[str, Any]],
           repeat: int) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """One warm-up each, then ``repeat`` rounds of Moka and AppBridge renders per app, in turns."""
    width, height = VIEWPORT_SIZE
    page = browser.browser.new_page(viewport={"width": width, "height": height})
    page.goto(url, wait_until="load")
    page.wait_for_function("window.benchReady === true", timeout=15000)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {k: {"moka": [], "appbridge": [], "premounted": []} for k in docs}

    def moka(key: str) -> dict[str, Any]:
        return render_once(core, key, APPS[key][1], {}, browser=browser)

    def premounted(key: str) -> dict[str, Any]:
        # The chat's path: the view is mounted when the model's tool call starts, before it runs.
        return render_once(core, key, APPS[key][1], {}, browser=browser, premount=True)

    def appbridge(key: str) -> dict[str, Any]:
        doc = docs[key]
        stamps: dict[str, Any] = page.evaluate(MOUNT, [doc["html"], APPS[key][1], {}, doc["result"]])
        return stamps

    for key in docs:  # warm-up, not counted: the first frame of each kind starts processes
        moka(key)
        appbridge(key)
    for r in range(repeat):
        for key in docs:
            trio = [("moka", moka), ("appbridge", appbridge), ("premounted", premounted)]
            for name, fn in trio if r % 2 == 0 else reversed(trio):
                out[key][name].append(fn(key))
    page.evaluate("window.benchUnmount()")
    page.close()
    return out


def results(data: dict[str, dict[str, list[dict[str, Any]]]]) -> list[Result]:
    """Per app: Moka's tool call → initialized against AppBridge's mount → initialized."""
    out = []
    for key, runs in data.items():
        label = APPS[key][2]
        ab = [r["initialized"] for r in runs["appbridge"]]
        steps = {k: round(statistics.median(r[k] for r in runs["moka"]), 1)
                 for k in ("mounted", "proxy_ready", "document", "initialize", "initialized")
                 if all(k in r for r in runs["moka"])}
        out.append(Result(f"appbridge.{key}", f"Tool call → view initialized vs the official AppBridge: {label}",
                          "ms", [r["initialized"] for r in runs["moka"]], reference=ab,
                          reference_title="ext-apps AppBridge, fresh sandboxed srcdoc iframe: mount → initialized",
                          target=TARGET, target_on="ratio",
                          notes="same Playwright Chromium, one tab each, interleaved; fresh view each time",
                          extra={"moka_median_ms_from_tool_call": steps,
                                 "appbridge_connected_median_ms": round(statistics.median(
                                     r["connected"] for r in runs["appbridge"]), 1)}))
        out.append(Result(f"appbridge.{key}.premounted",
                          f"Chat path (view mounted at the model's tool-call start): tool call → the initialized "
                          f"view has its result vs the official AppBridge: {label}", "ms",
                          [r["result_sent"] for r in runs["premounted"]], reference=ab,
                          reference_title="ext-apps AppBridge, fresh sandboxed srcdoc iframe: mount → initialized",
                          notes="the view started (and initialized) before the call, as the chat does while the model "
                                "streams the call's arguments; holds when that stream takes longer than the view's start",
                          extra={"appbridge_result_sent_median_ms": round(statistics.median(
                              r["result_sent"] for r in runs["appbridge"]), 1)}))
    return out


def run(ctx: Context) -> list[Result]:
    """Skip with the reason when the bundle is missing; otherwise both series, interleaved."""
    why = missing_bundle()
    if why:
        ctx.log(f"appbridge: skipped: {why}")
        return []
    keys = ctx.pick(QUICK, FULL)
    repeat = ctx.pick(2, 15)
    servers = {k: npm(APPS[k][0]) for k in keys}
    ctx.log(f"appbridge: reading {len(keys)} apps' HTML with a bare mcp client")
    docs = {k: app_document(servers[k], APPS[k][1]) for k in keys}
    with workspace(servers) as ws, host_server() as url:
        ctx.log(f"appbridge: {len(keys)} apps x {repeat}, Moka and the AppBridge reference in turns (Playwright)")
        with core_with_page(ws.paths, playwright=True) as (core, browser):
            assert browser is not None
            data = series(core, browser, url, docs, repeat)
    return results(data)
