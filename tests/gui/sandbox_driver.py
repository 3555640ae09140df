"""Drives the real desktop shell offscreen against a hostile view (findings S3, S4, S14).

A view of tests/servers/hostile_server.py (`escape`) tries WebRTC to local UDP/TCP sinks (in
its own window and in a fresh about:blank child frame) and window.open; the page itself asks for
a new window; the renderer processes are counted. Run in a fresh process (Qt starts once per
process) by tests/gui/test_desktop_sandbox.py. Prints one JSON line with what it saw.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from moka_shell.paths import Paths
from moka_shell.shells.desktop.run import run_desktop

OUT: dict[str, Any] = {"udp": [], "tcp": 0, "consent": []}
HERE = Path(__file__).resolve().parent
SERVER = HERE.parent / "servers" / "hostile_server.py"


def sinks() -> tuple[int, int]:
    """A UDP and a TCP listener on loopback that count what reaches them."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)

    def read_udp() -> None:
        while True:
            data, _ = udp.recvfrom(65536)
            OUT["udp"].append(data[:64].hex())

    def accept_tcp() -> None:
        while True:
            conn, _ = tcp.accept()
            OUT["tcp"] += 1
            conn.close()

    threading.Thread(target=read_udp, daemon=True).start()
    threading.Thread(target=accept_tcp, daemon=True).start()
    return udp.getsockname()[1], tcp.getsockname()[1]


def ancestors(pid: str) -> set[str]:
    """The pids above ``pid`` (from /proc)."""
    seen: set[str] = set()
    while pid not in ("0", "1", "") and pid not in seen:
        seen.add(pid)
        try:
            stat = (Path("/proc") / pid / "stat").read_text()
        except OSError:
            break
        pid = stat.rsplit(")", 1)[1].split()[1]
    return seen


def renderers() -> list[dict[str, Any]]:
    """QtWebEngine's helper processes under this one, with their resident memory (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if "QtWebEngineProcess" in cmdline and str(os.getpid()) in ancestors(entry.name):
            kind = next((a.split("=", 1)[1] for a in cmdline.split() if a.startswith("--type=")), "?")
            found.append({"pid": int(entry.name), "type": kind,
                          "rss_kb": int(fields.get("VmRSS", "0 kB").split()[0])})
    return found


def drive(core: Any, window: Any) -> None:
    app = core.app
    udp, tcp = sinks()
    deadline = time.monotonic() + 30
    while not app.view_host.client and time.monotonic() < deadline:
        time.sleep(0.1)

    def on(event: str, data: Any) -> None:
        if event == "consent.request":
            OUT["consent"].append({"action": data["action"], "server": data["server"], "detail": data["detail"]})
            app.consent.answer(data["requestId"], False, False)  # a no: nothing opens

    app.subscribe(on)
    OUT["renderers_before"] = renderers()
    core.submit(app.servers.wait_ready(timeout=30)).result(40)
    window.run_js("location.hash = '#runner'")
    time.sleep(1.0)
    views = []
    for _ in range(3):
        _cid, view, _ = core.submit(app.view_host.run_tool("hostile", "escape", {"udp": udp, "tcp": tcp})).result(40)
        views.append(view)
    report: dict[str, Any] | None = None
    deadline = time.monotonic() + 40
    while report is None and time.monotonic() < deadline:
        for ev in app.inspector.query(limit=100000):
            msg = ev.get("message") or {}
            if ev["channel"] == "ui.rpc" and ev.get("view") == views[0].id and msg.get("method") == "notifications/message" \
                    and (msg.get("params") or {}).get("logger") == "hostile":
                report = msg["params"]["data"]
        time.sleep(0.2)
    OUT["report"] = report
    OUT["problems"] = views[0].problems[:5]
    OUT["seen"] = [(e.get("message") or {}).get("method") for e in app.inspector.query(limit=100000)
                   if e["channel"] == "ui.rpc" and e.get("view") == views[0].id][:30]
    OUT["views_ready"] = [v.state for v in views]
    OUT["renderers_with_views"] = renderers()
    # The page itself asks for a new window: pywebview would hand it to the system browser unasked.
    window.run_js(f"window.open('http://127.0.0.1:{tcp}/from-the-page')")
    deadline = time.monotonic() + 10
    while not any(c["action"] == "open_link" for c in OUT["consent"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1.0)  # give a leaked request time to arrive at the sink
    OUT["token"] = app.endpoints.token


if __name__ == "__main__":
    data = Path(sys.argv[1])
    data.mkdir(parents=True, exist_ok=True)
    servers = {"hostile": {"command": sys.executable, "args": [str(SERVER)]}}
    (data / "config.json").write_text(json.dumps({"mcpServers": servers, "theme": {"mode": "light"}}))
    code = run_desktop(Paths(data / "config.json", data), driver=drive)
    print(json.dumps(OUT), flush=True)
    sys.exit(code)
