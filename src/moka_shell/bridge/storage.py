"""Bridge methods for the views' storage: a server's stored size, and clearing it (its card)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, req_str
from moka_shell.errors import UnknownServerError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class StorageMethods:
    """``storage.*``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"storage.usage": self.usage, "storage.clear": self.clear}

    def _server(self, p: Params) -> str:
        name = req_str(p, "server")
        if name not in self.app.config.mcp_servers:
            raise UnknownServerError(name, sorted(self.app.config.mcp_servers))
        return name

    async def usage(self, p: Params) -> dict[str, Any]:
        """What a server's views stored: item counts and size (UTF-16 code units), and the quota."""
        return self.app.view_host.storage.areas.usage(self._server(p))

    async def clear(self, p: Params) -> dict[str, Any]:
        """Forget everything a server's views stored; its live views see empty storage at once."""
        server = self._server(p)
        self.app.view_host.storage.clear_server(server)
        self.app.inspector.record("view", {"event": "storage-cleared"}, server=server, method="view/storage")
        return self.app.view_host.storage.areas.usage(server)
