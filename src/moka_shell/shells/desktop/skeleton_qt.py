"""Moka's frame painted by Qt itself, so the window's very first frame shows it (issue 27 item 5).

The skeleton page (``skeleton.py``) is HTML: QtWebEngine shows it only once its renderer process
has started, which on a loaded machine took seconds, and until then the window was white under its
menu bar. This widget lies over the web view from before the window is shown and paints the same
frame (rail, top bar, a card of grey lines, "Starting Moka…") in the skeleton's colours; the web
view's own background is set to them too. It goes away when the web view has loaded its first
page (the skeleton, the failure page or the UI), which then paints the same thing, or better.
"""

from __future__ import annotations

from typing import Any

from moka_shell.shells.desktop.skeleton import DARK, LIGHT

RAIL = 76  # px, as the skeleton page and the UI
TOP = 52
NAV_ITEMS = 5
LINES = (0.62, 0.48, 0.70, 0.36)


def palette_for(mode: str, system_dark: bool) -> dict[str, str]:
    """The skeleton's colours for the saved mode (``system`` follows the desktop's scheme)."""
    return DARK if mode == "dark" or (mode == "system" and system_dark) else LIGHT


def system_is_dark() -> bool:
    """Does the desktop ask for a dark scheme (Qt 6.5+ knows; older Qt: no)?"""
    try:
        from qtpy.QtCore import Qt
        from qtpy.QtGui import QGuiApplication
    except ImportError:
        return False
    hints = QGuiApplication.styleHints()
    scheme = getattr(hints, "colorScheme", None)
    return bool(scheme and scheme() == Qt.ColorScheme.Dark)


def install(window: Any, mode: str) -> Any:
    """Lay the painted skeleton over ``window``'s web view (pywebview's Qt window, on the GUI thread).

    Returns the overlay widget, or None on another backend. Call it from ``events.before_show``.
    """
    native = getattr(window, "native", None)
    view = getattr(native, "webview", None)
    # GTK's window has a .webview too (WebKit's); Qt's classes are only for pywebview's Qt window.
    if view is None or type(native).__module__ != "webview.platforms.qt":
        return None
    from qtpy.QtGui import QColor

    colours = palette_for(mode, system_is_dark())
    view.page().setBackgroundColor(QColor(colours["bg"]))  # no white behind the first web frame either
    overlay = _overlay_class()(view, colours)
    overlay.show()
    overlay.raise_()

    def loaded(_ok: bool) -> None:
        view.removeEventFilter(overlay)
        overlay.hide()
        overlay.deleteLater()
        view.loadFinished.disconnect(loaded)

    view.loadFinished.connect(loaded)
    return overlay


def _overlay_class() -> Any:
    """The QWidget subclass (made on first use: Qt is imported only by shells, and only when used)."""
    from qtpy.QtCore import QEvent, QRectF, Qt
    from qtpy.QtGui import QColor, QFont, QPainter
    from qtpy.QtWidgets import QWidget

    class SkeletonOverlay(QWidget):
        """Paints Moka's frame while the web view has nothing to show."""

        def __init__(self, parent: Any, colours: dict[str, str]) -> None:
            super().__init__(parent)
            self.colours = {k: QColor(v) for k, v in colours.items()}
            self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
            self.setObjectName("moka-skeleton")
            self.view = parent
            self.setGeometry(parent.rect())
            parent.installEventFilter(self)  # it keeps the web view's size

        def eventFilter(self, obj: Any, event: Any) -> bool:  # noqa: N802 (Qt's name)
            if obj is self.view and event.type() == QEvent.Type.Resize:
                self.setGeometry(self.view.rect())
            return False

        def paintEvent(self, _event: Any) -> None:  # noqa: N802 (Qt's name)
            c, w, h = self.colours, self.width(), self.height()
            p = QPainter(self)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            p.fillRect(0, 0, w, h, c["bg"])
            p.fillRect(0, 0, RAIL, h, c["rail"])
            p.fillRect(RAIL - 1, 0, 1, h, c["border"])
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c["accent"])
            p.drawRoundedRect(QRectF(18, 14, 40, 40), 12, 12)
            p.setBrush(c["shimmer"])
            for i in range(NAV_ITEMS):
                p.drawRoundedRect(QRectF(20, 68 + i * 50, 36, 36), 10, 10)
            p.fillRect(RAIL, 0, w - RAIL, TOP, c["surface"])
            p.fillRect(RAIL, TOP - 1, w - RAIL, 1, c["border"])
            font = QFont(self.font())
            font.setPixelSize(15)
            font.setWeight(QFont.Weight.DemiBold)
            p.setFont(font)
            p.setPen(c["fg"])
            p.drawText(QRectF(RAIL + 20, 0, 300, TOP), int(Qt.AlignmentFlag.AlignVCenter), "Moka")
            self._card(p, c, w, h)
            p.end()

        def _card(self, p: Any, c: dict[str, Any], w: int, h: int) -> None:
            body_w = w - RAIL
            card_w = min(560.0, body_w * 0.8)
            card_h = 44.0 + 21 * len(LINES)
            x, y = RAIL + (body_w - card_w) / 2, TOP + (h - TOP - card_h - 30) / 2
            p.setPen(c["border"])
            p.setBrush(c["surface"])
            p.drawRoundedRect(QRectF(x, y, card_w, card_h), 14, 14)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(c["shimmer"])
            for i, part in enumerate(LINES):
                p.drawRoundedRect(QRectF(x + 22, y + 22 + i * 21, (card_w - 44) * part, 11), 6, 6)
            font = QFont(self.font())
            font.setPixelSize(13)
            p.setFont(font)
            p.setPen(c["muted"])
            p.drawText(QRectF(RAIL, y + card_h + 12, body_w, 20), int(Qt.AlignmentFlag.AlignHCenter),
                       "Starting Moka…")

    return SkeletonOverlay
