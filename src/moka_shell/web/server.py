"""The local web server: two loopback origins on one asyncio loop.

    host origin     http://127.0.0.1:<p1>   Moka's UI (static files) + the token-guarded WebSocket API
    sandbox origin  http://127.0.0.1:<p2>   the sandbox proxy page + view documents (CSP as an HTTP header)

Two ports make two origins, which the MCP Apps spec requires of a web-page host.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import socket
from collections.abc import MutableMapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from moka_shell.core.shell import Endpoints
from moka_shell.errors import BridgeError
from moka_shell.web.docs_pages import doc_pages, doc_text
from moka_shell.web.prompt_server import PromptServer
from moka_shell.web.frame_limits import WS_MAX_SIZE, FrameRefused, check_frame, frame_text, leading_id
from moka_shell.web.hygiene import HostGuard, loopback_origins
from moka_shell.web.outbox import LIMIT as OUTBOX_LIMIT
from moka_shell.web.outbox import LIVE_LIMIT as OUTBOX_LIVE_LIMIT
from moka_shell.web.outbox import SocketOutbox
from moka_shell.web.proxy_page import build_proxy_page
from moka_shell.web.replies import NO_STORE, BodyTooLarge, read_body, too_large
from moka_shell.web.sandbox_origin import SandboxOrigin
from moka_shell.web.static_files import StaticFilesInMemory

if TYPE_CHECKING:
    from moka_shell.bridge import Bridge
    from moka_shell.core.app import MokaApp

log = logging.getLogger("moka.web")
STATIC = Path(str(resources.files("moka_shell") / "web" / "static"))
# The UI page: only its own scripts; frames only from this run's sandbox origin.
HOST_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
            "connect-src 'self' ws://127.0.0.1:{host_port} ws://localhost:{host_port}; frame-src {sandbox}; "
            "object-src 'none'; base-uri 'none'; frame-ancestors 'none'")  # no other page may frame Moka (S12)
# The docs page: its own script and styles, the pages it fetches, no frames, no other origin.
DOCS_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
RPC_BODY_LIMIT = 16 * 1024 * 1024  # the WebSocket's own message cap (uvicorn's default), for plain HTTP too
MAX_RUNNING = 512  # bridge calls one socket may have under way; more are answered with an error at once
GRACEFUL_STOP = 5  # s for requests under way when Moka stops; then their connections are closed


def free_socket(port: int = 0) -> socket.socket:
    """A listening-ready socket on 127.0.0.1 (port 0 = any free port)."""
    # IPPROTO_TCP, not 0: asyncio turns Nagle off (TCP_NODELAY) only for sockets that say TCP, and
    # with Nagle on, every reply written in two pieces waits ~40 ms for a delayed ACK (see bench/).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.set_inheritable(False)
    return sock


class WebServer:
    """Serves both origins for one MokaApp and carries the Bridge over WebSocket.

    Made with ``app=None``, it serves the UI's files at once and holds everything that needs the
    core (the socket, RPC, view documents) until ``attach(app)``: the desktop window loads the page
    while the core is still importing (docs/performance.md §13).
    """

    def __init__(self, app: MokaApp | None, *, port: int = 0, token: str | None = None) -> None:
        self._app: MokaApp | None = None
        self._bridge: Bridge | None = None
        self._attached = asyncio.Event()
        self._closed = False
        self.waiting_for_core = 0  # requests held until the core is attached (the page's socket, RPC)
        self.token = token or secrets.token_urlsafe(24)
        self._host_sock = free_socket(port)
        self._sandbox_sock = free_socket(0)
        self.host_port = self._host_sock.getsockname()[1]
        self.sandbox_port = self._sandbox_sock.getsockname()[1]
        # proxy.js inline, allowed by its hash; only Moka's page may frame the proxy, or another
        # local page could drive it (S12).
        self.proxy = build_proxy_page(STATIC / "sandbox", frame_ancestors=self.host_origins())
        # Handed to MokaApp.start: the core reads where it is served from this value.
        self.endpoints = Endpoints(host_origin=f"http://127.0.0.1:{self.host_port}",
                                   sandbox_origin=f"http://127.0.0.1:{self.sandbox_port}", token=self.token,
                                   proxy_page=self.proxy.path)
        self.sandbox = SandboxOrigin(self)
        self.reports = self.sandbox.reports
        self.sockets: set[WebSocket] = set()  # the pages connected now
        self.outboxes: dict[WebSocket, SocketOutbox] = {}  # what each of them has yet to be sent
        self.outbox_limit, self.outbox_live_limit = OUTBOX_LIMIT, OUTBOX_LIVE_LIMIT
        self.outbox_peak = 0  # the most that waited for any page since start, closed sockets included
        self._servers: list[PromptServer] = []
        self._tasks: list[asyncio.Task[Any]] = []
        self._closing: set[asyncio.Task[None]] = set()  # close frames to pages that stopped reading
        if app is not None:
            self.attach(app)

    def attach(self, app: MokaApp) -> None:
        """Serve ``app``: the requests that waited for the core go on now."""
        if self._app is app:
            return
        from moka_shell.bridge import Bridge  # with the core's imports, not before the page is served

        self._app, self._bridge = app, Bridge(app)
        self._bridge.methods["app.sockets"] = self._sockets
        self._attached.set()

    @property
    def app(self) -> MokaApp:
        """The core this server carries (only once attached)."""
        if self._app is None:
            raise RuntimeError("the web server has no core attached yet")
        return self._app

    @property
    def bridge(self) -> Bridge:
        """The Bridge the page's socket talks to (only once attached)."""
        if self._bridge is None:
            raise RuntimeError("the web server has no core attached yet")
        return self._bridge

    async def _core_ready(self) -> bool:
        """Wait until the core is attached; False when the server stopped first (the core failed to start)."""
        self.waiting_for_core += 1
        try:
            await self._attached.wait()
        finally:
            self.waiting_for_core -= 1
        return self._app is not None and not self._closed

    @property
    def url(self) -> str:
        """The UI's URL with this run's token."""
        return f"{self.endpoints.host_origin}/?token={self.token}"

    # ---- host origin -------------------------------------------------------------------------

    def host_app(self) -> Starlette:
        """Routes of the host origin."""
        routes = [
            Route("/", self._index),
            WebSocketRoute("/api/ws", self._ws),
            Route("/api/rpc", self._rpc_post, methods=["POST"]),
            Mount("/static", StaticFilesInMemory(STATIC)),
            Route("/docs/", self._docs_page),
            Route("/docs/pages.json", self._docs_list),
            Route("/docs/{name}.md", self._docs_text),
            Route("/{path:path}", self._not_found),
        ]
        return Starlette(routes=routes)

    # The user docs (Help → Documentation): no token, like the static files; nothing in them is secret.
    async def _docs_page(self, request: Request) -> Response:
        return FileResponse(STATIC / "docs.html", headers={**NO_STORE, "Content-Security-Policy": DOCS_CSP})

    async def _docs_list(self, request: Request) -> Response:
        return Response(json.dumps(doc_pages()), media_type="application/json", headers=NO_STORE)

    async def _docs_text(self, request: Request) -> Response:
        text = doc_text(request.path_params["name"])
        if text is None:
            return PlainTextResponse("no such page in Moka's docs", status_code=404)
        return PlainTextResponse(text, media_type="text/markdown; charset=utf-8", headers=NO_STORE)

    async def _index(self, request: Request) -> Response:
        # The same policy in every mode: the desktop windows use the WebSocket too, not
        # pywebview's js_api (whose functions pywebview builds with new Function()).
        csp = HOST_CSP.format(host_port=self.host_port, sandbox=self.endpoints.sandbox_origin)
        return FileResponse(STATIC / "index.html", headers={**NO_STORE, "Content-Security-Policy": csp})

    async def _not_found(self, request: Request) -> Response:
        return PlainTextResponse("not found", status_code=404)

    def _token_ok(self, given: str | None) -> bool:
        return bool(given) and secrets.compare_digest(str(given), self.token)

    async def _rpc_post(self, request: Request) -> Response:
        """One Bridge frame over plain HTTP (for scripts and tests); needs the token header."""
        if not self._token_ok(request.headers.get("x-moka-token")):
            return PlainTextResponse("missing or wrong token", status_code=403)
        if not await self._core_ready():
            return PlainTextResponse("Moka is stopping", status_code=503)
        try:
            text = frame_text(await read_body(request, RPC_BODY_LIMIT))
            check_frame(text)  # size and depth before decoding (S2, S12)
            frame = json.loads(text)
        except BodyTooLarge:
            return too_large(RPC_BODY_LIMIT)
        except FrameRefused as exc:
            return PlainTextResponse(exc.message, status_code=400)
        except (json.JSONDecodeError, RecursionError):
            return PlainTextResponse("body must be JSON", status_code=400)
        reply = await self.bridge.handle(frame)
        return Response(json.dumps(reply), media_type="application/json")

    async def _ws(self, ws: WebSocket) -> None:
        if not self._token_ok(ws.query_params.get("token")):
            await ws.close(code=4403, reason="missing or wrong token")
            return
        if not await self._core_ready():  # the page waits in CONNECTING while the core starts
            await ws.close(code=1012, reason="Moka is stopping")
            return
        await ws.accept()
        self.sockets.add(ws)
        # Bounded (finding N1): a page that stops reading loses its live Inspector pushes first,
        # then its socket; it reconnects and resyncs like after any lost connection.
        outbox = SocketOutbox(limit=self.outbox_limit, live_limit=self.outbox_live_limit)
        self.outboxes[ws] = outbox
        live = {"inspector": False}  # set by the page while its Inspector screen is open
        unsubscribe = self.app.subscribe(lambda ev, data: outbox.put(json.dumps({"event": ev, "data": data},
                                                                                default=str)))

        def inspector_event(line: str) -> None:
            if live["inspector"]:
                outbox.put('{"event": "inspector.event", "data": ' + line + "}", live=True)

        unsubscribe_inspector = self.app.inspector.subscribe_json(inspector_event)

        async def sender() -> None:
            # Whatever piled up goes as one message: a view's tools/call alone makes four
            # inspector events, and one WebSocket message each was most of the bridge's cost.
            while True:
                await ws.send_text(await outbox.take())

        async def receive() -> MutableMapping[str, Any] | None:
            """The page's next message, or None once its outbox overflowed (the page stopped reading)."""
            got, stop = asyncio.ensure_future(ws.receive()), asyncio.ensure_future(outbox.overflowed.wait())
            await asyncio.wait((got, stop), return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if got.done():
                return got.result()
            got.cancel()
            log.warning("a page stopped reading its socket (over %d MiB waiting): closing it; it will reconnect",
                        outbox.limit >> 20)
            return None

        async def run(frame: Any) -> None:
            if isinstance(frame, dict) and frame.get("method") == "inspector.live":
                live["inspector"] = bool((frame.get("params") or {}).get("on"))
                outbox.put(json.dumps({"id": frame.get("id"), "result": {}}))
                return
            reply = await self.bridge.handle(frame)
            if reply is not None:
                outbox.put(json.dumps(reply, default=str))

        def refuse(fid: Any, code: int, message: str) -> None:
            outbox.put(json.dumps({"id": fid, "error": {"code": code, "message": message}}))

        send_task = asyncio.create_task(sender())
        running: set[asyncio.Task[Any]] = set()
        try:
            while True:
                message = await receive()
                if message is None or message["type"] == "websocket.disconnect":
                    break
                # Whatever arrives, this frame gets an answer and the socket stays up (S2): the
                # size and depth are checked on the text, before json.loads can recurse.
                text = ""
                try:
                    text = frame_text(message.get("text") if message.get("text") is not None else message.get("bytes"))
                    check_frame(text)
                    frame = json.loads(text)
                except FrameRefused as exc:
                    refuse(leading_id(text), exc.code, exc.message)
                    continue
                except (json.JSONDecodeError, RecursionError):
                    refuse(leading_id(text), -32700, "not JSON")
                    continue
                if len(running) >= MAX_RUNNING:
                    refuse(frame.get("id") if isinstance(frame, dict) else None, BridgeError.DENIED,
                           f"too many calls at once on this connection (over {MAX_RUNNING}); try again")
                    continue
                task = asyncio.create_task(run(frame))
                running.add(task)
                task.add_done_callback(running.discard)
        except WebSocketDisconnect:
            pass
        finally:
            self.sockets.discard(ws)
            self.outboxes.pop(ws, None)
            self.outbox_peak = max(self.outbox_peak, outbox.peak)
            unsubscribe()
            unsubscribe_inspector()
            send_task.cancel()
            if outbox.overflowed.is_set():
                # Its state is gone already; the close frame waits behind what the page never read,
                # so it is sent beside the rest of Moka, not in its way.
                closing = asyncio.create_task(self._close_stalled(ws))
                self._closing.add(closing)
                closing.add_done_callback(self._closing.discard)

    async def _sockets(self, p: dict[str, Any]) -> dict[str, Any]:
        """The pages' sockets: how many are open, and their outboxes' bounds, peak and what waits now (characters)."""
        return {"open": len(self.sockets), "limit": self.outbox_limit, "liveLimit": self.outbox_live_limit,
                "peak": max([self.outbox_peak, *(o.peak for o in self.outboxes.values())]),
                "waiting": sum(o.size for o in self.outboxes.values())}

    async def _close_stalled(self, ws: WebSocket) -> None:
        with contextlib.suppress(RuntimeError, OSError, asyncio.TimeoutError, WebSocketDisconnect):  # gone already
            await asyncio.wait_for(ws.close(code=4008, reason="the page stopped reading; reconnect to resync"), 10)

    # ---- sandbox origin ----------------------------------------------------------------------

    def host_origins(self) -> str:
        """The host origin's two spellings (127.0.0.1 and localhost), for frame-ancestors."""
        return " ".join(sorted(loopback_origins(self.host_port)))

    @property
    def attached(self) -> MokaApp | None:
        """The core, once attached (None before: the page may load first)."""
        return self._app

    # ---- running -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Serve both origins on the running loop."""
        # Every request must name Moka's own address (DNS rebinding, S12); the UI's socket also its page.
        apps = ((HostGuard(self.host_app(), port=self.host_port, ws_origins=loopback_origins(self.host_port)),
                 self._host_sock),
                (HostGuard(self.sandbox.routes(), port=self.sandbox_port), self._sandbox_sock))
        for asgi, sock in apps:
            # No per-message deflate: frames are small and local, and compressing each one cost
            # more than it saved (bench/: the bridge round trip). The frame cap is a little over
            # Moka's own, so an oversized frame gets Moka's error, not a dropped socket.
            config = uvicorn.Config(asgi, log_level="warning", ws="wsproto", lifespan="off", access_log=False,
                                    ws_per_message_deflate=False, ws_max_size=WS_MAX_SIZE,
                                    timeout_graceful_shutdown=GRACEFUL_STOP)
            server = PromptServer(config)
            server.install_signal_handlers = lambda: None  # type: ignore[attr-defined,method-assign]
            self._servers.append(server)
            self._tasks.append(asyncio.get_running_loop().create_task(server.serve(sockets=[sock])))
        for server, task in zip(self._servers, self._tasks):
            up = asyncio.ensure_future(server.up.wait())
            await asyncio.wait([up, task], return_when=asyncio.FIRST_COMPLETED)
            up.cancel()
            if not server.started:
                error = task.exception() if task.done() else None
                raise error or RuntimeError("Moka's web server did not start")

    async def stop(self) -> None:
        """Stop serving."""
        self._closed = True
        self._attached.set()  # requests still waiting for a core that never came are answered now
        for server in self._servers:
            server.request_exit()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if not self._servers:  # never started: nothing else would close its listening sockets
            self._host_sock.close()
            self._sandbox_sock.close()
