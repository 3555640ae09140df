"""Delivery: the one way anything reaches a view — held until its handshake, logged, then pushed to the page.

Every host → view message goes through ``send`` (queued while the view is not initialized) or,
once the view may hear it, ``post``: it is recorded as ``ui.rpc`` and pushed as ``view.post``,
which every page socket carries to the view's proxy. A message for several views of a server
(``to_server``) is pushed once, as ``view.broadcast``, and the page hands it to each: the socket
carries it once however many views hear it (security finding G1, row 34). Each message gets
the view's next number and is kept a while, for a page that misses it (core/views/redelivery.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

from moka_shell.core.shell import Emit
from moka_shell.core.views.redelivery import size_of
from moka_shell.core.views.storage import CHANGED_METHOD
from moka_shell.core.views.view import View
from moka_shell.errors import BridgeError
from moka_shell.inspector import Inspector


class Delivery:
    """Sends messages and requests to the views of one host."""

    def __init__(self, *, views: dict[str, View], inspector: Inspector, emit: Emit) -> None:
        self._views = views
        self._inspector = inspector
        self._emit = emit

    def send(self, view: View, message: dict[str, Any]) -> None:
        """Deliver a host → view message, queued until the view is initialized."""
        if not view.live:
            return
        if not view.initialized:
            view.queue.append(message)
            return
        self.post(view, message)

    def post(self, view: View, message: dict[str, Any]) -> None:
        """Push a message to a view that may hear it now (the caller checked its handshake)."""
        self._inspector.record("ui.rpc", logged(message), direction="out", server=view.server, view=view.id)
        self._emit("view.post", {"viewId": view.id, "message": message, "seq": view.sent.add(message)})

    def to_server(self, server: str, message: dict[str, Any], *, but: Collection[str] = ()) -> int:
        """Send to every live view of ``server`` (but those whose ids are in ``but``): one push for those that
        may hear it now. Returns the characters pushed (0: none could hear it yet)."""
        ready = []
        for other in list(self._views.values()):
            if other.id in but or other.server != server or not other.live:
                continue
            if other.initialized:
                ready.append(other)
            else:
                other.queue.append(message)
        if not ready:
            return 0
        entry, size = logged(message), size_of(message)
        for other in ready:
            self._inspector.record("ui.rpc", entry, direction="out", server=server, view=other.id)
        seqs = [v.sent.add(message, size) for v in ready]
        self._emit("view.broadcast", {"viewIds": [v.id for v in ready], "message": message, "seqs": seqs})
        return size

    def live(self, view_id: str) -> View | None:
        """The view with this id, while it is live."""
        view = self._views.get(view_id)
        return view if view is not None and view.live else None

    def flush(self, view: View) -> None:
        """A view just finished its handshake: its input and result (replayed), then what waited."""
        for msg in view.data_messages():
            self.post(view, msg)
            method = msg["method"]
            if not method.endswith("tool-input-partial"):
                view.mark("input_sent" if method.endswith("tool-input") else "result_sent")
        queued, view.queue = view.queue, []
        for msg in queued:
            self.post(view, msg)

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

    def drop_inflight(self, view: View) -> None:
        """The view's frame is going: stop what it asked for and answer what Moka asked it."""
        for task in view.inflight.values():
            task.cancel()
        view.inflight.clear()
        for fut in view.pending.values():
            if not fut.done():
                fut.set_result({"error": {"code": -32603, "message": "view closed"}})


def logged(message: dict[str, Any]) -> dict[str, Any]:
    """What the Inspector keeps of a host → view message: of a storage change, its keys, not the app's values."""
    params = message.get("params")
    if message.get("method") != CHANGED_METHOD or not isinstance(params, dict):
        return message
    if "reset" in params:
        summary: dict[str, Any] = {"area": params.get("area"), "reset": len(params["reset"])}
    else:
        changes = params.get("changes") or []
        summary = {"area": params.get("area"), "changes": len(changes),
                   "keys": [c.get("key") for c in changes[:20] if isinstance(c, dict)]}
    return {**message, "params": summary}
