"""Bridge methods for views: their messages, the page's events about them, display modes, reopening."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, req_str
from moka_shell.bridge.recording import RecordingMethods
from moka_shell.bridge.storage import StorageMethods
from moka_shell.core.views.redelivery import missed
from moka_shell.core.views.reopen import reopen_view
from moka_shell.core.views.window_moves import change_display_mode
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class ViewMethods:
    """``view.*`` and ``views.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self.host = app.view_host

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"view.rpc": self.rpc, "view.event": self.event, "view.setDisplayMode": self.set_mode,
                "view.close": self.close, "views.reopen": self.reopen, "views.get": self.get,
                "views.list": self.list_live, "view.missed": self.missed,
                **StorageMethods(self.app).methods(), **RecordingMethods(self.app).methods()}

    async def rpc(self, p: Params) -> dict[str, Any]:
        """One message from a view; the reply to post back, if any."""
        return {"reply": await self.host.dispatcher.handle(req_str(p, "viewId"), p.get("message"))}

    async def event(self, p: Params) -> dict[str, Any]:
        """Something the page saw happen to a view's frame."""
        view = self.host.get(req_str(p, "viewId"))
        kind, detail = p.get("kind"), p.get("detail") or {}
        if kind in ("mounted", "proxy-ready"):
            view.mark(kind.replace("-", "_"))
            if kind == "mounted" and view.initialized and view.live:
                # A new frame for a view that had one (a page reloaded, or remounted it after missing
                # messages): what is sent now waits for its handshake, which feeds it everything again.
                self.host.delivery.drop_inflight(view)
                view.frame_lost()
        elif kind == "container" and isinstance(detail, dict):
            self.host.container_changed(view, detail)
        elif kind == "offscreen":
            self.host.offscreen(view)
        elif kind == "onscreen":
            self.host.onscreen(view)
        elif kind == "popout-closed" and view.live:
            await change_display_mode(self.host, view, "inline", frame_gone=True)
        return {}

    async def set_mode(self, p: Params) -> dict[str, Any]:
        """The person picked a display mode."""
        view = self.host.get(req_str(p, "viewId"))
        return {"mode": await change_display_mode(self.host, view, req_str(p, "mode"))}

    async def close(self, p: Params) -> dict[str, Any]:
        """The person closed a view."""
        await self.host.close(self.host.get(req_str(p, "viewId")), "closed by the person")
        return {}

    async def get(self, p: Params) -> dict[str, Any]:
        """A view's mount data (a pop-out window or `moka check` page shows one view alone)."""
        return self.host.describe(self.host.get(req_str(p, "viewId")))

    async def list_live(self, p: Params) -> dict[str, Any]:
        """Mount data of every view not closed or parked (the page resynchronises after a reconnect)."""
        return {"views": [self.host.describe(v) for v in list(self.host.views.values())
                          if v.state in ("loading", "ready", "failed")]}

    async def missed(self, p: Params) -> dict[str, Any]:
        """A view's messages after number ``after`` that a page missed (its socket dropped), or ``remount``."""
        return missed(self.host.get(req_str(p, "viewId")).sent, p.get("after"))

    async def reopen(self, p: Params) -> dict[str, Any]:
        """Render a stored view again (a reopened conversation)."""
        record_id = req_str(p, "recordId")
        rec = self.app.store.view(record_id)
        if rec is None:
            raise InvalidParamsError(f"no stored view {record_id!r}")
        view = await reopen_view(self.host, record_id, rec)
        return {"viewId": view.id} if view else {}
