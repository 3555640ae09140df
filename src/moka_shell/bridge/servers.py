"""Bridge methods for MCP servers and their tools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_dict, opt_str, req_str
from moka_shell.config import ServerConfig
from moka_shell.config_import import import_config_file, import_config_text
from moka_shell.core.mcp.oauth.signin import SignIns
from moka_shell.errors import InvalidParamsError, ServerExistsError

# The fields the Add/Edit dialog shows; replacing a server keeps the others.
EDITABLE = {"command", "args", "env", "cwd", "url", "headers", "type"}

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class ServerMethods:
    """``servers.*`` and ``tools.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self.sign_ins = SignIns(app.servers, app.emit, app.view_host.open_link)

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"servers.list": self.list_, "servers.add": self.add, "servers.remove": self.remove,
                "servers.setEnabled": self.set_enabled, "servers.restart": self.restart,
                "servers.import": self.import_, "tools.list": self.tools_list,
                "servers.login": self.login, "servers.logout": self.logout, "servers.allowEval": self.allow_eval}

    async def list_(self, p: Params) -> list[dict[str, Any]]:
        """Every server's state."""
        return self.app.servers.infos()

    async def add(self, p: Params) -> dict[str, Any]:
        """Add a server and connect it; a taken name is refused unless ``replace`` is true."""
        name = req_str(p, "name").strip()
        if not name:
            raise InvalidParamsError("a server needs a name")
        cfg = ServerConfig.model_validate(opt_dict(p, "config"))
        taken = name in self.app.config.mcp_servers or name in self.app.servers.connections
        if taken and p.get("replace") is not True:
            raise ServerExistsError(name, hint="choose another name, or confirm that it should be replaced")
        if taken:
            # An edit keeps what the dialog doesn't show (disabled, timeout, allowUnsafeEval…).
            old = self.app.config.mcp_servers.get(name)
            kept = {k: v for k, v in (old.to_json() if old else {}).items() if k not in EDITABLE}
            cfg = ServerConfig.model_validate({**kept, **cfg.to_json()})
        self.app.config.mcp_servers[name] = cfg
        self.app.save_config()
        return (await self.app.servers.add(name, cfg)).info()

    async def remove(self, p: Params) -> dict[str, Any]:
        """Stop and forget a server."""
        name = req_str(p, "name")
        await self.app.servers.remove(name)
        self.app.config.mcp_servers.pop(name, None)
        self.app.save_config()
        return {}

    async def set_enabled(self, p: Params) -> dict[str, Any]:
        """Enable or disable a server."""
        name = req_str(p, "name")
        conn = await self.app.servers.set_enabled(name, bool(p.get("enabled")))
        self.app.config.mcp_servers[name] = conn.config
        self.app.save_config()
        return conn.info()

    async def allow_eval(self, p: Params) -> dict[str, Any]:
        """Let this server's views use eval() (``allowUnsafeEval``), or stop letting them; new views get it."""
        name = req_str(p, "name")
        conn = self.app.servers.get(name)
        allow = bool(p.get("allow", True))
        setattr(conn.config, "allowUnsafeEval", allow)  # an extra field of the server's entry
        self.app.config.mcp_servers[name] = conn.config
        self.app.save_config()
        return conn.info()

    async def restart(self, p: Params) -> dict[str, Any]:
        """Reconnect a server now."""
        conn = self.app.servers.get(req_str(p, "name"))
        await conn.restart()
        return conn.info()

    async def login(self, p: Params) -> dict[str, Any]:
        """Start an OAuth sign-in; ``{"url"}`` to open (desktop: already opened), or ``{"needsClientId": true}``."""
        return await self.sign_ins.begin(req_str(p, "name"), open_in_browser=self.app.mode == "desktop",
                                         client_id=(opt_str(p, "clientId") or "").strip() or None)

    async def logout(self, p: Params) -> dict[str, Any]:
        """Forget (and revoke) a server's tokens; it then shows "Sign in required"."""
        name = req_str(p, "name")
        return {**await self.sign_ins.end(name), "server": self.app.servers.get(name).info()}

    async def import_(self, p: Params) -> dict[str, Any]:
        """Import servers from another host's config (pasted text or a file path)."""
        text = opt_str(p, "text")
        if text:
            found = import_config_text(text, "pasted text")
        else:
            found = import_config_file(Path(req_str(p, "path")).expanduser())
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

    async def tools_list(self, p: Params) -> list[dict[str, Any]]:
        """Tools of one server, or of all."""
        server = opt_str(p, "server")
        if server:
            return [t.to_info() for t in self.app.servers.get(server).tools.values()]
        return [t.to_info() for t in self.app.servers.all_tools()]
