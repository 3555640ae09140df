"""``moka check``: render each UI tool of a server through the real UI page, proxy, CSP and
dispatcher, headless, under one or more host profiles, and report on every view."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moka_shell.core.mcp.catalog import ToolEntry
from moka_shell.core.themes import theme_payload
from moka_shell.core.views.host_context import view_styles
from moka_shell.core.views.view import View, notification
from moka_shell.errors import MokaError, ServerUnavailableError, UnknownServerError, UsageError
from moka_shell.inspector import EventFilter
from moka_shell.paths import Paths
from moka_shell.shells.check import baseline, launch_hint, loads
from moka_shell.shells.check import storage as check_storage
from moka_shell.shells.check.engine_thread import EngineThread
from moka_shell.shells.check.engines import ChromiumEngine, Engine, pick_engine
from moka_shell.shells.check.profiles import ProfileSpec, resolve
from moka_shell.shells.check.report import CheckReport, ViewReport, lacking
from moka_shell.shells.check.watch import collect, watch
from moka_shell.shells.core_thread import CoreThread
from moka_shell.shells.main_waits import wait_result

if TYPE_CHECKING:
    from moka_shell.core.mcp.answers import ScriptedAnswers

SETTLE = 1.5  # default: seconds a view must stay quiet after its result before it is judged


@dataclass
class CheckOptions:
    """Everything ``moka check`` was asked for (one field per CLI option)."""

    tool: str | None = None
    tool_args: dict[str, Any] | None = None
    timeout: float = 20.0
    settle: float = SETTLE
    engine: str = "auto"
    profiles: list[str] | None = None  # names, "all", or None for moka
    screenshot_dir: str | None = None
    record: str | None = None  # write the view's session here (shells/replay.py reads it back)
    no_storage: bool = False  # views get no storage, as in hosts without Moka's (shells/check_storage.py)
    answers: ScriptedAnswers | None = None  # servers' questions answered up front (--answer…); else refused
    baselines: baseline.Baselines | None = None  # --baseline: screenshots compared with (or written to) a folder
    process_ends_after: bool = False  # `moka check`: a browser nothing needed ends with the process, unwaited


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


class Checker:
    """Drives one check: the core on its thread, views rendered one at a time."""

    def __init__(self, paths: Paths, server: str, options: CheckOptions, *, serve: bool = True) -> None:
        self.server, self.options = server, options
        self.timeout, self.settle = options.timeout, options.settle
        # ``serve=False``: the web server (and the view host) wait for a view to render (``prepare``).
        self.core = CoreThread(paths, mode="check", servers=[server], store=False, handshake_timeout=options.timeout,
                               answers=options.answers, serve=serve)
        self.report = CheckReport(server=server, engine="?", tool=options.tool, settle=options.settle)
        self._lock = threading.Lock()
        self._consent: list[dict[str, Any]] | None = None
        self._wall0 = time.time()
        self.ui_tools: list[str] = []  # the server's tools with a UI, once listed (start)

    def start(self) -> list[ToolEntry]:
        """Start the core, wait for the server; returns the UI tools to render."""
        self.core.start()
        app = self.core.app
        assert app is not None
        app.subscribe(self._on_event)
        if self.server not in app.config.mcp_servers:
            raise UnknownServerError(self.server, sorted(app.config.mcp_servers))
        wait_result(self.core.submit(app.servers.wait_ready([self.server], timeout=self.timeout + 10)))
        conn = app.servers.get(self.server)
        self.report.server_status = conn.status
        self.report.protocol_version = conn.protocol_version
        if conn.status != "ready":
            raise ServerUnavailableError(self.server, conn.status, conn.error)
        tools = list(conn.tools.values())
        self.ui_tools = [t.name for t in tools if t.resource_uri]
        for t in tools:
            for problem in t.problems:
                self.report.add_problem(t.name, problem)
        tool = self.options.tool
        if tool:
            chosen = [t for t in tools if t.name == tool]
            if not chosen:
                raise UsageError(f"server {self.server!r} has no tool {tool!r}")
            if not chosen[0].resource_uri and not self.report.metadata:
                self.report.nothing_to_check = f"tool {tool!r} has no UI (no _meta.ui.resourceUri)"
            return [t for t in chosen if t.resource_uri]
        entries = [t for t in tools if t.resource_uri and t.model_visible] + \
            [t for t in tools if t.resource_uri and not t.model_visible]
        if not entries and not self.report.metadata:
            self.report.nothing_to_check = (f"server {self.server!r} has no UI tool ({len(tools)} tool"
                                            f"{'' if len(tools) == 1 else 's'}; none has a _meta.ui.resourceUri)")
        return entries

    def _on_event(self, event: str, data: Any) -> None:
        # Runs on the core's loop thread: consent the check answered for the view being rendered.
        if event == "consent.would_ask" and isinstance(data, dict):
            with self._lock:
                if self._consent is not None:
                    self._consent.append({**data, "t": round((time.time() - self._wall0) * 1000, 1)})

    def render(self, entry: ToolEntry, engine: Engine, spec: ProfileSpec) -> ViewReport:
        """Run the tool, show its view, watch it until quiet, and report."""
        app = self.core.app
        assert app is not None
        args = self.options.tool_args if self.options.tool_args is not None else example_arguments(entry.input_schema)
        vr = ViewReport(tool=entry.name, arguments=args, resource_uri=entry.resource_uri or "", profile=spec.name)

        async def begin() -> str | None:
            app.view_host.use_profile(spec.profile)
            view = await app.view_host.open_view(self.server, entry.name)
            if view is None:
                return None
            view.mark("t0")
            asyncio.get_running_loop().create_task(self._call(view, entry.name, args))
            return view.id

        with self._lock:
            self._consent, self._wall0 = [], time.time()
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
        for problem in view.policy.ignored:
            self.report.add_problem(entry.name, problem, harmless=True)
        vr.csp = view.policy.header
        engine.open(app.view_host.popout_url(view) + "&check=1")
        watched = watch(view, app.inspector, settle=self.settle,
                        deadline=time.monotonic() + self.timeout + self.settle, pause=engine.pause)
        probe = engine.probe(view.id) if view.initialized else None
        painted = engine.painted(view.id) if view.initialized and view.state != "failed" else None
        shot = bool(self.options.screenshot_dir) and view.initialized and view.state != "failed"
        unsteady = self._screenshots(vr, view, engine, spec) if shot else set()
        vr.engine_lacks = [lack for lack in engine.lacks if self._wants(lack)]
        events = app.inspector.query(EventFilter(view=view.id), limit=5000)
        with self._lock:
            consent, self._consent = self._consent or [], None
        collect(vr, view, events, wall0=self._wall0, timeout=self.timeout, watched=watched,
                seen={"probe": probe, "painted": painted,
                      "loads": loads.reasons(loads.failed_urls(events), engine.failed_loads())}, profile=spec.profile, consent=consent, engine=engine.name)
        check_storage.report(app, view, vr, self.options.no_storage)
        if self.options.baselines and shot:  # after collect: a change adds to what the view did, last
            baseline.judge(vr, baseline.stem(self.server, vr.tool, spec.name), self.options.baselines, unsteady)
        if self.options.record:
            from moka_shell.shells.check.replay import write_recording

            write_recording(app, view, self.options.record)
        self.core.submit(app.view_host.close(view, "check finished")).result(10)
        return vr

    def _wants(self, lack: str) -> bool:
        return lack != "screenshots" or bool(self.options.screenshot_dir or self.options.baselines)

    def _screenshots(self, vr: ViewReport, view: View, engine: Engine, spec: ProfileSpec) -> set[str]:
        """A PNG of the settled view in light, then in dark (told by host-context-changed).

        For baselines each is taken until two in a row agree; returns the schemes that never did.
        """
        unsteady: set[str] = set()
        folder = Path(self.options.screenshot_dir or ".")
        folder.mkdir(parents=True, exist_ok=True)
        stem = baseline.stem(self.server, vr.tool, spec.name)
        for dark in (False, True):
            scheme = "dark" if dark else "light"
            if dark:
                engine.set_scheme(True)
                self._send_theme(view, "dark")
                watch(view, self.core.app.inspector, settle=min(self.settle, 1.0),  # type: ignore[union-attr]
                      deadline=time.monotonic() + self.settle + 3, pause=engine.pause)
            path = folder / f"{stem}-{scheme}.png"
            taken, steady = (baseline.steady_screenshot(engine, str(path)) if self.options.baselines
                             else (engine.screenshot(str(path)), True))
            if taken:
                vr.screenshots[scheme] = str(path)
            if taken and not steady:
                unsteady.add(scheme)
        engine.set_scheme(False)
        self._send_theme(view, "light")
        return unsteady

    def _send_theme(self, view: View, scheme: str) -> None:
        app = self.core.app
        assert app is not None
        reg = app.themes.get(app.config.theme.theme_id) or next(iter(app.themes.values()))
        theme = theme_payload(reg.obj, reg.obj.theme_id, scheme, "dark" if scheme == "dark" else "light")
        params: dict[str, Any] = {"theme": theme["resolved"], "styles": view_styles(theme)}
        if profile := app.view_host.profile:
            params = profile.styles(params)

        async def send() -> None:
            app.view_host.send(view, notification("ui/notifications/host-context-changed", params))

        self.core.submit(send()).result(5)

    async def _call(self, view: View, tool: str, args: dict[str, Any]) -> None:
        app = self.core.app
        assert app is not None
        try:
            await app.view_host.run_tool(self.server, tool, args, view=view)
        except MokaError:
            pass  # the view got tool-cancelled; the report shows it

    def prepare(self) -> None:
        """Before the first view: the web server up (a check that expected none starts it now), storage set."""
        self.core.serve()
        assert self.core.app is not None
        check_storage.prepare(self.core.app, self.options.no_storage)

    def render_all(self, entries: list[ToolEntry], engine: Engine, specs: list[ProfileSpec]) -> None:
        """Every tool under every profile, tool by tool."""
        for entry in entries:
            for spec in specs:
                self.report.views.append(self.render(entry, engine, spec))

    def stop(self) -> None:
        """Stop the core."""
        self.core.stop()


def run_check(paths: Paths, server: str, options: CheckOptions) -> CheckReport:
    """Run a whole check with the chosen engine and profiles."""
    specs = resolve(options.profiles)
    kind = pick_engine(options.engine)
    checker = Checker(paths, server, options, serve=launch_hint.expects_views(paths.data_dir, server, options.tool))
    checker.report.engine = kind
    if b := options.baselines:
        checker.report.baseline = {"folder": b.folder, "update": b.update, "tolerancePercent": b.tolerance,
                                   "diffFolder": str(b.diff_dir)}
    checker.report.profiles = [{"name": s.name, "title": s.title, "summary": s.summary, "sources": list(s.sources)}
                               for s in specs]
    # Chromium launches on its own thread while the core and the server start (it needs neither,
    # and took a second before the first view, issue 30.5); nothing waits for it unless a view does.
    # Not when the server's last listing had nothing this check renders (launch_hint.py).
    # The web server and the view host, too, wait for a view then.
    expected = launch_hint.expects_views(paths.data_dir, server, options.tool)
    early = kind == "chromium" and expected
    browser = EngineThread(ChromiumEngine) if early else None
    try:
        entries = checker.start()
        launch_hint.remember(paths.data_dir, server, checker.ui_tools)
        if entries and kind == "chromium" and browser is None:
            browser = EngineThread(ChromiumEngine)  # the memory was out of date: launch now
        if entries:
            checker.prepare()
        if not entries:
            pass  # nothing to render
        elif browser is not None:
            browser.run(lambda engine: checker.render_all(entries, engine, specs))
        else:
            from moka_shell.shells.check.webview_engine import render_in_webview

            render_in_webview(lambda engine: checker.render_all(entries, engine, specs))
    except BaseException as exc:
        if browser is not None:
            # Closed before the error goes on (the process may not end at once); but Ctrl-C must not
            # wait for a view still rendering on the browser's thread: that ends with the process.
            browser.release(wait=not isinstance(exc, KeyboardInterrupt))
        raise
    else:
        if browser is not None:
            browser.release(wait=not options.process_ends_after)
    finally:
        checker.stop()
    lacks = {lack for v in checker.report.views for lack in v.engine_lacks}
    checker.report.engine_lacks = [lacking(kind, lack) for lack in sorted(lacks)]
    return checker.report
