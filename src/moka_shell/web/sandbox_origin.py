"""The sandbox origin's routes: the proxy page, the keep-alive page, view documents, CSP reports.

Nothing here reaches Moka's API: a view's document comes from the core's view host under its own
policy (a CSP header with frame-ancestors), and a CSP report is kept only for a live view, with its
report key, within its rate (S8).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from moka_shell.core.views.document import PRELUDE
from moka_shell.core.views.reports import CspReports
from moka_shell.errors import ViewError
from moka_shell.web.frame_limits import FrameRefused, check_frame
from moka_shell.web.replies import IMMUTABLE, NO_STORE, BodyTooLarge, read_body, too_large
from moka_shell.web.view_guard import WEBRTC_GUARD

if TYPE_CHECKING:
    from moka_shell.web.server import WebServer

WARM_PAGE = "<!doctype html><title>Moka sandbox</title>"
CSP_REPORT_LIMIT = 16 * 1024  # a real report is a few hundred bytes plus the view's policy


class SandboxOrigin:
    """The routes of one web server's sandbox origin."""

    def __init__(self, server: WebServer) -> None:
        self.server = server
        self.reports = CspReports()

    def routes(self) -> Starlette:
        """Routes of the sandbox origin: nothing here can reach Moka's API."""
        return Starlette(routes=[
            Route("/proxy.html", self._proxy_page),
            Route("/warm", self._warm_page),
            Route("/view/{view_id}", self._view_doc),
            Route("/csp-report/{view_id}", self._csp_report, methods=["POST"]),
            Route("/{path:path}", self._not_found),
        ])

    async def _not_found(self, request: Request) -> Response:
        return PlainTextResponse("not found", status_code=404)

    async def _proxy_page(self, request: Request) -> Response:
        # At its content-named URL the page never changes, so the browser may keep it: every view
        # after the first gets its proxy without a request. Any other URL is not cached.
        proxy = self.server.proxy
        cache = IMMUTABLE if request.query_params.get("v") == proxy.version else NO_STORE
        return HTMLResponse(proxy.html, headers={**cache, "Content-Security-Policy": proxy.csp})

    async def _warm_page(self, request: Request) -> Response:
        # An empty document that runs and loads nothing: the page keeps one in a sandboxed frame
        # so the browser's process for sandboxed frames stays up between views (js/views/host.js).
        return HTMLResponse(WARM_PAGE, headers={**NO_STORE, "Content-Security-Policy": "default-src 'none'; sandbox",
                                                "X-Content-Type-Options": "nosniff"})

    async def _view_doc(self, request: Request) -> Response:
        app = self.server.attached
        if app is None:  # no view exists before the core does
            return PlainTextResponse("no such view", status_code=404)
        try:
            html, csp = app.view_host.document(request.path_params["view_id"], request.query_params.get("k", ""))
        except ViewError:
            return PlainTextResponse("no such view", status_code=404)
        # WebRTC is not governed by CSP: its constructors go before any of the view's scripts run (S3).
        html = html.replace(PRELUDE, WEBRTC_GUARD + PRELUDE, 1) if PRELUDE in html else WEBRTC_GUARD + html
        # Framed by its proxy (this origin) inside Moka's page, and by nothing else.
        csp += f"; frame-ancestors {self.server.endpoints.sandbox_origin} {self.server.host_origins()}"
        return HTMLResponse(html, headers={**NO_STORE, "Content-Security-Policy": csp,
                                           "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"})

    async def _csp_report(self, request: Request) -> Response:
        # Refused reports get the same 204: a browser does nothing with the answer, and a prober
        # learns nothing.
        view_id = request.path_params["view_id"]
        try:
            raw = await read_body(request, CSP_REPORT_LIMIT)
        except BodyTooLarge:
            return too_large(CSP_REPORT_LIMIT)
        app = self.server.attached
        view = app.view_host.views.get(view_id) if app is not None else None
        if app is None or view is None or not view.live or not self.reports.key_ok(view_id, request.query_params.get("k", "")):
            return Response(status_code=204)
        if not self.reports.admit(view_id):
            if self.reports.throttle.first_drop(view_id, "csp-report"):
                app.inspector.record("view", {"event": "csp-reports-dropped", "reason": "over the view's rate "
                                              "of CSP reports; further ones are dropped unrecorded"},
                                     server=view.server, view=view_id, method="view/csp-report")
            return Response(status_code=204)
        with contextlib.suppress(json.JSONDecodeError, UnicodeDecodeError, RecursionError, FrameRefused):
            text = raw.decode("utf-8") if raw else "{}"
            check_frame(text, limit=CSP_REPORT_LIMIT)
            app.inspector.record("view", {"event": "csp-report", "report": json.loads(text)},
                                 server=view.server, view=view_id, method="view/csp-report")
        return Response(status_code=204)
