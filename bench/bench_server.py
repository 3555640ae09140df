"""The benchmark's own MCP server: `ping` and a hand-written view that times tools/call from inside.

    python bench/bench_server.py                  stdio
    python bench/bench_server.py --http PORT      streamable HTTP on 127.0.0.1:PORT/mcp
    python bench/bench_server.py --exit-after S   stdio, exiting (code 3) S seconds after it started

Over HTTP it exits by itself when the process that started it is gone, or after --ttl seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.apps import Apps

VIEW_URI = "ui://moka-bench/view"
VIEW_HTML = (Path(__file__).with_name("view.html")).read_text(encoding="utf-8")


def build(*, view: bool = True) -> MCPServer:
    """The server: one UI tool and one tool views may call (without ``view``: only ``ping``)."""
    apps = Apps()

    @apps.tool(resource_uri=VIEW_URI, meta={"ui/resourceUri": VIEW_URI}, title="Bench view",
               description="Open the bench view; with calls > 0 it times that many calls to ping; "
                           "with loop it calls ping until closed, pause ms apart.")
    def bench_view(calls: int = 0, warmup: int = 0, loop: bool = False, pause: int = 100) -> str:
        """Open the bench view."""
        if loop:
            return f"bench view: ping in a loop, {pause} ms apart"
        return f"bench view: {calls} calls after {warmup} warm-up calls"

    apps.add_html_resource(VIEW_URI, VIEW_HTML, name="bench-view", title="Bench view")
    server = MCPServer("moka-bench", version="1.0.0", extensions=[apps] if view else [], log_level="WARNING")

    @server.tool(description="Answer at once.", meta={"ui": {"visibility": ["model", "app"]}})
    def ping(i: int = 0) -> str:
        """Answer at once."""
        return f"pong {i}"

    return server


def _watchdog(parent: int, ttl: float) -> None:
    deadline = time.monotonic() + ttl
    while time.monotonic() < deadline and os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main() -> int:
    """Serve over stdio or HTTP."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--ttl", type=float, default=900.0, help="HTTP: exit after this many seconds")
    parser.add_argument("--exit-after", type=float, help="stdio: exit with code 3 this many seconds after starting")
    args = parser.parse_args()
    # The server that exits has only ping: the model's bench_view stays one name, whichever is up.
    server = build(view=args.exit_after is None)
    if args.exit_after is not None:  # the soak's server that goes away every minute, for Moka to restart
        timer = threading.Timer(args.exit_after, lambda: os._exit(3))
        timer.daemon = True  # a server told to stop (stdin closed) still ends at once
        timer.start()
    if args.http is None:
        server.run("stdio")
        return 0
    threading.Thread(target=_watchdog, args=(os.getppid(), args.ttl), daemon=True).start()
    print(f"moka-bench listening on http://127.0.0.1:{args.http}/mcp", file=sys.stderr, flush=True)
    server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
