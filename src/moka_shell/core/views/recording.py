"""A view session as one JSON file: what the view was given, and every message both ways, timed.

A recording holds the ``ui://`` resource (HTML and ``_meta``), the tool, the host context the
view got, the tool input and result, the view's storage when it started, and every ``ui.rpc``
message in either direction with its time since the first. It is built from the Inspector's
record of the view, which has secret-looking keys redacted already; the whole recording then
goes through ``core/redact.py`` (known secret values masked), so no secret is ever in a file.
``moka replay`` (``shells/check/replay.py``) plays one back with no server.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from moka_shell.version import __version__
from moka_shell.core.redact import SECRETS
from moka_shell.errors import RecordingError
from moka_shell.inspector import EventFilter

if TYPE_CHECKING:
    from moka_shell.core.views.host import ViewHost
    from moka_shell.core.views.view import View

FORMAT = "moka-view-recording"
VERSION = 1
MAX_MESSAGES = 10_000
DATA_METHODS = ("ui/notifications/tool-input", "ui/notifications/tool-result", "ui/notifications/tool-cancelled")


def build_recording(host: ViewHost, view: View) -> dict[str, Any]:
    """The recording of ``view`` so far (a live view keeps going; this is what happened until now)."""
    events = host.inspector.query(EventFilter(view=view.id, channel="ui.rpc"), limit=MAX_MESSAGES)
    t0 = events[0]["time"] if events else 0.0
    messages = [{"t": round((e["time"] - t0) * 1000, 1), "direction": e["direction"], "message": e["message"]}
                for e in events]
    sent = {m["message"].get("method"): m["message"] for m in messages
            if m["direction"] == "out" and isinstance(m["message"], dict) and m["message"].get("method") in DATA_METHODS}
    # The view's own fields first; a view that ended may have let them go, the transcript keeps them.
    tool_input = view.arguments if view.arguments is not None else \
        (sent.get(DATA_METHODS[0]) or {}).get("params", {}).get("arguments")
    tool_result = view.result if view.result is not None else (sent.get(DATA_METHODS[1]) or {}).get("params")
    cancelled = view.cancelled if view.cancelled is not None else \
        (sent.get(DATA_METHODS[2]) or {}).get("params", {}).get("reason")
    rec: dict[str, Any] = {
        "format": FORMAT, "version": VERSION, "moka": __version__,
        "recordedAt": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "server": view.server,
        "tool": view.tool.to_mcp_tool(),
        "resource": {"uri": view.resource.uri, "mimeType": view.resource.mime_type, "html": view.resource.html,
                     "_meta": view.resource.ui_meta},
        "hostContext": _initialize_context(messages) or host.host_context(view),
        "toolInput": tool_input, "toolResult": tool_result, "toolCancelled": cancelled,
        "storage": host.storage.at_start(view),
        "complete": bool(messages) and _is_initialize(messages[0]["message"]) and len(events) < MAX_MESSAGES,
        "messages": messages,
    }
    return SECRETS.scrub(rec)  # type: ignore[no-any-return]


def _is_initialize(message: Any) -> bool:
    return isinstance(message, dict) and message.get("method") == "ui/initialize"


def _initialize_context(messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The hostContext Moka answered ui/initialize with (what the view really got)."""
    init_ids = {m["message"].get("id") for m in messages if m["direction"] == "in" and _is_initialize(m["message"])}
    for m in messages:
        msg = m["message"]
        if m["direction"] == "out" and isinstance(msg, dict) and msg.get("id") in init_ids and "result" in msg:
            ctx = (msg.get("result") or {}).get("hostContext")
            return ctx if isinstance(ctx, dict) else None
    return None


def check_recording(rec: Any, where: str) -> dict[str, Any]:
    """``rec`` if it is a recording this Moka can replay; a RecordingError saying what is wrong otherwise."""
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        raise RecordingError(f"{where} is not a Moka view recording (no \"format\": \"{FORMAT}\")",
                             hint="make one with `moka check SERVER --tool T --record FILE` or the Inspector's "
                                  "\"Save this view's session\"")
    if rec.get("version") != VERSION:
        raise RecordingError(f"{where} is a version {rec.get('version')!r} recording; this Moka reads version {VERSION}")
    resource = rec.get("resource")
    if not isinstance(resource, dict) or not isinstance(resource.get("html"), str):
        raise RecordingError(f"{where} has no resource HTML to show")
    if not isinstance(rec.get("tool"), dict) or not isinstance(rec["tool"].get("name"), str):
        raise RecordingError(f"{where} names no tool")
    if not isinstance(rec.get("messages"), list) or not all(isinstance(m, dict) for m in rec["messages"]):
        raise RecordingError(f"{where} has no list of messages")
    return rec
