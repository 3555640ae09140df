"""``moka check``: render each UI tool of a server through the real UI page, proxy, CSP and
dispatcher, headless, and report on every view."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable
from typing import Any

from moka_shell.core.mcp.catalog import ToolEntry
from moka_shell.errors import MokaError, ServerUnavailableError, UnknownServerError, UsageError
from moka_shell.inspector import EventFilter
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread
from moka_shell.shells.check_report import CheckReport, ViewReport

SETTLE = 0.8  # seconds to keep watching a view after its result arrived, for late errors


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy a tool's required fields: defaults, enums, minimums."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        out[name] = _example(props.get(name) or {})
    return out


def _example(s: dict[str, Any]) -> Any:
    if "default" in s:
        return s["default"]
    if s.get("enum"):
        return s["enum"][0]
    kind = s.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind in ("integer", "number"):
        return s.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return example_arguments(s)
    return s.get("examples", ["example"])[0] if isinstance(s.get("examples"), list) else "example"


class Engine:
    """Something that can show a URL headless."""

    name = "?"

    def open(self, url: str) -> None:
        """Load the page."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the engine."""


def chromium_path() -> str | None:
    """Debian's Chromium, or MOKA_CHROMIUM."""
    return os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


class ChromiumEngine(Engine):
    """Chromium through Playwright (sync API, on the calling thread)."""

    name = "chromium"

    def __init__(self) -> None:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(
            executable_path=chromium_path(), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-sync"])
        self.page = self.browser.new_page(viewport={"width": 900, "height": 800})

    def open(self, url: str) -> None:
        self.page.goto(url, wait_until="domcontentloaded")

    def close(self) -> None:
        self.browser.close()
        self._pw.stop()


def pick_engine(engine: str) -> str:
    """chromium when Playwright and a Chromium are here, else the pywebview engine."""
    if engine != "auto":
        return engine
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "webview"
    return "chromium" if chromium_path() else "webview"


class Checker:
    """Drives one check: the core on its thread, views rendered one at a time."""

    def __init__(self, paths: Paths, server: str, *, tool: str | None, tool_args: dict[str, Any] | None,
                 timeout: float) -> None:
        self.server, self.tool, self.tool_args, self.timeout = server, tool, tool_args, timeout
        self.core = CoreThread(paths, mode="check", servers=[server], store=False, handshake_timeout=timeout)
        self.report = CheckReport(server=server, engine="?")

    def start(self) -> list[ToolEntry]:
        """Start the core, wait for the server; returns the UI tools to render."""
        self.core.start()
        app = self.core.app
        assert app is not None
        if self.server not in app.config.mcp_servers:
            raise UnknownServerError(self.server, sorted(app.config.mcp_servers))
        self.core.submit(app.servers.wait_ready([self.server], timeout=self.timeout + 10)).result()
        conn = app.servers.get(self.server)
        self.report.server_status = conn.status
        self.report.protocol_version = conn.protocol_version
        if conn.status != "ready":
            raise ServerUnavailableError(self.server, conn.status, conn.error)
        tools = list(conn.tools.values())
        for t in tools:
            for problem in t.problems:
                self.report.add_problem(t.name, problem)
        if self.tool:
            chosen = [t for t in tools if t.name == self.tool]
            if not chosen:
                raise UsageError(f"server {self.server!r} has no tool {self.tool!r}")
            if not chosen[0].resource_uri:
                self.report.add_problem(self.tool, "has no UI resource (no valid _meta.ui.resourceUri)")
            return [t for t in chosen if t.resource_uri]
        return [t for t in tools if t.resource_uri and t.model_visible] + \
            [t for t in tools if t.resource_uri and not t.model_visible]

    def render(self, entry: ToolEntry, open_url: Callable[[str], None]) -> ViewReport:
        """Run the tool, show its view, wait for the outcome, and report."""
        app = self.core.app
        assert app is not None
        args = self.tool_args if self.tool_args is not None else example_arguments(entry.input_schema)
        vr = ViewReport(tool=entry.name, arguments=args, resource_uri=entry.resource_uri or "")

        async def begin() -> str | None:
            view = await app.view_host.open_view(self.server, entry.name)
            if view is None:
                return None
            view.timings["t0"] = time.perf_counter()
            asyncio.get_running_loop().create_task(self._call(view, entry.name, args))
            return view.id

        try:
            view_id = self.core.submit(begin()).result(30)
        except MokaError as exc:
            vr.fail(str(exc))
            return vr
        if view_id is None:
            vr.fail("the tool has no UI")
            return vr
        view = app.view_host.views[view_id]
        for problem in view.policy.rejected:
            self.report.add_problem(entry.name, problem)
        vr.csp = view.policy.header
        open_url(app.view_host.popout_url(view) + "&check=1")
        deadline = time.monotonic() + self.timeout + 2
        settled_at: float | None = None
        while time.monotonic() < deadline:
            if view.state == "failed":
                break
            done = view.initialized and ("result_sent" in view.timings or view.cancelled is not None)
            if done and settled_at is None:
                settled_at = time.monotonic()
            if settled_at is not None and time.monotonic() - settled_at >= SETTLE:
                break
            time.sleep(0.05)
        self._collect(vr, view)
        self.core.submit(app.view_host.close(view, "check finished")).result(10)
        return vr

    async def _call(self, view: Any, tool: str, args: dict[str, Any]) -> None:
        app = self.core.app
        assert app is not None
        try:
            await app.view_host.run_tool(self.server, tool, args, view=view)
        except MokaError:
            pass  # the view got tool-cancelled; the report shows it

    def _collect(self, vr: ViewReport, view: Any) -> None:
        app = self.core.app
        assert app is not None
        t0 = view.timings.get("t0") or view.timings.get("created", 0)
        vr.timings_ms = {k: round((v - t0) * 1000, 1) for k, v in view.timings.items()
                         if k != "t0" and isinstance(v, float) and v >= t0}
        vr.app_info = view.app_info
        vr.app_tools = [str(t.get("name", "?")) for t in view.app_tools]
        events = app.inspector.query(EventFilter(view=view.id), limit=5000)
        vr.transcript = [{"direction": e["direction"], "channel": e["channel"], "method": e.get("method"),
                          "message": e["message"]} for e in events if e["channel"] == "ui.rpc"]
        for e in events:
            if e.get("method") == "view/csp-report":
                report = (e["message"].get("report") or {}).get("csp-report") or e["message"].get("report") or {}
                if isinstance(report, dict) and report.get("blocked-uri") != "eval":
                    line = f"{report.get('effective-directive') or report.get('violated-directive')} " \
                           f"blocked {report.get('blocked-uri')}"
                    if line not in vr.csp_violations:
                        vr.csp_violations.append(line)
        vr.problems.extend(p for p in view.problems if p not in vr.problems)
        vr.warnings.extend(w for w in view.warnings if w not in vr.warnings)
        if view.cancelled and view.result is None:
            vr.problems.append(f"the tool call did not succeed: {view.cancelled}")
        if view.state == "failed":
            vr.fail(view.failure or "failed")
        elif not view.initialized:
            vr.fail(f"no handshake within {self.timeout:g} s")
        elif "result_sent" not in view.timings and view.cancelled is None:
            vr.fail("the view never received its tool result")
        elif view.problems:
            vr.fail(view.problems[0])
        if view.result and view.result.get("isError"):
            vr.problems.append("the tool returned isError: true")

    def stop(self) -> None:
        """Stop the core."""
        self.core.stop()


def run_check(paths: Paths, server: str, *, tool: str | None, tool_args: dict[str, Any] | None,
              timeout: float, engine: str) -> CheckReport:
    """Run a whole check with the chosen engine."""
    kind = pick_engine(engine)
    checker = Checker(paths, server, tool=tool, tool_args=tool_args, timeout=timeout)
    checker.report.engine = kind
    try:
        entries = checker.start()
        if kind == "chromium":
            eng = ChromiumEngine()
            try:
                for entry in entries:
                    checker.report.views.append(checker.render(entry, eng.open))
            finally:
                eng.close()
        else:
            from moka_shell.shells.check_webview import render_all_in_webview

            render_all_in_webview(checker, entries)
    finally:
        checker.stop()
    return checker.report

