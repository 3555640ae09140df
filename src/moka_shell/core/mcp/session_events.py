"""What a connected server sends Moka unasked: list changes, log lines, sampling requests, transport reports.

The SDK's ``Client`` calls these handlers (``message_handler``, ``logging_callback``,
``sampling_callback``); each hands what arrived to the part of the connection that owns it.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import deque
from collections.abc import Callable
from typing import Any

import mcp_types as types

from moka_shell.core.mcp.coalesce import Coalesced
from moka_shell.core.mcp.listing import ServerListing
from moka_shell.core.mcp.sdk import dump
from moka_shell.core.mcp.subscriptions import ResourceSubscriptions
from moka_shell.errors import MokaError, to_jsonrpc
from moka_shell.inspector import Inspector

# Answers sampling/createMessage from a server (after the person's consent): (server, params) -> result.
Sampler = Callable[[str, dict[str, Any]], Any]

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
    """The SDK's handlers for one connection: list changes, resource updates, log lines, sampling."""

    def __init__(self, name: str, inspector: Inspector, listing: ServerListing,
                 subscriptions: ResourceSubscriptions, *, logs_changed: Callable[[], None],
                 sampler: Sampler | None = None) -> None:
        self._name = name
        self._inspector = inspector
        self._listing = listing
        self._subscriptions = subscriptions
        self.sampler = sampler  # None: the server is not offered sampling at all
        self.logs: deque[dict[str, Any]] = deque(maxlen=LOG_LINES)
        self._logs_changed = logs_changed  # the card shows the new lines
        self._log_notice = Coalesced(self._report_logs, 0.5)

    async def on_message(self, message: Any) -> None:
        """``message_handler``: list changes refresh the listing; a resource update goes to its followers."""
        if isinstance(message, Exception):  # reported by the transport (recorded by LoggingTransport)
            return
        if isinstance(message, types.ServerNotification):
            message = message.root if hasattr(message, "root") else message
        if isinstance(message, (types.ToolListChangedNotification, types.ResourceListChangedNotification,
                                types.PromptListChangedNotification)):
            self._listing.refresh_soon()
        elif isinstance(message, types.ResourceUpdatedNotification):
            self._subscriptions.updated(str(message.params.uri))

    async def on_sampling(self, context: Any, params: Any) -> Any:
        """A server asks the model for a message: the person decides, then the current backend answers."""
        assert self.sampler is not None
        try:
            result = await self.sampler(self._name, dump(params))
        except MokaError as exc:
            return types.ErrorData(**to_jsonrpc(exc))
        return types.CreateMessageResult.model_validate(result)

    async def on_log(self, params: Any) -> None:
        """``logging_callback``: the line goes to the inspector and the server's log (capped)."""
        data = dump(params)
        self._inspector.record("server", data, server=self._name, method="notifications/message")
        self.logs.append(log_line(data))
        self._log_notice.request()  # the card updates, at most twice a second

    async def _report_logs(self) -> bool:
        self._logs_changed()
        return True
