"""An MCP server that misbehaves before it serves: its flags pick what it does first.

    --stderr-no-newline MB   print MB megabytes to stderr with no newline, then a last line
    --bad-utf8               write invalid UTF-8 lines to stdout before the SDK takes it over
    --exit-after S           print "exiting on purpose" to stderr and exit with code 3 after S seconds
"""

from __future__ import annotations

import os
import sys
import threading
import time

from mcp.server import MCPServer

server = MCPServer("noisy-server")


@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"


def _exit_later(seconds: float) -> None:
    time.sleep(seconds)
    print("exiting on purpose", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--stderr-no-newline" in args:
        megabytes = float(args[args.index("--stderr-no-newline") + 1])
        block = b"e" * 65536
        for _ in range(int(megabytes * 16)):
            os.write(2, block)
        os.write(2, b"\nlast words before serving\n")
    if "--bad-utf8" in args:
        # Raw bytes on fd 1: once the SDK runs, stray prints no longer reach the pipe.
        os.write(1, b"\xff\xfe\xfd not utf-8 \xc3\x28\n")
    if "--exit-after" in args:
        threading.Thread(target=_exit_later, args=(float(args[args.index("--exit-after") + 1]),), daemon=True).start()
    server.run()
