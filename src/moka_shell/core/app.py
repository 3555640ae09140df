"""MokaApp: the core object. Owns plugins, config, servers, views, chat, store and the event bus.

Everything stateful lives on one asyncio loop. Front ends (the pywebview shell, the
browser-mode WebSocket, headless checks) talk to it only through ``moka_shell.bridge``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from moka_shell.config import ConfigFile, MokaConfig
from moka_shell.core.servers import ServerManager
from moka_shell.core.themes import theme_payload
from moka_shell.errors import AgentError, ConfigError, UsageError
from moka_shell.inspector import Inspector
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost

log = logging.getLogger("moka")
Listener = Callable[[str, dict[str, Any]], None]


class MokaApp:
    """The running application core (create it, then ``await app.start()`` on its loop)."""

    def __init__(self, paths: Paths, *, plugins: PluginHost | None = None, config: MokaConfig | None = None,
                 mode: str = "headless", connect_timeout: float | None = None) -> None:
        self.paths = paths
        self.mode = mode
        self.plugins = plugins or PluginHost()
        self.config_file: ConfigFile | None = None
        if config is None:
            self.config_file = ConfigFile(paths.config_file)
            config = self.config_file.config
        self.config = config
        self.inspector = Inspector(paths.inspector_dir)
        self.transports = self.plugins.collect("register_transports", "transport_id")
        self.backends = self.plugins.collect("register_agent_backends", "backend_id")
        self.themes = self.plugins.collect("register_themes", "theme_id")
        self.display_modes = self.plugins.collect("register_display_modes", "mode_id")
        self.servers = ServerManager(self.transports, self.inspector, self._servers_changed,
                                     connect_timeout=connect_timeout)
        self.problems: list[ConfigError] = []
        self._listeners: list[Listener] = []
        self.loop: asyncio.AbstractEventLoop | None = None
        self.sandbox_origin = ""
        self.host_origin = ""
        self.token = ""
        # Set in start(): these need the loop.
        from moka_shell.core.apphost import AppHost

        self.apphost = AppHost(self)
        self.chat: Any = None
        self.store: Any = None
        self.system_dark = False
        self._consents: dict[str, asyncio.Future[bool]] = {}
        self._consent_seq = 0
        # Shells replace these: the desktop opens the default browser and a save dialog.
        self.link_opener: Callable[[str], None] = lambda url: self.emit("link.open", {"url": url})
        self.download_saver: Callable[[dict[str, Any]], Any] = self._emit_download

    # ---- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every pushed UI event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def emit(self, event: str, data: dict[str, Any] | list[Any]) -> None:
        """Push an event to every front end."""
        for listener in list(self._listeners):
            try:
                listener(event, data)  # type: ignore[arg-type]
            except Exception:  # one broken front end must not stop the others
                log.exception("event listener failed for %s", event)

    def _servers_changed(self) -> None:
        self.emit("servers.changed", self.servers.infos())  # type: ignore[arg-type]

    async def _emit_download(self, file: dict[str, Any]) -> None:
        import base64

        data = file.get("blob") or base64.b64encode((file.get("text") or "").encode("utf-8")).decode("ascii")
        self.emit("download.ready", {"filename": file["filename"], "mimeType": file["mimeType"], "dataBase64": data})

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self, *, servers: list[str] | None = None, store: bool = True) -> None:
        """Load servers and start connecting (only ``servers`` when given)."""
        self.loop = asyncio.get_running_loop()
        wanted = self.config.mcp_servers
        if servers is not None:
            wanted = {n: c for n, c in wanted.items() if n in servers}
        self.servers.sampler = self._server_sampling if store else None
        self.problems = self.servers.load(wanted)
        self.servers.start_all()
        if store:
            from moka_shell.core.chat import ChatEngine
            from moka_shell.core.store import Store

            self.store = Store(self.paths.database)
            self.chat = ChatEngine(self)
        self.plugins.call_each("moka_startup", app=self)

    async def stop(self) -> None:
        """Tear down views, stop servers, flush the inspector."""
        self.plugins.call_each("moka_shutdown", app=self)
        try:
            await asyncio.wait_for(self.apphost.close_all(), timeout=5)
        except asyncio.TimeoutError:
            pass
        await self.servers.stop_all()
        if self.store is not None:
            self.store.close()
        self.inspector.close()

    def save_config(self) -> None:
        """Persist config changes made through the UI or CLI."""
        if self.config_file is not None:
            self.config_file.config = self.config
            self.config_file.save()

    # ---- appearance and person-facing actions -------------------------------------------------

    def current_theme(self) -> dict[str, Any]:
        """The Theme payload for the configured theme and mode."""
        theme_id = self.config.theme.theme_id
        reg = self.themes.get(theme_id) or self.themes.get("moka") or next(iter(self.themes.values()))
        mode = self.config.theme.mode
        resolved = ("dark" if self.system_dark else "light") if mode == "system" else mode
        return theme_payload(reg.obj, reg.obj.theme_id, mode, resolved)  # type: ignore[arg-type]

    def set_theme(self, theme_id: str | None = None, mode: str | None = None) -> dict[str, Any]:
        """Switch theme and/or mode: restyle the UI and tell every live view."""
        if theme_id is not None:
            if theme_id not in self.themes:
                raise UsageError(f"unknown theme {theme_id!r} (available: {', '.join(self.themes)})")
            self.config.theme.theme_id = theme_id
        if mode is not None:
            if mode not in ("light", "dark", "system"):
                raise UsageError(f"theme mode must be light, dark or system, not {mode!r}")
            self.config.theme.mode = mode  # type: ignore[assignment]
        self.save_config()
        theme = self.current_theme()
        self.emit("theme.changed", theme)
        self.apphost.theme_changed()
        return theme

    def open_link(self, url: str) -> None:
        """Open a link outside Moka (the shell decides how)."""
        self.inspector.record("view", {"event": "open-link", "url": url}, method="view/open-link")
        self.link_opener(url)

    async def save_download(self, file: dict[str, Any]) -> None:
        """Hand a view's download to the shell (save dialog or browser download)."""
        self.inspector.record("view", {"event": "download", "filename": file["filename"]}, method="view/download")
        await self.download_saver(file)

    async def consent(self, action: str, server: str, detail: dict[str, Any]) -> bool:
        """May a view do this? Plugins first, then the setting, then the person."""
        decided = self.plugins.first_result("moka_consent", action=action, server=server, detail=detail)
        if isinstance(decided, bool):
            return decided
        policy = getattr(self.config.consent, action, "ask")
        if policy != "ask":
            return policy == "allow"
        if not self._listeners or self.mode == "check":
            return self.mode == "check"  # headless checks allow; nobody to ask otherwise
        # Unique for the run: an id reused while an earlier request still waited would let one
        # answer resolve the wrong request and leave the other to time out.
        self._consent_seq += 1
        request_id = f"q{self._consent_seq}"
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._consents[request_id] = fut
        self.emit("consent.request", {"requestId": request_id, "action": action, "server": server, "detail": detail})
        try:
            return await asyncio.wait_for(fut, timeout=120)
        except asyncio.TimeoutError:
            return False
        finally:
            self._consents.pop(request_id, None)

    async def _server_sampling(self, server: str, params: dict[str, Any]) -> dict[str, Any]:
        """sampling/createMessage from an MCP server: only after the person allows it."""
        self.inspector.record("agent", {"event": "sampling-request", "server": server,
                                        "messages": len(params.get("messages") or [])}, server=server,
                              method="sampling/createMessage")
        if not await self.consent("sampling", server, {"messages": params.get("messages"),
                                                       "systemPrompt": params.get("systemPrompt")}):
            raise AgentError(f"the person did not allow {server!r} to use the model")
        if self.chat is None or not self.chat.backend_configured():
            raise AgentError("no model backend is set up for sampling")
        return await self.chat.sample(params)  # type: ignore[no-any-return]

    def answer_consent(self, request_id: str, allow: bool, remember: bool, action: str | None = None) -> None:
        """The person answered a consent request."""
        fut = self._consents.get(request_id)
        if fut is not None and not fut.done():
            fut.set_result(bool(allow))
        if remember and action:
            setattr(self.config.consent, action, "allow" if allow else "deny")
            self.save_config()
