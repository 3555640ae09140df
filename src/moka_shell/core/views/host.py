"""ViewHost: the life of every view — created with a tool call, fed in order, torn down properly."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from typing import Any

from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.shell import Emit, Endpoints, Mode, ShellActions
from moka_shell.core.views.csp import ViewPolicy
from moka_shell.core.views.delivery import Delivery
from moka_shell.core.views.dispatcher import Dispatcher
from moka_shell.core.views.display import DisplayMode
from moka_shell.core.views.document import csp_audit_script, inject_prelude, mount_data, popout_url, proxy_url
from moka_shell.core.views.host_context import build_host_context, view_styles, with_extras
from moka_shell.core.views.own_origins import view_policy
from moka_shell.core.views.parking import Parking
from moka_shell.core.views.permissions import DevicePermissions
from moka_shell.core.views.ports import ChatPort, ConsentAsk, HostContextHook
from moka_shell.core.views.profile import HostProfile
from moka_shell.core.views.retention import RecordReader, Retention
from moka_shell.core.views.storage import ViewStorage
from moka_shell.core.views.storage_channel import StorageChannel
from moka_shell.core.views.view import View, notification
from moka_shell.errors import BridgeError, MokaError, ViewError
from moka_shell.inspector import Inspector
from moka_shell.registered import Registered

HANDSHAKE_TIMEOUT = 20.0
TEARDOWN_TIMEOUT = 3.0


class ViewHost:
    """Creates views for UI tools, feeds them in order (through its ``Delivery``) and tears them down.

    Built with what never changes in a run; ``attach`` (called once, by ``MokaApp.start``) adds what
    the start decides: where pages load views, the chat and the store's records and storage.
    """

    def __init__(self, *, servers: ServerManager, inspector: Inspector, emit: Emit,
                 display_modes: dict[str, Registered[DisplayMode]], theme: Callable[[], dict[str, Any]],
                 host_context_hook: HostContextHook, consent: ConsentAsk, actions: ShellActions,
                 mode: Mode = "headless", handshake_timeout: float = HANDSHAKE_TIMEOUT) -> None:
        self.servers = servers
        self.inspector = inspector
        self.emit = emit
        self.display_modes = display_modes
        self._consent = consent
        self._theme = theme
        self._host_context_hook = host_context_hook
        self._actions = actions
        self._mode = mode
        self._profile: HostProfile | None = None  # `moka check --profile`: what Moka advertises, never its rules
        self.views: dict[str, View] = {}
        self.viewport: dict[str, Any] = {"width": 760, "height": 700}
        self.client: dict[str, Any] = {}
        self.handshake_timeout = handshake_timeout
        self._watchers: set[asyncio.Task[None]] = set()
        self.delivery = Delivery(views=self.views, inspector=inspector, emit=emit)
        self.send = self.delivery.send  # the one way a message reaches a view
        self.request = self.delivery.request
        self.parking = Parking(self.views)
        self.permissions = DevicePermissions(consent)
        # What the start decides (``attach``): the web server's origins, the chat, the store.
        self.endpoints = Endpoints()
        self.retention: Retention
        self.storage: StorageChannel
        self.dispatcher: Dispatcher

    def attach(self, *, endpoints: Endpoints, chat: ChatPort, records: RecordReader | None,
               storage: ViewStorage) -> None:
        """``MokaApp.start``'s one wiring step, before any view exists: where pages load views
        (``endpoints``), the chat views talk to (``NoChat`` where no conversations are kept), the
        store's view records a parked view reads back (None: nothing is stored) and views' storage."""
        self.endpoints = endpoints
        self.retention = Retention(self.views, self.parking, records)  # memory plateau (R5.3)
        self.storage = StorageChannel(storage, self.delivery, self.inspector)
        self.dispatcher = Dispatcher(host=self, views=self.views, chat=chat, servers=self.servers,
                                     inspector=self.inspector, consent=self._consent, storage=self.storage)

    @property
    def profile(self) -> HostProfile | None:
        """The host profile in use (``moka check --profile``), if any."""
        return self._profile

    def use_profile(self, profile: HostProfile | None) -> None:
        """Advertise to the next views as ``profile``'s host does (None: as Moka does)."""
        self._profile = profile

    def provide_storage(self, provided: bool) -> None:
        """``moka check --no-storage`` (False): views get what an opaque origin gives, storage that throws."""
        self.storage.provided = provided

    def page_reported(self, client: dict[str, Any], viewport: dict[str, Any]) -> None:
        """The page's locale, time zone, input kinds and window size (``app.hello``), for host contexts."""
        self.client.update(client)
        self.viewport.update(viewport)

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
        policy = await self.policy(server, resource.ui_meta, view_id, allow_eval=allow_eval)
        view = View(id=view_id, server=server, tool=entry, call_id=call_id or "c" + secrets.token_hex(6),
                    resource=resource, policy=policy, conversation_id=conversation_id, message_id=message_id,
                    record_id=record_id)
        view.mark("created")
        view.problems.extend(policy.rejected + policy.denied)
        view.context_extras = await self._host_context_hook(server, tool_name, dict(self._core_context(view)))
        self.views[view.id] = view
        self.inspector.record("view", {"event": "created", "uri": resource.uri, "csp": policy.header,
                                           "allow": policy.allow, "rejected": policy.rejected,
                                           "ignored": policy.ignored, "denied": policy.denied,
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
        return mount_data(view, self.display_modes[view.display_mode].obj.wire_mode, self.proxy_url(view))

    def proxy_url(self, view: View) -> str:
        """Where the UI loads this view's sandbox proxy (the sandbox origin)."""
        return proxy_url(self.endpoints, view.id, view.key, view.policy.allow)

    def document(self, view_id: str, key: str) -> tuple[str, str]:
        """The view's HTML (with the prelude) and its CSP header, if the key matches."""
        view = self.views.get(view_id)
        if view is None or not secrets.compare_digest(view.key, key) or view.resource.html is None:
            raise ViewError("no such view document")
        view.mark("document")
        return inject_prelude(view.resource.html, csp_audit_script(view) + self.storage.script(view)), view.policy.header

    async def policy(self, server: str, ui_meta: dict[str, Any] | None, view_id: str, *,
                     allow_eval: bool) -> ViewPolicy:
        """A new view's policy: its declarations vetted against Moka's origins, its devices asked for."""
        return await view_policy(self.endpoints, self.permissions, server, ui_meta, view_id, allow_eval)

    def adopt(self, view: View) -> None:
        """A view made elsewhere joins this host (``moka replay``'s, from its recording)."""
        self.views[view.id] = view

    async def _watch_handshake(self, view: View, key: str) -> None:
        await asyncio.sleep(self.handshake_timeout)
        if view.key == key and view.state == "loading" and not view.initialized:
            self.fail(view, *view.handshake_missed(self.handshake_timeout))

    # ---- feeding views (the order rules are the View's; what is sent when is here) ----------

    def on_initialized(self, view: View) -> None:
        """The view finished its handshake: replay input and result, then flush the queue."""
        view.handshake_done()
        view.mark("initialized")
        self._park_excess()
        self.emit("view.status", {"viewId": view.id, "state": "ready"})
        self.delivery.flush(view)

    def set_partial(self, view: View, arguments: dict[str, Any]) -> None:
        """Streamed, repaired arguments: kept until tool-input; sent now to an initialized view, else at its handshake."""
        if view.give_partial(arguments) and view.initialized and view.live:
            self.delivery.post(view, notification("ui/notifications/tool-input-partial", {"arguments": arguments}))

    def set_input(self, view: View, arguments: dict[str, Any]) -> None:
        """The complete arguments (sent once; replayed on a new handshake)."""
        if view.give_input(arguments) and view.initialized and view.live:
            self.delivery.post(view, notification("ui/notifications/tool-input", {"arguments": arguments}))
            view.mark("input_sent")

    def set_result(self, view: View, result: dict[str, Any]) -> None:
        """The tool's result (after tool-input)."""
        if not view.give_result(result):
            return
        view.mark("result_ready")
        if view.initialized and view.live:
            self.delivery.post(view, notification("ui/notifications/tool-result", result))
            view.mark("result_sent")

    def cancel(self, view: View, reason: str) -> None:
        """The call failed or was stopped: the view gets tool-cancelled (after an empty input if none came)."""
        if view.ended:
            return
        told = view.initialized and view.live
        if told and view.give_input({}):
            self.delivery.post(view, notification("ui/notifications/tool-input", {"arguments": {}}))
        view.give_cancelled(reason)
        if told:
            self.delivery.post(view, notification("ui/notifications/tool-cancelled", {"reason": reason}))

    def fail(self, view: View, reason: str, detail: dict[str, Any] | None = None) -> None:
        """Replace the view with an error card that says why."""
        if not view.fail(reason):
            return
        self.inspector.record("view", {"event": "failed", "reason": reason, "detail": detail or {}},
                              server=view.server, view=view.id, method="view/failed")
        self.emit("view.failed", {"viewId": view.id, "reason": reason, "detail": detail or {}})
        self.delivery.drop_inflight(view)
        self.retention.settled(view)

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
        return self._profile.context(ctx) if self._profile else ctx

    def available_wire_modes(self) -> list[str]:
        """Wire modes some registered display mode provides."""
        modes: list[str] = sorted({r.obj.wire_mode for r in self.display_modes.values()})
        return self._profile.wire_modes(modes) if self._profile else modes

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
        params = {"theme": theme["resolved"], "styles": view_styles(theme)}
        params = self._profile.styles(params) if self._profile else params
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
        self.delivery.drop_inflight(view)
        view.end(park=park)
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
        view.remount()
        self.retention.restore(view)
        view.timings = {}
        self.restart_frame(view)

    def restart_frame(self, view: View) -> None:
        """A loading view gets a new frame (un-parked, or reloaded by ``moka dev``): announced, its handshake timed."""
        view.mark("created")
        self._announce(view)
        self._watch(view)

    # ---- many views ----------------------------------------------------------------------------

    def offscreen(self, view: View) -> None:
        """A view's card left the screen: it may be parked."""
        self.parking.offscreen(view)
        self._park_excess()

    def onscreen(self, view: View) -> None:
        """A view's card is back on screen: remount it if it was parked."""
        self.parking.onscreen(view)
        self.remount(view)
        self._park_excess()

    def _park_excess(self) -> None:
        for victim in self.parking.victims():
            victim.begin_parking()
            asyncio.get_running_loop().create_task(self.close(victim, "scrolled out of view", park=True))

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
