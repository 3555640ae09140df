"""The bundled `moka-demo` MCP server: dice with a view, and a playground view for every host method.

stdio (what Moka starts) runs on the standard library alone (`stdio_server.py`); `--http PORT`
runs the `mcp` SDK's server (`sdk_server.py`), imported only then. Both serve `catalog.py`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from moka_shell.demo.catalog import DICE_URI, NAME, PLAYGROUND_URI, README, README_URI, VERSION

if TYPE_CHECKING:
    from mcp.server import MCPServer

__all__ = ["DICE_URI", "NAME", "PLAYGROUND_URI", "README", "README_URI", "VERSION", "build_server", "main"]


def build_server() -> MCPServer:
    """Build a fresh moka-demo server on the `mcp` SDK, with its own roll history."""
    from moka_shell.demo.sdk_server import build_server as build

    return build()


def _port(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 1-65535, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m moka_shell.demo", description=__doc__)
    parser.add_argument(
        "--http",
        metavar="PORT",
        type=_port,
        help="serve Streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio",
    )
    parser.add_argument("--sdk", action="store_true",
                        help="serve stdio with the mcp SDK's server instead of the built-in one")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server over stdio, or over Streamable HTTP with `--http PORT`."""
    args = _parser().parse_args(argv)
    if args.http is None and not args.sdk:
        from moka_shell.demo import stdio_server

        return stdio_server.main()
    server = build_server()
    try:
        if args.http is None:
            server.run("stdio")  # stdout is the protocol channel: nothing else may write there.
        else:
            print(f"{NAME} listening on http://127.0.0.1:{args.http}/mcp", file=sys.stderr, flush=True)
            server.run("streamable-http", host="127.0.0.1", port=args.http, streamable_http_path="/mcp")
    except KeyboardInterrupt:
        return 0
    return 0
