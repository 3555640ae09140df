"""ViewHost: the life of every view — created with a tool call, fed in order, torn down properly."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.shell import Emit, Endpoints, Mode, ShellActions
from moka_shell.core.views.dispatcher import Dispatcher
from moka_shell.core.views.display import DisplayMode
from moka_shell.core.views.document import inject_prelude, popout_url, proxy_url
from moka_shell.core.views.host_context import build_host_context, with_extras
from moka_shell.core.views.parking import Parking
from moka_shell.core.views.ports import ChatPort, ConsentAsk, HostContextHook
from moka_shell.core.views.retention import Retention
from moka_shell.core.views.storage import ViewStorage
from moka_shell.core.views.storage_channel import StorageChannel
from moka_shell.core.views.own_origins import view_policy
from moka_shell.core.views.profile import HostProfile
from moka_shell.core.views.view import View, notification
from moka_shell.errors import BridgeError, MokaError, ViewError
from moka_shell.inspector import Inspector
from moka_shell.registered import Registered

HANDSHAKE_TIMEOUT = 20.0
TEARDOWN_TIMEOUT = 3.0


class ViewHost:
    """Creates views for UI tools and is the only place that sends anything to a view."""

    def __init__(self, *, servers: ServerManager, inspector: Inspector, emit: Emit,
                 display_modes: dict[str, Registered[DisplayMode]], theme: Callable[[], dict[str, Any]],
                 host_context_hook: HostContextHook, consent: ConsentAsk, actions: ShellActions,
                 mode: Mode = "headless", handshake_timeout: float = HANDSHAKE_TIMEOUT) -> None:
        self.servers = servers
        self.inspector = inspector
        self.emit = emit
        self.display_modes = display_modes
        self.consent = consent
        self.endpoints = Endpoints()  # set by MokaApp.start, once the web server has its ports
        self.chat: ChatPort | None = None  # set by MokaApp when conversations are stored
        self.profile: HostProfile | None = None  # `moka check --profile`: what Moka advertises, never its rules
        self._theme = theme
        self._host_context_hook = host_context_hook
        self._actions = actions
        self._mode = mode
        self.views: dict[str, View] = {}
        self.viewport: dict[str, Any] = {"width": 760, "height": 700}
        self.client: dict[str, Any] = {}
        self.handshake_timeout = handshake_timeout
        self._watchers: set[asyncio.Task[None]] = set()
        self.parking = Parking(self)
        self.retention = Retention(self)  # what ended or parked views let go of (memory plateau, R5.3)
        self.storage = StorageChannel(self, ViewStorage())
        self.dispatcher = Dispatcher(self)

    # ---- creating views ---------------------------------------------------------------------

    async def open_view(self, server: str, tool_name: str, *, call_id: str | None = None,
                        conversation_id: str | None = None, message_id: str | None = None,
                        record_id: str | None = None) -> View | None:
        """Create and announce a view for a UI tool (None when the tool has no UI)."""
        conn = self.servers.ready(server)
        entry = conn.tool(tool_name)
        if not entry.resource_uri:
            return None
        resource = await conn.ui_resource(entry.resource_uri)
        allow_eval = bool((conn.config.model_extra or {}).get("allowUnsafeEval", False))
        view_id = "v" + secrets.token_hex(6)
        policy = await view_policy(self, server, resource.ui_meta, view_id, allow_eval)  # vetted, devices asked
        view = View(id=view_id, server=server, tool=entry, call_id=call_id or "c" + secrets.token_hex(6),
                    resource=resource, policy=policy, conversation_id=conversation_id, message_id=message_id,
                    record_id=record_id)
        view.mark("created")
        view.problems.extend(policy.rejected)
        view.context_extras = await self._host_context_hook(server, tool_name, dict(self._core_context(view)))
        self.views[view.id] = view
        self.inspector.record("view", {"event": "created", "uri": resource.uri, "csp": policy.header,
                                           "allow": policy.allow, "rejected": policy.rejected,
                                           "tool": tool_name}, server=server, view=view.id, method="view/created")
        self._announce(view)
        if resource.error:
            self.fail(view, resource.error)
        else:
            self._watch(view)
        return view

    def _watch(self, view: View) -> None:
        task = asyncio.get_running_loop().create_task(self._watch_handshake(view, view.key))
        self._watchers.add(task)
        task.add_done_callback(self._watchers.discard)

    def _announce(self, view: View) -> None:
        self.emit("view.created", self.describe(view))

    def describe(self, view: View) -> dict[str, Any]:
        """The ``view.created`` payload: everything the UI needs to mount the view."""
        mode = self.display_modes[view.display_mode].obj
        data: dict[str, Any] = {
            "viewId": view.id, "server": view.server, "tool": view.tool.name, "callId": view.call_id,
            "title": view.tool.title or view.tool.name, "proxyUrl": self.proxy_url(view), "allow": view.policy.allow,
            "displayMode": view.display_mode, "wireMode": mode.wire_mode, "state": view.state,
            "prefersBorder": view.resource.ui_meta.get("prefersBorder", None),
        }
        for key, value in (("conversationId", view.conversation_id), ("messageId", view.message_id),
                           ("recordId", view.record_id), ("height", view.height), ("failure", view.failure)):
            if value:
                data[key] = value
        return {k: v for k, v in data.items() if v is not None}

    def proxy_url(self, view: View) -> str:
        """Where the UI loads this view's sandbox proxy (the sandbox origin)."""
        return proxy_url(self.endpoints, view.id, view.key, view.policy.allow)

    def document(self, view_id: str, key: str) -> tuple[str, str]:
        """The view's HTML (with the prelude) and its CSP header, if the key matches."""
        view = self.views.get(view_id)
        if view is None or not secrets.compare_digest(view.key, key) or view.resource.html is None:
            raise ViewError("no such view document")
        view.mark("document")
        return inject_prelude(view.resource.html, self.storage.script(view)), view.policy.header

    async def _watch_handshake(self, view: View, key: str) -> None:
        await asyncio.sleep(self.handshake_timeout)
        if view.key == key and view.state == "loading" and not view.initialized:
            got_init = "initialize" in view.timings
            reason = (f"the view did not finish the MCP Apps handshake within {self.handshake_timeout:g} s "
                      + ("(ui/initialize was answered, but ui/notifications/initialized never came)" if got_init
                         else "(no ui/initialize arrived: the app's script did not start or could not reach Moka)"))
            if view.problems:
                reason += "; before that, " + "; ".join(view.problems[:3])
            # An app that needs eval() fails exactly like this; the card offers the server's opt-in.
            tried_eval = any("eval()" in w for w in view.warnings)
            if tried_eval:
                reason += "; it tried eval(), which Moka's view policy blocks unless the server allows it"
            self.fail(view, reason, {"needsEval": True, "server": view.server} if tried_eval else None)

    # ---- feeding views ----------------------------------------------------------------------

    def send(self, view: View, message: dict[str, Any]) -> None:
        """Deliver a host → view message, queued until the view is initialized."""
        if not view.live:
            return
        if not view.initialized:
            view.queue.append(message)
            return
        self._post(view, message)

    def _post(self, view: View, message: dict[str, Any]) -> None:
        self.inspector.record("ui.rpc", message, direction="out", server=view.server, view=view.id)
        self.emit("view.post", {"viewId": view.id, "message": message})

    def on_initialized(self, view: View) -> None:
        """The view finished its handshake: replay input and result, then flush the queue."""
        view.initialized = True
        view.state = "ready"
        view.mark("initialized")
        self.parking.enforce()
        self.emit("view.status", {"viewId": view.id, "state": "ready"})
        for msg in view.data_messages():
            self._post(view, msg)
            view.mark("input_sent" if msg["method"].endswith("tool-input") else "result_sent")
        queued, view.queue = view.queue, []
        for msg in queued:
            self._post(view, msg)

    def set_partial(self, view: View, arguments: dict[str, Any]) -> None:
        """Streamed, repaired arguments: only before tool-input, only to an initialized view."""
        if view.arguments is None and view.initialized and view.live:
            self._post(view, notification("ui/notifications/tool-input-partial", {"arguments": arguments}))

    def set_input(self, view: View, arguments: dict[str, Any]) -> None:
        """The complete arguments (sent once; replayed on a new handshake)."""
        if view.arguments is not None:
            return
        view.arguments = arguments
        if view.initialized and view.live:
            self._post(view, notification("ui/notifications/tool-input", {"arguments": arguments}))
            view.mark("input_sent")

    def set_result(self, view: View, result: dict[str, Any]) -> None:
        """The tool's result (after tool-input)."""
        if view.result is not None or view.cancelled is not None:
            return
        view.result = result
        view.mark("result_ready")
        if view.initialized and view.live and view.arguments is not None:
            self._post(view, notification("ui/notifications/tool-result", result))
            view.mark("result_sent")

    def cancel(self, view: View, reason: str) -> None:
        """The call failed or was stopped: the view gets tool-cancelled."""
        if view.result is not None or view.cancelled is not None:
            return
        view.cancelled = reason
        if view.initialized and view.live:
            if view.arguments is None:
                view.arguments = {}
                self._post(view, notification("ui/notifications/tool-input", {"arguments": {}}))
            self._post(view, notification("ui/notifications/tool-cancelled", {"reason": reason}))

    def fail(self, view: View, reason: str, detail: dict[str, Any] | None = None) -> None:
        """Replace the view with an error card that says why."""
        if view.state in ("failed", "closed"):
            return
        view.state = "failed"
        view.failure = reason
        self.inspector.record("view", {"event": "failed", "reason": reason, "detail": detail or {}},
                                  server=view.server, view=view.id, method="view/failed")
        self.emit("view.failed", {"viewId": view.id, "reason": reason, "detail": detail or {}})
        self._drop_inflight(view)
        self.retention.settled(view)

    async def request(self, view: View, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """A host → view request; raises BridgeError on an error reply or a timeout."""
        rid = view.new_request_id()
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        view.pending[rid] = fut
        self.send(view, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            reply = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise BridgeError(BridgeError.INTERNAL_ERROR, f"the view did not answer {method} within {timeout:g} s")
        finally:
            view.pending.pop(rid, None)
        if "error" in reply:
            err = reply["error"] if isinstance(reply["error"], dict) else {}
            raise BridgeError(int(err.get("code", -32603)), str(err.get("message", "error")))
        return reply.get("result") or {}

    # ---- running tools ----------------------------------------------------------------------

    async def run_tool(self, server: str, tool: str, arguments: dict[str, Any], *,
                       conversation_id: str | None = None, message_id: str | None = None,
                       view: View | None = None, call_id: str | None = None,
                       with_view: bool = True) -> tuple[str, View | None, dict[str, Any]]:
        """Call a tool and feed its view (created here unless given); errors cancel the view."""
        conn = self.servers.ready(server)
        conn.tool(tool)
        if view is None and with_view:
            view = await self.open_view(server, tool, call_id=call_id, conversation_id=conversation_id,
                                        message_id=message_id)
        if view is not None:
            self.set_input(view, arguments)
        try:
            result = await conn.call_tool(tool, arguments)
        except asyncio.CancelledError:
            if view is not None:
                self.cancel(view, "The person stopped this tool call.")
            raise
        except MokaError as exc:
            if view is not None:
                self.cancel(view, f"The tool call failed: {exc.message}")
            raise
        if view is not None:
            self.set_result(view, result)
        return (view.call_id if view else call_id or "c" + secrets.token_hex(6)), view, result

    # ---- display modes, context, teardown ----------------------------------------------------

    def _core_context(self, view: View) -> dict[str, Any]:
        mode = self.display_modes[view.display_mode].obj
        return build_host_context(
            theme=self._theme(), display_mode=mode.wire_mode, available=self.available_wire_modes(),
            fixed=mode.fixed_size, viewport=self._viewport_for(view, mode.fixed_size), client=self.client,
            tool=view.tool.to_mcp_tool(), call_id=view.call_id, platform="desktop" if self._mode == "desktop" else "web")

    def host_context(self, view: View) -> dict[str, Any]:
        """The view's full hostContext right now (the core's keys, then what plugins added)."""
        ctx = with_extras(self._core_context(view), view.context_extras)
        return self.profile.context(ctx) if self.profile else ctx

    def available_wire_modes(self) -> list[str]:
        """Wire modes some registered display mode provides."""
        modes: list[str] = sorted({r.obj.wire_mode for r in self.display_modes.values()})
        return self.profile.wire_modes(modes) if self.profile else modes

    def _viewport_for(self, view: View, fixed: bool) -> dict[str, Any]:
        if fixed:
            return {"width": view.viewport.get("width") or self.viewport.get("width"),
                    "height": view.viewport.get("height") or self.viewport.get("height")}
        return {"width": view.viewport.get("width") or 0}

    def set_display_mode(self, view: View, mode_id: str) -> str:
        """Apply a registered display mode; returns the wire mode now in effect."""
        if mode_id not in self.display_modes:
            raise BridgeError(BridgeError.INVALID_PARAMS, f"unknown display mode {mode_id!r} "
                              f"(available: {', '.join(self.display_modes)})")
        mode = self.display_modes[mode_id].obj
        changed = mode_id != view.display_mode
        view.display_mode = mode_id
        self.emit("view.display", {"viewId": view.id, "mode": mode_id, "wireMode": mode.wire_mode,
                                       "opensWindow": mode.opens_window})
        if mode.opens_window and self._mode != "desktop":
            self.emit("popout.open", {"viewId": view.id, "url": self.popout_url(view)})
        if changed:
            ctx = self.host_context(view)
            self.send(view, notification("ui/notifications/host-context-changed",
                                         {"displayMode": ctx["displayMode"],
                                          "containerDimensions": ctx["containerDimensions"]}))
        return str(mode.wire_mode)

    def popout_url(self, view: View) -> str:
        """The host-origin page that shows one view alone (browser-mode pop-out)."""
        return popout_url(self.endpoints, view.id)

    def container_changed(self, view: View, dims: dict[str, Any]) -> None:
        """The frame's box changed: tell the view (nested objects are sent whole)."""
        new = {k: int(v) for k, v in dims.items() if k in ("width", "height") and isinstance(v, (int, float))}
        if new == {k: view.viewport.get(k) for k in new}:
            return
        view.viewport.update(new)
        ctx = self.host_context(view)
        self.send(view, notification("ui/notifications/host-context-changed",
                                     {"containerDimensions": ctx["containerDimensions"]}))

    def theme_changed(self) -> None:
        """Send the new theme and styles to every live view."""
        theme = self._theme()
        params = {"theme": theme["resolved"], "styles": {"variables": theme["variables"]}}
        params = self.profile.styles(params) if self.profile else params
        for view in list(self.views.values()):
            if view.live:
                self.send(view, notification("ui/notifications/host-context-changed", params))

    async def close(self, view: View, reason: str = "closed", *, park: bool = False) -> None:
        """Tear a view down: ui/resource-teardown (waited for, briefly), then remove the frame."""
        if not view.live:
            return
        if view.initialized:
            try:
                await self.request(view, "ui/resource-teardown", {"reason": reason}, TEARDOWN_TIMEOUT)
            except BridgeError:
                pass  # most views answer -32601 or never: an error means go ahead
        self._drop_inflight(view)
        view.state = "parked" if park else "closed"
        view.parking = False
        view.initialized = False
        view.key = secrets.token_urlsafe(18)  # the old frame's document URL stops working
        view.app_tools = []
        view.mark("closed")
        self.inspector.record("view", {"event": "parked" if park else "closed", "reason": reason},
                                  server=view.server, view=view.id, method=f"view/{view.state}")
        self.emit("view.status", {"viewId": view.id, "state": view.state})
        if not park:
            self.storage.forget(view)
            self.emit("view.closed", {"viewId": view.id})
        self.retention.settled(view)

    def remount(self, view: View) -> None:
        """Bring back a parked view: a new frame, then input and result replayed."""
        if view.state != "parked":
            return
        view.state = "loading"
        self.retention.restore(view)
        view.timings = {}
        view.mark("created")
        self._announce(view)
        self._watch(view)

    def _drop_inflight(self, view: View) -> None:
        for task in view.inflight.values():
            task.cancel()
        view.inflight.clear()
        for fut in view.pending.values():
            if not fut.done():
                fut.set_result({"error": {"code": -32603, "message": "view closed"}})

    def open_link(self, url: str) -> None:
        """Open a link outside Moka (the shell decides how)."""
        self.inspector.record("view", {"event": "open-link", "url": url}, method="view/open-link")
        self._actions.open_link(url)

    async def save_download(self, file: dict[str, Any]) -> None:
        """Hand a view's download to the shell (save dialog or browser download)."""
        self.inspector.record("view", {"event": "download", "filename": file["filename"]}, method="view/download")
        await self._actions.save_download(file)

    async def close_all(self) -> None:
        """Tear down every live view (shutdown)."""
        await asyncio.gather(*(self.close(v, "Moka is closing") for v in list(self.views.values()) if v.live),
                             return_exceptions=True)
        for task in list(self._watchers):
            task.cancel()

    def get(self, view_id: str) -> View:
        """A view by id, or a JSON-RPC error."""
        view = self.views.get(view_id)
        if view is None:
            raise BridgeError(BridgeError.INVALID_PARAMS, f"no view {view_id!r}")
        return view
