"""The one dispatcher for view traffic: validate, log as ``ui.rpc``, enforce policy, answer.

Every message a view sends arrives here (over the page's WebSocket, in every mode) through
``Dispatcher.handle``. Refusals are JSON-RPC errors, never
``isError`` results, so the view SDK's callers see them as failures.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from moka_shell.core.links import open_link_detail
from moka_shell.core.mcp.progress import CallScope
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.views import app_tools
from moka_shell.core.views.host_context import (
    INLINE_MAX_HEIGHT,
    INLINE_MIN_HEIGHT,
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    host_capabilities,
    host_info,
)
from moka_shell.core.views.ports import ChatPort, ConsentAsk, HostSide
from moka_shell.core.views.storage import STORAGE_METHOD
from moka_shell.core.views.storage_channel import StorageChannel
from moka_shell.core.views.throttle import Throttle
from moka_shell.core.views.view import View
from moka_shell.errors import BridgeError, MokaError, UnsafeLinkError, to_jsonrpc
from moka_shell.inspector import Inspector

MAX_MESSAGE_BYTES = 8 * 1024 * 1024
PROXIED = ("resources/read", "resources/list", "resources/templates/list", "prompts/list")
Handler = Callable[[View, dict[str, Any]], Awaitable[Any]]


def sanitize_filename(name: str) -> str:
    """A safe file name from a resource URI's last segment (no paths, no control characters)."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = re.sub(r"[\x00-\x1f<>:\"|?*]", "_", name).strip(" .")
    return name[:120] or "download"


class Dispatcher:
    """Answers view requests and handles view notifications for the ViewHost."""

    def __init__(self, *, host: HostSide, views: dict[str, View], chat: ChatPort, servers: ServerManager,
                 inspector: Inspector, consent: ConsentAsk, storage: StorageChannel) -> None:
        self.host = host
        self._views = views
        self._chat = chat  # a real chat, or NoChat where this run keeps no conversations
        self._servers = servers
        self._inspector = inspector
        self._consent_ask = consent
        self._storage = storage
        self.requests: dict[str, Handler] = {
            "ui/initialize": self._initialize,
            "ping": self._ping,
            "tools/call": self._tools_call,
            "ui/message": self._message,
            "ui/update-model-context": self._update_model_context,
            "ui/open-link": self._open_link,
            "ui/request-display-mode": self._request_display_mode,
            "ui/download-file": self._download_file,
            "sampling/createMessage": self._sampling,
        }
        for method in PROXIED:
            self.requests[method] = functools.partial(self._proxied, method)
        # Repeated handshakes replay input and result (S5): a burst is fine (a page reload
        # re-handshakes every view), a stream is not.
        self.throttle = Throttle({"ui/initialize": (3, 0.2), "ui/notifications/initialized": (3, 0.2)})
        self._asking: set[tuple[str, str]] = set()  # (view, action) waiting for the person (S13)
        self._display_ok: set[str] = set()  # views the person let change their display mode once

    # ---- entry ---------------------------------------------------------------------------------

    async def handle(self, view_id: str, message: Any) -> dict[str, Any] | None:
        """Handle one message from a view; returns the reply to post back, if any."""
        view = self._views.get(view_id)
        if view is not None and isinstance(message, dict) and message.get("method") == STORAGE_METHOD \
                and message.get("id") is None:
            # Moka's own prelude, not the app: handled whatever the view's state (a write may
            # land just after a teardown), never forwarded, never the view's fault.
            self._storage.handle(view, message.get("params"))
            return None
        if view is None or not view.live:
            return None
        size = len(json.dumps(message, default=str)) if message is not None else 0
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._log_in(view, {"invalid": str(message)[:500]})
            return None  # not JSON-RPC: the spec's transports ignore these
        self._log_in(view, message if size <= 64 * 1024 else {**_shape(message), "moka/size": size})
        msg_id = message.get("id")
        method = message.get("method")
        if size > MAX_MESSAGE_BYTES:
            return self._reply(view, msg_id, error=BridgeError(
                BridgeError.INVALID_REQUEST, f"message of {size} bytes is over Moka's {MAX_MESSAGE_BYTES} byte limit"))
        if method is None:
            self._on_response(view, message)
            return None
        if not isinstance(method, str) or ("params" in message and not isinstance(message["params"], dict)):
            return self._reply(view, msg_id, error=BridgeError(BridgeError.INVALID_REQUEST, "malformed request"))
        params = message.get("params") or {}
        if msg_id is None:
            await self._notification(view, method, params)
            return None
        handler = self.requests.get(method)
        refusal = self.host.profile.refusal(method) if self.host.profile else None
        if refusal is not None:  # a host profile without the capability answers as that host would
            return self._reply(view, msg_id, error=BridgeError(BridgeError.METHOD_NOT_FOUND, refusal))
        if handler is None:
            return self._reply(view, msg_id, error=BridgeError(BridgeError.METHOD_NOT_FOUND,
                                                               f"Moka does not handle {method!r}"))
        task = asyncio.current_task()
        if task is not None:
            view.inflight[msg_id] = task
        try:
            result = await handler(view, params)
        except MokaError as exc:  # a view sees the message without the CLI's hint line
            return self._reply(view, msg_id, error=exc)
        except asyncio.CancelledError:
            if task is not None and task.cancelling():
                # cancelled by notifications/cancelled or teardown: answer nothing, as the SDK expects
                view.inflight.pop(msg_id, None)
                return None
            raise
        finally:
            view.inflight.pop(msg_id, None)
        return self._reply(view, msg_id, result=result)

    def _log_in(self, view: View, message: Any) -> None:
        self._inspector.record("ui.rpc", message, direction="in", server=view.server, view=view.id)

    def _reply(self, view: View, msg_id: Any, *, result: Any = None,
               error: MokaError | None = None) -> dict[str, Any]:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if error is not None:
            reply["error"] = to_jsonrpc(error, with_hint=False)
        else:
            reply["result"] = result if result is not None else {}
        self._inspector.record("ui.rpc", reply, direction="out", server=view.server, view=view.id)
        return reply

    def _on_response(self, view: View, message: dict[str, Any]) -> None:
        fut = view.pending.get(message.get("id"))  # type: ignore[arg-type]
        if fut is not None and not fut.done():
            fut.set_result(message)

    # ---- notifications ------------------------------------------------------------------------

    async def _notification(self, view: View, method: str, params: dict[str, Any]) -> None:
        if method == "ui/notifications/initialized":
            if not view.initialized or self._again(view, method):
                self.host.on_initialized(view)
        elif method == "ui/notifications/size-changed":
            mode = self.host.display_modes[view.display_mode].obj
            height = params.get("height")
            if not mode.fixed_size and isinstance(height, (int, float)):
                view.height = int(min(max(height, INLINE_MIN_HEIGHT), INLINE_MAX_HEIGHT))
                self.host.emit("view.size", {"viewId": view.id, "height": view.height})
        elif method == "ui/notifications/request-teardown":
            asyncio.get_running_loop().create_task(self.host.close(view, "the view asked to close"))
        elif method == "notifications/cancelled":
            task = view.inflight.get(params.get("requestId"))
            if task is not None:
                task.cancel()
        elif method == "notifications/message":
            self._view_log(view, params)
        elif method == "notifications/tools/list_changed":
            asyncio.get_running_loop().create_task(self._refresh_app_tools(view))

    def _view_log(self, view: View, params: dict[str, Any]) -> None:
        data = params.get("data")
        if params.get("logger") != "moka.view" or not isinstance(data, dict):
            return
        kind = data.get("kind")
        if kind == "console":
            return  # console.error lines: in the inspector and `moka check`'s report, never a problem strip
        if kind == "csp" and data.get("blockedURI") == "eval":
            # Zod and others probe for eval and fall back; only a warning (a real need shows as a failure).
            view.warnings.append("the view tried eval(), which the CSP blocks; set \"allowUnsafeEval\": true on "
                                 "the server in the config if it needs it")
            return
        if kind == "csp":
            problem = f"blocked by the view's Content-Security-Policy: {data.get('directive')} {data.get('blockedURI')}"
        elif kind == "load":
            problem = f"a {data.get('tag') or 'file'} the view loads failed to load: {data.get('url') or '?'}"
        else:
            problem = f"the view threw an error: {data.get('message')}"
        view.problems.append(problem)
        # Never fatal by itself: a view that really broke misses its handshake, and the
        # failure then names this problem. A live view gets a warning strip.
        self.host.emit("view.problem", {"viewId": view.id, "kind": kind, "reason": problem, "detail": data})

    async def _refresh_app_tools(self, view: View) -> None:
        # The chat offers them to the model while the view lives (core/views/app_tools.py).
        problems = await app_tools.refresh(view, self.host.request)
        self._inspector.record("view", {"event": "app-tools", "tools": [t["name"] for t in view.app_tools],
                                        "problems": problems}, server=view.server, view=view.id,
                               method="view/app-tools")
        for problem in problems:
            if problem not in view.warnings:
                view.warnings.append(f"app tools: {problem}")

    # ---- requests -----------------------------------------------------------------------------

    def _again(self, view: View, method: str) -> bool:
        """May ``view`` repeat ``method`` now? The first refusal is logged; the rest are not."""
        if self.throttle.admit(view.id, method):
            return True
        if self.throttle.first_drop(view.id, method):
            self._inspector.record("view", {"event": "throttled", "method": method, "reason": (
                f"the view repeats {method} too often; Moka ignores the repeats (logged once)")},
                server=view.server, view=view.id, method="view/throttled")
        return False

    async def _initialize(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        if "initialize" in view.timings and not self._again(view, "ui/initialize"):
            raise BridgeError(BridgeError.INVALID_REQUEST, "ui/initialize repeated too often; Moka ignores the repeats")
        view.mark("initialize")
        info = params.get("appInfo")
        view.app_info = info if isinstance(info, dict) else {}
        caps = params.get("appCapabilities")
        view.app_capabilities = caps if isinstance(caps, dict) else {}
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else PROTOCOL_VERSION
        if view.app_capabilities.get("tools"):
            asyncio.get_running_loop().call_later(0.05, lambda: asyncio.ensure_future(self._refresh_app_tools(view)))
        caps = host_capabilities(sampling=self._sampling_ready(), policy=view.policy, images=self._takes_images())
        return {"protocolVersion": version, "hostInfo": host_info(),
                "hostCapabilities": self.host.profile.advertise(caps) if self.host.profile else caps,
                "hostContext": self.host.host_context(view)}

    async def _ping(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def _tools_call(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise BridgeError(BridgeError.INVALID_PARAMS, "tools/call needs a tool 'name'")
        conn = self._servers.ready(view.server)
        entry = conn.tools.get(name)
        if entry is None:
            raise BridgeError(BridgeError.INVALID_PARAMS,
                              f"server {view.server!r} has no tool {name!r}; a view may only call its own server's tools")
        if not entry.app_visible:
            raise BridgeError(BridgeError.DENIED, f"tool {name!r} is not callable from a view (its visibility is "
                              f"{entry.visibility}; it needs \"app\")")
        args = params.get("arguments") or {}
        if not isinstance(args, dict):
            raise BridgeError(BridgeError.INVALID_PARAMS, "tools/call 'arguments' must be an object")
        # Its own scope: a question the server asks during this call is the view's, never a chat card's.
        scope = CallScope(f"{view.id}:{secrets.token_hex(4)}", view.server, name, "view", view.conversation_id)
        with self._servers.calls.scope(scope):
            return await conn.call_tool(name, args)

    async def _proxied(self, method: str, view: View, params: dict[str, Any]) -> dict[str, Any]:
        return await self.handle_proxy(view, method, params)

    async def handle_proxy(self, view: View, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """resources/* and prompts/list go to the view's own server only."""
        conn = self._servers.ready(view.server)
        return await conn.request(method, params)

    async def _message(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("role", "user") != "user":
            raise BridgeError(BridgeError.INVALID_PARAMS, "ui/message role must be 'user'")
        content = params.get("content")
        blocks = content if isinstance(content, list) else [content] if isinstance(content, dict) else None
        if not blocks:
            raise BridgeError(BridgeError.INVALID_PARAMS, "ui/message needs 'content' (a content block or a list)")
        await self._consent(view, "message", {"content": blocks})
        await self._chat.post_app_message(view, blocks)
        return {}

    async def _update_model_context(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        content = params.get("content") if isinstance(params.get("content"), list) else []
        structured = params.get("structuredContent")
        view.model_context = None if not content and structured is None else \
            {"content": content, **({"structuredContent": structured} if structured is not None else {})}
        self._chat.model_context_changed(view)
        return {}  # exactly {}: the view validates this strictly

    async def _open_link(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        url = params.get("url")
        if not isinstance(url, str):
            raise BridgeError(BridgeError.DENIED, "Invalid URL: only http, https and mailto links can be opened")
        try:
            detail = open_link_detail(url)  # read as browsers read it: the person is shown the host that opens
        except UnsafeLinkError as exc:
            raise BridgeError(BridgeError.DENIED, f"Invalid URL: {exc}") from None
        if not await self._ask(view, "open_link", detail):
            return DENIED_RESULT
        self.host.open_link(detail["url"])
        return {}

    async def _request_display_mode(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        wanted = params.get("mode")
        current = self.host.display_modes[view.display_mode].obj.wire_mode
        declared = view.app_capabilities.get("availableDisplayModes")
        allowed = wanted in self.host.available_wire_modes() and (not isinstance(declared, list) or wanted in declared)
        if not allowed or wanted == current:
            return {"mode": current}
        # The wire mode maps to the built-in display mode of the same name.
        mode_id = next((i for i, r in self.host.display_modes.items() if r.obj.wire_mode == wanted
                        and not r.obj.opens_window), None)
        if mode_id is None:
            return {"mode": current}
        # A view may not cover Moka's window by itself (S6): full screen and pip need a click in
        # the view just before (its proxy stamps `moka/gesture`; the view cannot) or a yes.
        if wanted != "inline" and params.get("moka/gesture") is not True and view.id not in self._display_ok:
            if not await self._ask(view, "display_mode", {"mode": wanted, "tool": view.tool.title or view.tool.name}):
                return {"mode": current}
            self._display_ok.add(view.id)
        return {"mode": self.host.set_display_mode(view, mode_id)}

    async def _download_file(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        contents = params.get("contents")
        if not isinstance(contents, list) or not contents:
            raise BridgeError(BridgeError.INVALID_PARAMS, "ui/download-file needs 'contents' (a list)")
        files = []
        for item in contents:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "resource" and isinstance(item.get("resource"), dict):
                res = item["resource"]
                files.append({"filename": sanitize_filename(str(res.get("uri", "download"))),
                              "mimeType": res.get("mimeType") or "application/octet-stream",
                              "text": res.get("text"), "blob": res.get("blob")})
            elif item.get("type") == "resource_link" and isinstance(item.get("uri"), str):
                read = await self.handle_proxy(view, "resources/read", {"uri": item["uri"]})
                for c in read.get("contents") or []:
                    files.append({"filename": sanitize_filename(str(item.get("name") or c.get("uri"))),
                                  "mimeType": c.get("mimeType") or "application/octet-stream",
                                  "text": c.get("text"), "blob": c.get("blob")})
        if not files:
            raise BridgeError(BridgeError.INVALID_PARAMS, "nothing to download in 'contents'")
        if not await self._ask(view, "download", {"files": [f["filename"] for f in files]}):
            return DENIED_RESULT
        for f in files:
            await self.host.save_download(f)
        return {}

    def _sampling_ready(self) -> bool:
        return self._chat.backend_configured()

    def _takes_images(self) -> bool:
        """Does the selected model backend take images (what a view's images would reach)?"""
        return self._sampling_ready() and "image" in self._chat.accepts_media()

    async def _sampling(self, view: View, params: dict[str, Any]) -> dict[str, Any]:
        if not self._sampling_ready():
            raise BridgeError(BridgeError.METHOD_NOT_FOUND, "sampling is not available: no model backend is configured")
        # Everything the model will get, the system prompt included (S10).
        await self._consent(view, "sampling", {"messages": params.get("messages"),
                                               **({"systemPrompt": params["systemPrompt"]}
                                                  if isinstance(params.get("systemPrompt"), str) else {})})
        return await self._chat.sample(params)

    async def _consent(self, view: View, action: str, detail: dict[str, Any]) -> None:
        if not await self._ask(view, action, detail):
            raise BridgeError(BridgeError.DENIED, f"{action.replace('_', ' ')} denied by the person")

    async def _ask(self, view: View, action: str, detail: dict[str, Any]) -> bool:
        """Ask the person, one question per view and action at a time: a flood is a quick no (S13)."""
        key = (view.id, action)
        if key in self._asking:
            return False
        self._asking.add(key)
        try:
            return await self._consent_ask(action, view.server, detail)
        finally:
            self._asking.discard(key)


# A person's "no" to opening a link or saving a file is an answer, not a failure: the MCP Apps
# schema gives these results `isError` ("the host failed to open the URL"). A JSON-RPC error
# here made official apps throw, and Moka then blamed the app for it.
DENIED_RESULT: dict[str, Any] = {"isError": True}


def _shape(message: dict[str, Any]) -> dict[str, Any]:
    return {k: message[k] for k in ("jsonrpc", "id", "method") if k in message}
