"""The reference for the CLI's start-up: a bare ``mcp`` client, nothing of Moka's.

    python bench/bare_client.py tools COMMAND [ARG ...]
    python bench/bare_client.py call TOOL JSON COMMAND [ARG ...]

Starts COMMAND over stdio with the SDK's own ``Client`` (mode auto, as Moka connects), lists its
tools or calls one, prints what ``moka tools`` or ``moka call`` prints in substance (each tool's
name and the first line of its description; the call's text and structuredContent), and exits.
With BENCH_STAMPS=FILE it writes there when (epoch seconds) it was running, had imported the
SDK, was connected, had its answer and had closed the connection (bench/cli_start.py).
"""

from __future__ import annotations

import time

STAMPS = {"running": time.time()}

import asyncio  # noqa: E402 - the stamp above is taken before any import
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from mcp import Client, StdioServerParameters  # noqa: E402

STAMPS["imported"] = time.time()


async def main(argv: list[str]) -> int:
    """List or call, then print."""
    what, rest = argv[0], argv[1:]
    tool, arguments = (rest[0], json.loads(rest[1])) if what == "call" else ("", {})
    command = rest[2:] if what == "call" else rest
    async with Client(StdioServerParameters(command=command[0], args=command[1:])) as client:
        STAMPS["connected"] = time.time()
        if what == "tools":
            for t in (await client.list_tools()).tools:
                print(t.name)
                if t.description:
                    print("    " + t.description.splitlines()[0][:100])
            code = 0
        else:
            result = await client.call_tool(tool, arguments)
            for item in result.content:
                print(getattr(item, "text", f"[{item.type} content]"))
            if result.structured_content is not None:
                print("structuredContent: " + json.dumps(result.structured_content, default=str))
            code = 1 if result.is_error else 0
        STAMPS["answered"] = time.time()
    STAMPS["closed"] = time.time()
    return code


if __name__ == "__main__":
    status = asyncio.run(main(sys.argv[1:]))
    if os.environ.get("BENCH_STAMPS"):
        with open(os.environ["BENCH_STAMPS"], "w", encoding="utf-8") as out:
            json.dump(STAMPS, out)
    sys.exit(status)
