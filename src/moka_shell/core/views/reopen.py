"""Reopening a stored view: a fresh mount of the same tool's UI, fed its stored input and result."""

from __future__ import annotations

from typing import Any

from moka_shell.core.views.host import ViewHost
from moka_shell.core.views.view import View


async def reopen_view(host: ViewHost, record_id: str, rec: dict[str, Any]) -> View | None:
    """Render the stored view ``rec`` again, with its input and result replayed."""
    view = await host.open_view(rec["server"], rec["tool"], call_id=rec["toolCallId"],
                                conversation_id=rec["conversationId"], record_id=record_id)
    if view is None:
        return None
    if rec["arguments"] is not None:
        host.set_input(view, rec["arguments"])
    if rec["result"] is not None:
        host.set_result(view, rec["result"])
    elif rec["cancelled"]:
        host.cancel(view, rec["cancelled"])
    elif rec["arguments"] is not None:
        host.cancel(view, "Moka stopped before this call finished.")
    return view
