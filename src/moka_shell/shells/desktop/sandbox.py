"""The desktop app's sandbox where QtWebEngine needs more than the frames' attributes (S3, S4).

- **New windows.** pywebview's Qt backend answers every ``window.open`` / ``target=_blank``
  of any frame by opening the URL in the system browser, with nobody asked. Views have no
  ``allow-popups`` (so Blink refuses them first); whatever still asks for a window here is routed
  through the same consent as ``ui/open-link``, and opens only on a yes.
- **WebRTC.** CSP does not govern ``RTCPeerConnection``, so a view with no declared domains
  could reach any host over STUN/TURN. A user script removes the WebRTC constructors from every
  frame's main world as each document is created, before any of the frame's scripts run.

Only shell code imports this module; it touches pywebview's Qt classes before any window exists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from moka_shell.core.links import open_link_detail
from moka_shell.errors import UnsafeLinkError
from moka_shell.shells.desktop.menu import toolkit
from moka_shell.web.view_guard import WEBRTC_GUARD_JS

log = logging.getLogger("moka.desktop")
NEW_WINDOW_ASKER = "A page in Moka's window"


def harden_qt(on_new_window: Callable[[str], None]) -> bool:
    """Route new-window requests to ``on_new_window(url)`` and guard every page against WebRTC.

    Returns False when pywebview will start GTK, or its Qt backend is not importable (GTK: WebRTC
    is off by default there, and pywebview's GTK backend does its own new-window handling).
    """
    if gtk_is_the_backend():
        return False  # importing Qt WebEngine anyway cost a GTK window 55 MiB (docs/performance.md §17)
    try:
        from qtpy.QtWebEngineCore import QWebEngineScript
        from webview.platforms import qt
    except ImportError:
        return False

    def accept(self: Any, url: Any, kind: Any, is_main_frame: bool) -> bool:
        # Never navigate the throw-away page; the URL goes to consent and, on a yes, to the browser.
        try:
            on_new_window(url.toString())
        except Exception:  # the GUI thread must not see our failure
            log.exception("could not route a new-window request")
        return False

    qt.BrowserView.NavigationHandler.acceptNavigationRequest = accept  # type: ignore[method-assign]
    original_init = qt.BrowserView.WebPage.__init__

    def init(self: Any, parent: Any = None, profile: Any = None) -> None:
        original_init(self, parent, profile)
        owner = profile if profile is not None else self.profile()
        if any(s.name() == "moka-webrtc-guard" for s in owner.scripts().toList()):
            return
        script = QWebEngineScript()
        script.setName("moka-webrtc-guard")
        script.setSourceCode(WEBRTC_GUARD_JS)
        script.setInjectionPoint(QWebEngineScript.InjectionPoint.DocumentCreation)
        script.setWorldId(QWebEngineScript.ScriptWorldId.MainWorld)
        script.setRunsOnSubFrames(True)
        owner.scripts().insert(script)

    qt.BrowserView.WebPage.__init__ = init  # type: ignore[method-assign]
    return True


def gtk_is_the_backend() -> bool:
    """Will pywebview surely start GTK? Decided as its start() decides: GTK first on Linux, if it imports.

    Anything less sure answers False, so Qt is hardened whenever Qt may be the one that starts.
    """
    if toolkit() != "gtk":
        return False
    try:
        import webview.platforms.gtk  # noqa: F401 - pywebview's own first choice; if it imports, GTK starts
    except (ImportError, ValueError):  # what pywebview catches before it falls back to Qt
        return False
    return True


async def ask_to_open(app: Any, open_link: Callable[[str], None], url: str) -> bool:
    """Ask the person before a new-window request opens ``url`` in the browser; True if it opened."""
    try:
        detail = open_link_detail(url)  # the same reading of the address as a view's ui/open-link
    except UnsafeLinkError as exc:
        log.warning("refused a new-window request: %s", exc)
        return False
    if app is None:
        return False
    app.inspector.record("view", {"event": "new-window", "url": detail["url"]}, method="view/new-window")
    if not await app.consent.ask("open_link", NEW_WINDOW_ASKER, detail):
        return False
    open_link(detail["url"])
    return True


def new_window_router(submit: Callable[[Coroutine[Any, Any, bool]], Any], app: Callable[[], Any],
                      open_link: Callable[[str], None]) -> Callable[[str], None]:
    """``on_new_window`` for ``harden_qt``: runs ``ask_to_open`` on the core loop."""
    return lambda url: submit(ask_to_open(app(), open_link, url))
