"""The Bridge: the ONE entry from any front end into the core (see docs/bridge-api.md).

Every window (desktop or browser) and the plain-HTTP endpoint hand frames to
``Bridge.handle``; it runs on the core loop and returns the reply frame. The methods live in
one class per area (``app``, ``servers``, ``views``, ``inspector``, ``chat``, ``settings``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import pydantic

from moka_shell.bridge.app import AppMethods
from moka_shell.bridge.calls import CallMethods
from moka_shell.bridge.chat import ChatMethods
from moka_shell.bridge.inspector import InspectorMethods
from moka_shell.bridge.server_extras import ServerExtraMethods
from moka_shell.bridge.servers import ServerMethods
from moka_shell.bridge.settings import SettingsMethods
from moka_shell.bridge.views import ViewMethods
from moka_shell.bridge.window import WindowMethods
from moka_shell.errors import BridgeError, MokaError, to_jsonrpc

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

log = logging.getLogger("moka.bridge")
Method = Callable[[dict[str, Any]], Awaitable[Any]]


class Bridge:
    """Maps UI methods to the core; every reply is a JSON-ready frame."""

    def __init__(self, app: MokaApp) -> None:
        self.methods: dict[str, Method] = {}
        for area in (AppMethods(app), ServerMethods(app), ViewMethods(app), InspectorMethods(app),
                     ChatMethods(app), SettingsMethods(app), CallMethods(app), WindowMethods(app),
                     ServerExtraMethods(app)):
            self.methods.update(area.methods())

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
        except MokaError as exc:
            return {"id": fid, "error": to_jsonrpc(exc)}
        except pydantic.ValidationError as exc:  # a config value the UI sent (servers.add, settings.set)
            return {"id": fid, "error": {"code": BridgeError.INVALID_PARAMS, "message": _validation_text(exc)}}
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the UI must get an answer even for our own bugs, and we must see them
            log.exception("bridge method %s failed", frame["method"])
            return {"id": fid, "error": {"code": BridgeError.INTERNAL_ERROR,
                                         "message": f"internal error: {type(exc).__name__}: {exc}"}}
        return None if fid is None else {"id": fid, "result": result if result is not None else {}}


def _validation_text(exc: pydantic.ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "value"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    return "bad parameters: " + "; ".join(parts)


__all__ = ["Bridge"]
