"""Bridge methods of the app itself: info, the page's hello, theme, consent answers."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from moka_shell.version import __version__
from moka_shell.bridge.params import Params, opt_str, req_str
from moka_shell.core.views.host_context import INLINE_MAX_HEIGHT, INLINE_MIN_HEIGHT, INLINE_START_HEIGHT

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class AppMethods:
    """``app.*``, ``theme.*`` and ``consent.answer``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"app.info": self.info, "app.hello": self.hello, "theme.get": self.theme_get,
                "theme.set": self.theme_set, "theme.system": self.theme_system, "consent.answer": self.consent_answer,
                "consent.pending": self.consent_pending}

    async def info(self, p: Params) -> dict[str, Any]:
        """Version, mode, origins, files, limits and every start-up problem."""
        app = self.app
        return {"version": __version__, "mode": app.mode, "sandboxOrigin": app.endpoints.sandbox_origin,
                "platform": sys.platform, "configFile": str(app.paths.config_file),
                "dataDir": str(app.paths.data_dir),
                "limits": {"inlineMinHeight": INLINE_MIN_HEIGHT, "inlineMaxHeight": INLINE_MAX_HEIGHT,
                           "inlineStartHeight": INLINE_START_HEIGHT},
                "problems": app.all_problems()}

    async def hello(self, p: Params) -> dict[str, Any]:
        """The page reports its locale, time zone, colour scheme and window size."""
        viewport = p["viewport"] if isinstance(p.get("viewport"), dict) else {}
        self.app.view_host.page_reported({k: p[k] for k in ("locale", "timeZone", "touch", "hover") if k in p},
                                         {k: int(v) for k, v in viewport.items() if isinstance(v, (int, float))})
        if "dark" in p:
            self.app.appearance.note_system_dark(bool(p["dark"]))
        return {"theme": self.app.appearance.current(), **(await self.info({}))}

    async def theme_get(self, p: Params) -> dict[str, Any]:
        """The current Theme payload."""
        return self.app.appearance.current()

    async def theme_set(self, p: Params) -> dict[str, Any]:
        """Switch theme and/or mode."""
        return self.app.appearance.set(opt_str(p, "themeId"), opt_str(p, "mode"))

    async def theme_system(self, p: Params) -> dict[str, Any]:
        """The system's colour scheme changed."""
        return self.app.appearance.set_system_dark(bool(p.get("dark")))

    async def consent_pending(self, p: Params) -> list[dict[str, Any]]:
        """The consent requests waiting for the person (a page that reconnects or reloads shows them)."""
        return self.app.consent.pending()

    async def consent_answer(self, p: Params) -> dict[str, Any]:
        """The person answered a consent request."""
        self.app.consent.answer(req_str(p, "requestId"), bool(p.get("allow")), bool(p.get("remember")),
                                opt_str(p, "action"))
        return {}
