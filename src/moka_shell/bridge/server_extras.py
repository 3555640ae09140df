"""Bridge methods for a server's prompts, resources, completions and log (docs/bridge-api.md).

Each reads from one connected server; nothing here runs a tool or sends anything to the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_dict, opt_int, req_str
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

MAX_LOG_LINES = 500


def _strings(value: dict[str, Any], what: str) -> dict[str, str]:
    """A JSON object of string values (prompt arguments, completion context); numbers become text."""
    out: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, (dict, list)):
            raise InvalidParamsError(f"{what}.{key} must be a string, not {type(item).__name__}")
        if item is not None:
            out[str(key)] = item if isinstance(item, str) else str(item).lower() if isinstance(item, bool) else str(item)
    return out


class ServerExtraMethods:
    """``servers.prompts``, ``servers.prompt``, ``servers.resources``, ``servers.readResource``, ``servers.complete``,
    ``servers.setLogLevel``, ``servers.logs``, ``servers.setRoots``, ``servers.subscribe`` and ``servers.unsubscribe``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"servers.prompts": self.prompts, "servers.prompt": self.prompt, "servers.resources": self.resources,
                "servers.readResource": self.read_resource, "servers.complete": self.complete,
                "servers.setLogLevel": self.set_log_level, "servers.logs": self.logs, "servers.setRoots": self.set_roots,
                "servers.subscribe": self.subscribe, "servers.unsubscribe": self.unsubscribe}

    async def prompts(self, p: Params) -> list[dict[str, Any]]:
        """Every prompt of one server."""
        return await self.app.servers.get(req_str(p, "server")).requests.prompts()

    async def prompt(self, p: Params) -> dict[str, Any]:
        """One prompt's messages, its arguments filled in."""
        conn = self.app.servers.get(req_str(p, "server"))
        return await conn.requests.get_prompt(req_str(p, "name"), _strings(opt_dict(p, "arguments"), "arguments"))

    async def resources(self, p: Params) -> dict[str, list[dict[str, Any]]]:
        """Every resource and resource template of one server."""
        return await self.app.servers.get(req_str(p, "server")).requests.resources()

    async def read_resource(self, p: Params) -> dict[str, Any]:
        """One resource's contents (capped)."""
        return await self.app.servers.get(req_str(p, "server")).requests.read_resource(req_str(p, "uri"))

    async def complete(self, p: Params) -> dict[str, Any]:
        """Completions for a prompt argument or a template variable."""
        conn = self.app.servers.get(req_str(p, "server"))
        argument = opt_dict(p, "argument")
        if not isinstance(argument.get("name"), str):
            raise InvalidParamsError("'argument' must be {name, value}")
        context = _strings(opt_dict(opt_dict(p, "context"), "arguments"), "context.arguments")
        return await conn.requests.complete(opt_dict(p, "ref"), argument, context)

    async def set_log_level(self, p: Params) -> dict[str, Any]:
        """Set the level of log messages one server sends, and save it in the config."""
        name = req_str(p, "server")
        conn = self.app.servers.get(name)
        await conn.settings.set_log_level(req_str(p, "level"))
        self.app.server_configs.change(name, logLevel=conn.settings.log_level)
        return conn.info()

    async def logs(self, p: Params) -> list[dict[str, Any]]:
        """The newest log messages of one server, oldest first."""
        limit = max(1, min(MAX_LOG_LINES, opt_int(p, "limit", MAX_LOG_LINES) or MAX_LOG_LINES))
        return list(self.app.servers.get(req_str(p, "server")).events.logs)[-limit:]

    async def set_roots(self, p: Params) -> dict[str, Any]:
        """Set the folders one server may use (roots), save them, and tell the server."""
        name = req_str(p, "server")
        conn = self.app.servers.get(name)
        await conn.settings.set_roots(p.get("roots"))
        self.app.server_configs.change(name, roots=conn.settings.roots)
        return conn.info()

    async def subscribe(self, p: Params) -> dict[str, Any]:
        """Follow a resource: ``resource.updated`` events come when it changes."""
        conn = self.app.servers.get(req_str(p, "server"))
        return {"subscribed": await conn.subscriptions.subscribe(req_str(p, "uri"))}

    async def unsubscribe(self, p: Params) -> dict[str, Any]:
        """Stop following a resource."""
        conn = self.app.servers.get(req_str(p, "server"))
        return {"subscribed": await conn.subscriptions.unsubscribe(req_str(p, "uri"))}
