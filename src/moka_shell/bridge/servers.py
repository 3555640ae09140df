"""Bridge methods for MCP servers and their tools."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_dict, opt_str, req_str
from moka_shell.config import ServerConfig
from moka_shell.config_import import import_config_file, import_config_text
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp
    from moka_shell.core.mcp.oauth.signin import SignIns


class ServerMethods:
    """``servers.*`` and ``tools.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self._sign_ins: SignIns | None = None

    @property
    def sign_ins(self) -> SignIns:
        """The sign-ins under way; made on the first (its modules bring the SDK's OAuth client)."""
        if self._sign_ins is None:
            from moka_shell.core.mcp.oauth.signin import SignIns

            self._sign_ins = SignIns(self.app.servers, self.app.emit, self.app.view_host.open_link)
        return self._sign_ins

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"servers.list": self.list_, "servers.add": self.add, "servers.remove": self.remove,
                "servers.setEnabled": self.set_enabled, "servers.restart": self.restart,
                "servers.import": self.import_, "tools.list": self.tools_list,
                "servers.login": self.login, "servers.logout": self.logout, "servers.allowEval": self.allow_eval,
                "servers.setOAuth": self.set_oauth, "servers.trustAnnotations": self.trust_annotations}

    async def list_(self, p: Params) -> list[dict[str, Any]]:
        """Every server's state."""
        return self.app.servers.infos()

    async def add(self, p: Params) -> dict[str, Any]:
        """Add a server and connect it; a taken name is refused unless ``replace`` is true (core/server_configs.py)."""
        name = req_str(p, "name").strip()
        entry = self.app.server_configs.add(
            name, ServerConfig.model_validate(opt_dict(p, "config")), replace=p.get("replace") is True,
            taken_hint="choose another name, or confirm that it should be replaced")
        return (await self.app.servers.add(name, entry)).info()

    async def remove(self, p: Params) -> dict[str, Any]:
        """Stop and forget a server."""
        name = req_str(p, "name")
        self.app.server_configs.remove(name)
        if name in self.app.servers.connections:
            await self.app.servers.remove(name)
        return {}

    async def set_enabled(self, p: Params) -> dict[str, Any]:
        """Enable or disable a server."""
        name, enabled = req_str(p, "name"), bool(p.get("enabled"))
        self.app.servers.get(name)
        self.app.server_configs.change(name, disabled=not enabled)
        return (await self.app.servers.set_enabled(name, enabled)).info()

    async def allow_eval(self, p: Params) -> dict[str, Any]:
        """Let this server's views use eval() (``allowUnsafeEval``), or stop letting them; new views get it."""
        name = self.app.servers.get(req_str(p, "name")).name
        entry = self.app.server_configs.change(name, allowUnsafeEval=bool(p.get("allow", True)))
        return self.app.servers.apply_settings(name, entry).info()

    async def set_oauth(self, p: Params) -> dict[str, Any]:
        """Set the OAuth client an HTTP server uses (``oauth`` settings; ``secrets`` kept apart), then reconnect it."""
        name = self.app.servers.get(req_str(p, "name")).name
        secrets = opt_dict(p, "secrets")
        if not all(isinstance(v, str) or v is None for v in secrets.values()):
            raise InvalidParamsError("'secrets' values must be text (or null to forget one)")
        from moka_shell.core.mcp.oauth.client_setup import set_client  # brings the SDK's OAuth helpers

        done = await set_client(self.app.server_configs, name, opt_dict(p, "oauth"), secrets)
        conn = await self.app.servers.add(name, self.app.server_configs.get(name))
        return {**done, "server": conn.info()}

    async def trust_annotations(self, p: Params) -> dict[str, Any]:
        """Go by this server's tool annotations (``trustAnnotations``: its read-only tools may run unasked),
        or stop; ``trust: null`` goes back to the default (only Moka's own demo server is trusted)."""
        name = self.app.servers.get(req_str(p, "name")).name
        trust = p.get("trust", True)
        if trust is not None and not isinstance(trust, bool):
            raise InvalidParamsError(f"'trust' must be true, false or null, not {trust!r}")
        entry = self.app.server_configs.change(name, trustAnnotations=trust)
        return self.app.servers.apply_settings(name, entry).info()

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
        done = self.app.server_configs.add_new(found.servers)
        for name in done.added:
            await self.app.servers.add(name, self.app.server_configs.get(name))
        skipped = [{"name": n, "reason": r} for n, r in [*found.skipped, *done.skipped]]
        return {"added": done.added, "skipped": skipped, "format": found.source_format}

    async def tools_list(self, p: Params) -> list[dict[str, Any]]:
        """Tools of one server, or of all."""
        server = opt_str(p, "server")
        if server:
            return [t.to_info() for t in self.app.servers.get(server).tools.values()]
        return [t.to_info() for t in self.app.servers.all_tools()]
