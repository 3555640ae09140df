"""Bridge method for recordings: a view's session as one JSON document (the Inspector saves it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from moka_shell.bridge.params import Params, req_str
from moka_shell.core.views.recording import build_recording

if TYPE_CHECKING:
    from moka_shell.core.app import MokaApp


class RecordingMethods:
    """``views.record``."""

    def __init__(self, app: MokaApp) -> None:
        self.app = app

    def methods(self) -> dict[str, Any]:
        """Method name → coroutine function."""
        return {"views.record": self.record}

    async def record(self, p: Params) -> dict[str, Any]:
        """``{filename, recording}``: the view's session so far, secrets redacted (docs/app-authors.md)."""
        host = self.app.view_host
        view = host.get(req_str(p, "viewId"))
        safe_tool = "".join(c if c.isalnum() or c in "-_" else "-" for c in view.tool.name)[:60] or "view"
        return {"filename": f"{safe_tool}-{view.id}.moka-recording.json", "recording": build_recording(host, view)}
