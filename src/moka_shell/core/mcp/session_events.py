"""What a connected server sends Moka unasked: list changes, log lines, sampling requests, transport reports.

A mixin of ServerConnection (``connection.py``), kept apart so each file has one concern.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.shared.subscriptions import ResourceUpdated

from moka_shell.core.mcp.coalesce import Coalesced
from moka_shell.core.mcp.sdk import describe_exception, dump
from moka_shell.errors import MokaError, to_jsonrpc
from moka_shell.inspector import Inspector

log = logging.getLogger("moka.servers")
LOG_LINES = 500  # log messages kept per server
LOG_INFO_LINES = 20  # what servers.list carries
LOG_TEXT = 2000  # characters of one log message
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def log_line(params: dict[str, Any]) -> dict[str, Any]:
    """A ``notifications/message`` as the card shows it: time, level, logger, text (capped)."""
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False)
    if len(text) > LOG_TEXT:
        text = text[:LOG_TEXT] + " …"
    line = {"time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds"),
            "level": str(params.get("level", "info")), "text": text}
    if params.get("logger"):
        line["logger"] = str(params["logger"])[:200]
    return line


class SessionEvents:
    """Handlers the SDK's Client calls: ``message_handler``, ``logging_callback``, ``sampling_callback``."""

    name: str
    client: Client | None
    inspector: Inspector
    on_change: Callable[[Any], None]
    sampler: Callable[[str, dict[str, Any]], Any] | None
    _refresher: Coalesced
    _list_changed_task: asyncio.Task[None] | None
    subscribed: set[str]
    _resource_updated: Callable[[str], None]  # provided by ResourceSubscriptions (an annotation, so the MRO finds it)

    def _init_events(self) -> None:
        self.logs: deque[dict[str, Any]] = deque(maxlen=LOG_LINES)
        self._log_notice = Coalesced(self._logs_changed, 0.5)

    async def _refresh_now(self) -> bool:  # provided by ServerConnection
        raise NotImplementedError

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # reported by the transport (recorded by LoggingTransport)
            return
        if isinstance(message, types.ServerNotification):
            message = message.root if hasattr(message, "root") else message
        if isinstance(message, (types.ToolListChangedNotification, types.ResourceListChangedNotification,
                                types.PromptListChangedNotification)):
            self._schedule_refresh()
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._resource_updated(str(message.params.uri))

    def _schedule_refresh(self) -> None:
        """Refresh the catalogue soon: a burst of list_changed notifications makes one refresh."""
        if self.client is not None:
            self._refresher.request()

    async def _on_sampling(self, context: Any, params: Any) -> Any:
        """A server asks the model for a message: the person decides, then the current backend answers."""
        assert self.sampler is not None
        try:
            result = await self.sampler(self.name, dump(params))
        except MokaError as exc:
            return types.ErrorData(**to_jsonrpc(exc))
        return types.CreateMessageResult.model_validate(result)

    async def _on_log(self, params: Any) -> None:
        data = dump(params)
        self.inspector.record("server", data, server=self.name, method="notifications/message")
        self.logs.append(log_line(data))
        self._log_notice.request()  # the card updates, at most twice a second

    async def _logs_changed(self) -> bool:
        try:
            self.on_change(self)
        except Exception:
            log.exception("reporting %r's log lines failed", self.name)
        return True

    def _stop_listening(self) -> None:
        if self._list_changed_task is not None:
            self._list_changed_task.cancel()
            self._list_changed_task = None

    def _start_listening(self, client: Client) -> None:
        if (client.protocol_version or "") < "2026-07-28":
            return
        followed = sorted(self.subscribed)

        async def listen() -> None:
            try:
                async with client.listen(tools_list_changed=True, resources_list_changed=True,
                                         prompts_list_changed=True, resource_subscriptions=followed) as sub:
                    async for event in sub:
                        if isinstance(event, ResourceUpdated):
                            self._resource_updated(event.uri)
                        else:
                            self._schedule_refresh()
            except Exception as exc:  # listening is best effort; the connection itself is supervised
                self.inspector.record("server", {"error": f"subscriptions/listen ended: {describe_exception(exc)}"},
                                      server=self.name, method="listen/error")

        self._list_changed_task = asyncio.get_running_loop().create_task(listen())
