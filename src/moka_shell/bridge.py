"""The Bridge: the ONE entry from any front end into the core (see docs/bridge-api.md).

The desktop shell's js_api and the browser-mode WebSocket both hand frames to
``Bridge.handle``; it runs on the core loop and returns the reply frame.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell import __version__
from moka_shell.config import ServerConfig
from moka_shell.config_import import import_config_file, import_config_text
from moka_shell.errors import BridgeError, MokaError
from moka_shell.inspector import EventFilter, Page

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

log = logging.getLogger("moka.bridge")
Method = Callable[[dict[str, Any]], Awaitable[Any]]


class Bridge:
    """Maps UI methods to the core; every reply is a JSON-ready frame."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self.methods: dict[str, Method] = {
            "app.info": self.app_info, "app.hello": self.app_hello,
            "servers.list": self.servers_list, "servers.add": self.servers_add, "servers.remove": self.servers_remove,
            "servers.setEnabled": self.servers_set_enabled, "servers.restart": self.servers_restart,
            "servers.import": self.servers_import,
            "tools.list": self.tools_list, "tools.run": self.tools_run,
            "view.rpc": self.view_rpc, "view.event": self.view_event, "view.setDisplayMode": self.view_set_mode,
            "view.close": self.view_close, "views.reopen": self.views_reopen, "views.get": self.views_get,
            "inspector.query": self.inspector_query, "inspector.page": self.inspector_page,
            "inspector.export": self.inspector_export,
            "theme.set": self.theme_set, "theme.system": self.theme_system, "theme.get": self.theme_get,
            "consent.answer": self.consent_answer,
        }
        from moka_shell.core.chat_bridge import chat_methods

        self.methods.update(chat_methods(app))

    def add(self, name: str, method: Method) -> None:
        """Add a method (the chat engine and settings register theirs)."""
        self.methods[name] = method

    async def handle(self, frame: Any) -> dict[str, Any] | None:
        """Run one request frame; returns the reply frame (None for a frame without id)."""
        if not isinstance(frame, dict) or not isinstance(frame.get("method"), str):
            return {"id": frame.get("id") if isinstance(frame, dict) else None,
                    "error": {"code": BridgeError.INVALID_REQUEST, "message": "a frame needs a 'method'"}}
        fid = frame.get("id")
        method = self.methods.get(frame["method"])
        try:
            if method is None:
                raise BridgeError(BridgeError.METHOD_NOT_FOUND, f"unknown method {frame['method']!r}")
            params = frame.get("params") or {}
            if not isinstance(params, dict):
                raise BridgeError(BridgeError.INVALID_PARAMS, "'params' must be an object")
            result = await method(params)
        except BridgeError as exc:
            return {"id": fid, "error": exc.to_error()}
        except MokaError as exc:
            return {"id": fid, "error": {"code": BridgeError.DENIED, "message": str(exc)}}
        except (KeyError, TypeError, ValueError) as exc:
            return {"id": fid, "error": {"code": BridgeError.INVALID_PARAMS, "message": f"bad parameters: {exc}"}}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the UI must get an answer even for our own bugs
            log.exception("bridge method %s failed", frame["method"])
            return {"id": fid, "error": {"code": BridgeError.INTERNAL_ERROR, "message": f"internal error: {exc}"}}
        return None if fid is None else {"id": fid, "result": result if result is not None else {}}

    # ---- app ---------------------------------------------------------------------------------

    async def app_info(self, p: dict[str, Any]) -> dict[str, Any]:
        import sys

        return {"version": __version__, "mode": self.app.mode, "sandboxOrigin": self.app.sandbox_origin,
                "platform": sys.platform, "configFile": str(self.app.paths.config_file),
                "dataDir": str(self.app.paths.data_dir),
                "problems": [str(e) for e in self.app.problems] + [str(e) for e in self.app.plugins.broken()]}

    async def app_hello(self, p: dict[str, Any]) -> dict[str, Any]:
        """The page reports its locale, time zone, colour scheme and window size."""
        host = self.app.apphost
        host.client.update({k: p[k] for k in ("locale", "timeZone", "touch", "hover") if k in p})
        if isinstance(p.get("viewport"), dict):
            host.viewport.update({k: int(v) for k, v in p["viewport"].items() if isinstance(v, (int, float))})
        if "dark" in p:
            self.app.system_dark = bool(p["dark"])
        return {"theme": self.app.current_theme(), **(await self.app_info({}))}

    # ---- servers -----------------------------------------------------------------------------

    async def servers_list(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        return self.app.servers.infos()

    async def servers_add(self, p: dict[str, Any]) -> dict[str, Any]:
        name = str(p["name"]).strip()
        if not name:
            raise BridgeError(BridgeError.INVALID_PARAMS, "a server needs a name")
        cfg = ServerConfig.model_validate(p.get("config") or {})
        self.app.config.mcp_servers[name] = cfg
        self.app.save_config()
        return (await self.app.servers.add(name, cfg)).info()

    async def servers_remove(self, p: dict[str, Any]) -> dict[str, Any]:
        await self.app.servers.remove(p["name"])
        self.app.config.mcp_servers.pop(p["name"], None)
        self.app.save_config()
        return {}

    async def servers_set_enabled(self, p: dict[str, Any]) -> dict[str, Any]:
        conn = await self.app.servers.set_enabled(p["name"], bool(p["enabled"]))
        self.app.config.mcp_servers[p["name"]] = conn.config
        self.app.save_config()
        return conn.info()

    async def servers_restart(self, p: dict[str, Any]) -> dict[str, Any]:
        conn = self.app.servers.get(p["name"])
        await conn.restart()
        return conn.info()

    async def servers_import(self, p: dict[str, Any]) -> dict[str, Any]:
        if p.get("text"):
            found = import_config_text(str(p["text"]), "pasted text")
        else:
            found = import_config_file(Path(str(p["path"])).expanduser())
        added, skipped = [], [{"name": n, "reason": r} for n, r in found.skipped]
        for name, cfg in found.servers.items():
            if name in self.app.config.mcp_servers:
                skipped.append({"name": name, "reason": "a server with this name already exists"})
                continue
            self.app.config.mcp_servers[name] = cfg
            await self.app.servers.add(name, cfg)
            added.append(name)
        self.app.save_config()
        return {"added": added, "skipped": skipped, "format": found.source_format}

    # ---- tools and views ---------------------------------------------------------------------

    async def tools_list(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        if p.get("server"):
            conn = self.app.servers.get(p["server"])
            return [t.to_info() for t in conn.tools.values()]
        return [t.to_info() for t in self.app.servers.all_tools()]

    async def tools_run(self, p: dict[str, Any]) -> dict[str, Any]:
        args = p.get("arguments") or {}
        if not isinstance(args, dict):
            raise BridgeError(BridgeError.INVALID_PARAMS, "'arguments' must be a JSON object")
        call_id, view, result = await self.app.apphost.run_tool(str(p["server"]), str(p["tool"]), args)
        out: dict[str, Any] = {"callId": call_id, "result": result}
        if view is not None:
            out["viewId"] = view.id
        return out

    async def view_rpc(self, p: dict[str, Any]) -> dict[str, Any]:
        reply = await self.app.apphost.dispatcher.handle(str(p["viewId"]), p.get("message"))
        return {"reply": reply}

    async def view_event(self, p: dict[str, Any]) -> dict[str, Any]:
        host = self.app.apphost
        view = host.get(str(p["viewId"]))
        kind, detail = p.get("kind"), p.get("detail") or {}
        if kind in ("mounted", "proxy-ready"):
            view.mark(kind.replace("-", "_"))
        elif kind == "container" and isinstance(detail, dict):
            host.container_changed(view, detail)
        elif kind == "offscreen":
            host.on_offscreen(view)
        elif kind == "onscreen":
            host.on_onscreen(view)
        elif kind in ("closed-by-user", "popout-closed"):
            if kind == "popout-closed" and view.live:
                host.set_display_mode(view, "inline")
            else:
                await host.close(view, "closed by the person")
        return {}

    async def view_set_mode(self, p: dict[str, Any]) -> dict[str, Any]:
        view = self.app.apphost.get(str(p["viewId"]))
        return {"mode": self.app.apphost.set_display_mode(view, str(p["mode"]))}

    async def view_close(self, p: dict[str, Any]) -> dict[str, Any]:
        view = self.app.apphost.get(str(p["viewId"]))
        await self.app.apphost.close(view, "closed by the person")
        return {}

    async def views_get(self, p: dict[str, Any]) -> dict[str, Any]:
        """A view's mount data (a pop-out window or `moka check` page shows one view alone)."""
        return self.app.apphost.describe(self.app.apphost.get(str(p["viewId"])))

    async def views_reopen(self, p: dict[str, Any]) -> dict[str, Any]:
        if self.app.chat is None:
            raise BridgeError(BridgeError.DENIED, "no conversation store")
        view = await self.app.chat.reopen_view(str(p["recordId"]))
        return {"viewId": view.id} if view else {}

    # ---- inspector, theme, consent -----------------------------------------------------------

    def _filter(self, p: dict[str, Any]) -> EventFilter:
        return EventFilter(**{k: p.get(k) or None for k in ("channel", "server", "view", "method", "text")})

    @staticmethod
    def _int(p: dict[str, Any], key: str, default: int | None = None) -> int | None:
        value = p.get(key)
        if value is None or value == "":
            return default
        try:
            return int(value)
        except (TypeError, ValueError):
            raise BridgeError(BridgeError.INVALID_PARAMS, f"{key!r} must be a whole number, not {value!r}") from None

    async def _inspector_page(self, p: dict[str, Any]) -> Page:
        # At most 10,000 per call. On a worker thread (it works on a snapshot of the ring): a
        # filtered query looks at every event, and the loop must keep serving views meanwhile.
        return await asyncio.to_thread(self.app.inspector.page, self._filter(p),
                                       limit=min(self._int(p, "limit") or 2000, 10_000),
                                       before=self._int(p, "before"), after=self._int(p, "after"))

    async def inspector_query(self, p: dict[str, Any]) -> list[dict[str, Any]]:
        return (await self._inspector_page(p)).events

    async def inspector_page(self, p: dict[str, Any]) -> dict[str, Any]:
        """A page of events for the Inspector screen, with counts and the cursor to older ones."""
        return {**(await self._inspector_page(p)).to_json(), "servers": sorted(self.app.inspector.servers)}

    async def inspector_export(self, p: dict[str, Any]) -> dict[str, Any]:
        import time

        # In chunks (`next` → `after`): one reply for 100,000 events would be 40 MB of JSON,
        # encoded on the loop in the better part of a second.
        chunk = await asyncio.to_thread(self.app.inspector.export, self._filter(p), after=self._int(p, "after"),
                                        limit=min(self._int(p, "limit") or 5000, 20_000))
        name = time.strftime("moka-inspector-%Y%m%d-%H%M%S.jsonl")
        return {"filename": name, "count": chunk.count, "content": chunk.content, "next": chunk.next}

    async def theme_get(self, p: dict[str, Any]) -> dict[str, Any]:
        return self.app.current_theme()

    async def theme_set(self, p: dict[str, Any]) -> dict[str, Any]:
        return self.app.set_theme(p.get("themeId"), p.get("mode"))

    async def theme_system(self, p: dict[str, Any]) -> dict[str, Any]:
        dark = bool(p.get("dark"))
        if dark != self.app.system_dark:
            self.app.system_dark = dark
            if self.app.config.theme.mode == "system":
                theme = self.app.current_theme()
                self.app.emit("theme.changed", theme)
                self.app.apphost.theme_changed()
        return self.app.current_theme()

    async def consent_answer(self, p: dict[str, Any]) -> dict[str, Any]:
        self.app.answer_consent(str(p["requestId"]), bool(p.get("allow")), bool(p.get("remember")), p.get("action"))
        return {}
