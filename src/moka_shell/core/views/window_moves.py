"""A view moving into or out of a window of its own (pop-out, or a plugin's window mode).

No engine Moka runs in keeps a frame's document alive when it moves to another window
(docs/architecture.md, measured in Chromium and QtWebEngine), so the app starts again there.
Nothing is lost silently: the person is told before (js/views/host.js), and the frame that
goes is sent ``ui/resource-teardown`` first, so an app can save what it shows (its storage
is Moka's and goes along); the new frame gets the input and result replayed, and the view's
latest model context stays with the view.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from moka_shell.errors import BridgeError

if TYPE_CHECKING:
    from moka_shell.core.views.host import ViewHost
    from moka_shell.core.views.view import View

MOVE_TEARDOWN_TIMEOUT = 3.0


def crosses_window(host: ViewHost, view: View, mode_id: str) -> bool:
    """Would showing ``view`` in ``mode_id`` move it into or out of a window of its own?"""
    new, old = host.display_modes.get(mode_id), host.display_modes.get(view.display_mode)
    return new is not None and old is not None and new.obj.opens_window != old.obj.opens_window


async def change_display_mode(host: ViewHost, view: View, mode_id: str, *, frame_gone: bool = False) -> str:
    """The person picked a display mode; a move between windows lets the frame that goes save first.

    ``frame_gone``: the window holding the frame was closed already, so there is nobody to ask.
    """
    if frame_gone and not host.display_modes[view.display_mode].obj.opens_window:
        return host.set_display_mode(view, view.display_mode)  # a window closed after the view came back
    if view.live and view.initialized and (frame_gone or crosses_window(host, view, mode_id)):
        if not frame_gone:
            try:
                await host.request(view, "ui/resource-teardown",
                                   {"reason": "the view moves to another window and starts again there"},
                                   MOVE_TEARDOWN_TIMEOUT)
            except BridgeError:
                pass  # most views answer -32601 or nothing: go ahead
        host.delivery.drop_inflight(view)
        view.frame_lost()
        host.inspector.record("view", {"event": "moved", "to": mode_id, "asked": not frame_gone},
                              server=view.server, view=view.id, method="view/moved")
    return host.set_display_mode(view, mode_id)
