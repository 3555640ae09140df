"""``moka replay``: a recorded view session played back through the real UI page, proxy, CSP and
dispatcher, with no MCP server. Every request the view makes is answered from the recording.

``--check`` runs it headless and compares (``replay_diff.py``); without it the view opens in the
default browser, on a Moka of its own (a throwaway data folder, no servers), until Ctrl+C.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import time
import webbrowser
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moka_shell.core.mcp.catalog import ToolEntry, UiResource
from moka_shell.core.views.recording import check_recording
from moka_shell.core.views.view import View
from moka_shell.errors import BridgeError, RecordingError
from moka_shell.inspector import EventFilter
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import CoreThread
from moka_shell.shells.check.replay_diff import Comparison, Exchange, compare, normalize, recorded_exchanges
from moka_shell.terminal import line

SETTLE = 1.5


def load_recording(path: str) -> dict[str, Any]:
    """Read and check a recording file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordingError(f"can't read the recording {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordingError(f"{path} is not JSON: {exc.msg} at line {exc.lineno}") from exc
    return check_recording(data, path)


class Answers:
    """The recorded replies to the view's requests, handed out in order (matching params first)."""

    def __init__(self, rec: dict[str, Any]) -> None:
        self.queues: dict[str, deque[Exchange]] = recorded_exchanges(rec["messages"])

    def take(self, method: str, params: dict[str, Any]) -> Exchange | None:
        """The recorded exchange for this request, or None when the recording has no more of them."""
        queue = self.queues.get(method)
        if not queue:
            return None
        want = normalize(params)
        match = next((ex for ex in queue if ex.params == want), queue[0])
        queue.remove(match)
        return match


def _reply_of(ex: Exchange | None, method: str) -> dict[str, Any]:
    if ex is None:
        raise BridgeError(BridgeError.METHOD_NOT_FOUND, f"{method} is not in the recording being replayed")
    reply = ex.reply or {}
    if "error" in reply and isinstance(reply["error"], dict):
        raise BridgeError(int(reply["error"].get("code", -32603)), str(reply["error"].get("message", "error")))
    result = reply.get("result")
    if not isinstance(result, dict) or result.get("moka/truncated"):
        raise BridgeError(BridgeError.INTERNAL_ERROR, f"the recording has no whole reply to this {method}")
    return result


class Replay:
    """One recording, mounted as a view of a core with no servers."""

    def __init__(self, rec: dict[str, Any], core: CoreThread) -> None:
        self.rec = rec
        self.core = core
        self.answers = Answers(rec)
        self.view: View | None = None
        self.vetted: list[str] = []  # what the recording declared and Moka refused (notes, not divergences)

    async def mount(self) -> View:
        """Create the view from the recording, answer its requests from it, and announce it."""
        app = self.core.app
        assert app is not None
        host, rec = app.view_host, self.rec
        tool, res = rec["tool"], rec["resource"]
        meta = res.get("_meta") if isinstance(res.get("_meta"), dict) else {}
        entry = ToolEntry(server=str(rec.get("server") or "replay"), name=tool["name"], title=tool.get("title"),
                          description=str(tool.get("description") or ""), input_schema=tool.get("inputSchema") or {},
                          meta=tool.get("_meta") or {}, resource_uri=str(res.get("uri") or "ui://replay"),
                          visibility=["model", "app"])
        view_id = "v" + secrets.token_hex(6)
        # Vetted like a live server's view (finding G4): a recording someone sends you declares what it
        # likes, so Moka's own origins and any-port loopback are dropped, the CSP report URL carries the
        # view's key, and devices are the person's to grant (in --check: denied).
        policy = await host.policy(entry.server, meta, view_id, allow_eval=False)
        view = View(id=view_id, server=entry.server, tool=entry, call_id="c" + secrets.token_hex(6),
                    resource=UiResource(uri=entry.resource_uri or "", html=res["html"], mime_type=res.get("mimeType"),
                                        ui_meta=meta),
                    policy=policy)
        self.vetted = policy.rejected + policy.denied
        view.problems.extend(self.vetted)  # shown on the view's card in `moka replay FILE`
        view.mark("created")
        host.adopt(view)
        storage: dict[str, Any] = rec["storage"] if isinstance(rec.get("storage"), dict) else {}
        for area in ("local", "session"):
            items = [(str(k), str(v)) for k, v in storage.get(area) or []]
            host.storage.areas.seed(view, area, items)  # type: ignore[arg-type]
        self._answer_from_recording(host.dispatcher)
        if rec.get("toolInput") is not None:
            host.set_input(view, rec["toolInput"])
        if rec.get("toolResult") is not None:
            host.set_result(view, rec["toolResult"])
        elif rec.get("toolCancelled"):
            host.cancel(view, str(rec["toolCancelled"]))
        host.emit("view.created", host.describe(view))
        self.view = view
        return view

    def _answer_from_recording(self, dispatcher: Any) -> None:
        real_initialize = dispatcher.requests["ui/initialize"]

        async def initialize(view: View, params: dict[str, Any]) -> dict[str, Any]:
            ours = await real_initialize(view, params)  # its bookkeeping: app info, capabilities, timings
            ex = self.answers.take("ui/initialize", params)
            return _reply_of(ex, "ui/initialize") if ex is not None and ex.reply else ours

        def answer(method: str) -> Any:
            async def handler(view: View, params: dict[str, Any]) -> dict[str, Any]:
                return _reply_of(self.answers.take(method, params), method)
            return handler

        dispatcher.requests["ui/initialize"] = initialize
        for method in self.answers.queues:
            if method != "ui/initialize":
                dispatcher.requests[method] = answer(method)

    def comparison(self) -> Comparison:
        """How the replay so far compares with the recording."""
        app, view = self.core.app, self.view
        assert app is not None and view is not None
        events = app.inspector.query(EventFilter(view=view.id, channel="ui.rpc"), limit=10_000)
        replayed = [{"direction": e["direction"], "message": e["message"]} for e in events]
        problems = [p for p in view.problems if p not in self.vetted]
        if view.state == "failed":
            problems.append(f"the view failed: {view.failure}")
        elif not view.initialized:
            problems.append("the view did not finish the MCP Apps handshake")
        return compare(self.rec["messages"], replayed, problems)


@dataclass
class ReplayReport:
    """What ``moka replay --check`` found."""

    recording: str
    tool: str
    divergences: list[str] = field(default_factory=list)
    not_reached: list[str] = field(default_factory=list)
    compared: int = 0
    notes: list[str] = field(default_factory=list)  # what Moka refused the recording (own origins, devices)

    @property
    def ok(self) -> bool:
        """No divergence."""
        return not self.divergences

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form."""
        return {"recording": self.recording, "tool": self.tool, "ok": self.ok, "divergences": self.divergences,
                "notReached": self.not_reached, "compared": self.compared, "notes": self.notes}

    def to_text(self) -> str:
        """Human-readable form."""
        # The tool's name, the divergences (the view's own errors among them) come from the file: inert (G5).
        lines = [f"moka replay {line(self.recording)}  ({line(self.tool)}; {self.compared} view messages compared)"]
        lines += [f"  divergence: {line(d)}" for d in self.divergences]
        lines += [f"  note: {line(n)}" for n in self.notes]
        if self.not_reached:
            lines.append(f"  not reached (recorded, not sent in the replay): {', '.join(line(m) for m in self.not_reached)}")
        lines.append("OK: the view replayed without divergence" if self.ok
                     else f"FAILED: {len(self.divergences)} divergence(s)")
        return "\n".join(lines)


def write_recording(app: Any, view: View, path: str) -> None:
    """Save ``view``'s session as a recording (``moka check --record FILE``)."""
    from moka_shell.core.views.recording import build_recording

    rec = build_recording(app.view_host, view)
    try:
        Path(path).write_text(json.dumps(rec, indent=1), encoding="utf-8")
    except OSError as exc:
        raise RecordingError(f"can't write the recording {path}: {exc.strerror or exc}") from exc


def _core() -> tuple[CoreThread, tempfile.TemporaryDirectory[str]]:
    tmp = tempfile.TemporaryDirectory(prefix="moka-replay-")
    paths = Paths(Path(tmp.name) / "config.json", Path(tmp.name) / "data")
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text('{"mcpServers": {}}', encoding="utf-8")
    return CoreThread(paths, mode="check", servers=[], store=False), tmp


def replay_check(path: str, *, timeout: float = 20.0, settle: float = SETTLE) -> ReplayReport:
    """Replay headless in Chromium and compare with the recording."""
    from moka_shell.shells.check.engines import ChromiumEngine
    from moka_shell.shells.check.watch import watch

    rec = load_recording(path)
    core, tmp = _core()
    report = ReplayReport(recording=path, tool=rec["tool"]["name"])
    try:
        core.start()
        replay = Replay(rec, core)
        view = core.submit(replay.mount()).result(30)
        assert core.app is not None
        engine = ChromiumEngine()
        try:
            engine.open(core.app.view_host.popout_url(view) + "&check=1")
            watch(view, core.app.inspector, settle=settle, deadline=time.monotonic() + timeout + settle,
                  pause=engine.pause)
            found = replay.comparison()
        finally:
            engine.close()
        report.divergences, report.not_reached, report.compared = found.divergences, found.not_reached, found.compared
        report.notes = replay.vetted
    finally:
        core.stop()
        tmp.cleanup()
    return report


def replay_open(path: str) -> int:
    """Replay in the default browser until Ctrl+C (the view's requests answered from the recording)."""
    rec = load_recording(path)
    core, tmp = _core()
    core.mode = "browser"
    try:
        core.start()
        view = core.submit(Replay(rec, core).mount()).result(30)
        assert core.app is not None
        url = core.app.view_host.popout_url(view)
        print(f"Replaying {line(rec['tool']['name'])} from {path} (no server; answers come from the recording).",
              flush=True)
        print(f"Open {url}  — press Ctrl+C to stop.", flush=True)
        webbrowser.open(url)
        try:
            while core.thread.is_alive():
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
    finally:
        core.stop()
        tmp.cleanup()
    return 0


__all__ = ["Replay", "ReplayReport", "load_recording", "replay_check", "replay_open"]
