"""A process that starts and never answers MCP (for the connect deadline test)."""

import sys
import time

print("mute server: reading stdin, answering nothing", file=sys.stderr, flush=True)
while True:
    if not sys.stdin.readline():
        time.sleep(60)
