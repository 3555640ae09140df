"""Bridge methods for calls the person follows: the Tool runner's runs (with Stop), servers' questions
(elicitation) and whether a server's instructions reach the model."""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, opt_dict, opt_str, req_str
from moka_shell.core.mcp.progress import CallScope
from moka_shell.errors import InvalidParamsError

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp

MAX_RUNS = 64  # runner calls in flight at once


class CallMethods:
    """``tools.run``, ``tools.stop``, ``elicitation.*`` and ``servers.setInstructions``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app
        self._runs: dict[str, asyncio.Task[Any]] = {}

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"tools.run": self.run, "tools.stop": self.stop, "elicitation.answer": self.answer,
                "elicitation.pending": self.pending, "servers.setInstructions": self.set_instructions}

    async def run(self, p: Params) -> dict[str, Any]:
        """The Tool runner: call a tool (and show its view) with no model; ``runId`` lets tools.stop end it."""
        server, tool, args = req_str(p, "server"), req_str(p, "tool"), opt_dict(p, "arguments")
        run_id = opt_str(p, "runId") or "r" + secrets.token_hex(6)
        if run_id in self._runs:
            raise InvalidParamsError(f"a run {run_id!r} is already going; give each run its own runId")
        if len(self._runs) >= MAX_RUNS:
            raise InvalidParamsError(f"{MAX_RUNS} runs are already going; stop one first")

        async def go() -> tuple[str, Any, dict[str, Any]]:
            with self.app.calls.scope(CallScope(run_id, server, tool, "runner")):
                return await self.app.view_host.run_tool(server, tool, args)

        task = asyncio.get_running_loop().create_task(go())
        self._runs[run_id] = task
        try:
            call_id, view, result = await asyncio.shield(task)
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if me is not None and me.cancelling():  # this request itself is going away: so does its run
                task.cancel()
                raise
            return {"runId": run_id, "stopped": True}
        finally:
            self._runs.pop(run_id, None)
        out: dict[str, Any] = {"runId": run_id, "callId": call_id, "result": result}
        if view is not None:
            out["viewId"] = view.id
        return out

    async def stop(self, p: Params) -> dict[str, Any]:
        """Stop a runner call, as the chat's Stop does (the server is sent notifications/cancelled)."""
        task = self._runs.get(req_str(p, "runId"))
        if task is None or task.done():
            return {"stopped": False}  # it ended meanwhile
        task.cancel()
        return {"stopped": True}

    async def answer(self, p: Params) -> dict[str, Any]:
        """The person's answer to a server's question: accept (with ``content``), decline or cancel."""
        self.app.elicitations.answer(req_str(p, "requestId"), req_str(p, "action"), p.get("content"))
        return {}

    async def pending(self, p: Params) -> list[dict[str, Any]]:
        """Questions waiting for the person now (a page that reconnects shows them again)."""
        return self.app.elicitations.pending()

    async def set_instructions(self, p: Params) -> dict[str, Any]:
        """Whether a server's instructions go into the model's system prompt (saved in its config entry)."""
        name, enabled = req_str(p, "name"), p.get("enabled")
        if not isinstance(enabled, bool):
            raise InvalidParamsError("'enabled' must be true or false")
        self.app.servers.get(name)  # an unknown server is refused before its entry changes
        conn = self.app.servers.apply_settings(name, self.app.server_configs.change(name, useInstructions=enabled))
        self.app.emit("servers.changed", self.app.servers.infos())
        return conn.info()
