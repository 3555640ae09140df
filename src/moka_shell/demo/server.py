"""The bundled `moka-demo` MCP server: dice with a view, and a playground view for every host method."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from moka_shell.demo import dice, documents

NAME = "moka-demo"
VERSION = "0.1.0"
DICE_URI = "ui://moka-demo/dice"
PLAYGROUND_URI = "ui://moka-demo/playground"
README_URI = "moka-demo://readme"
DICE_CONNECT_DOMAINS = ["https://api.example.com"]

APP_ONLY: dict[str, Any] = {"ui": {"visibility": ["app"]}}
MODEL_ONLY: dict[str, Any] = {"ui": {"visibility": ["model"]}}

Sides = Annotated[
    int,
    Field(
        description=f"Faces per die, {dice.MIN_SIDES} to {dice.MAX_SIDES}.",
        json_schema_extra={"minimum": dice.MIN_SIDES, "maximum": dice.MAX_SIDES},
    ),
]
Count = Annotated[
    int,
    Field(
        description=f"How many dice to roll, {dice.MIN_COUNT} to {dice.MAX_COUNT}.",
        json_schema_extra={"minimum": dice.MIN_COUNT, "maximum": dice.MAX_COUNT},
    ),
]

README = """\
# moka-demo

The demo MCP server bundled with Moka.

- `roll_dice` rolls dice and shows them in the view `ui://moka-demo/dice`.
- `open_playground` opens `ui://moka-demo/playground`, a view with one button per host method.
- `reroll_dice` and `dice_history` are app-only: only the views may call them.
- `summarize_rolls` is model-only: a view that calls it must be refused by the host.

Start it with `python -m moka_shell.demo` (stdio) or `python -m moka_shell.demo --http PORT`
(Streamable HTTP on http://127.0.0.1:PORT/mcp).
"""


def _text_result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _ui_meta(uri: str) -> dict[str, Any]:
    # The flat key is the deprecated spelling; older hosts still read only that one.
    return {"ui/resourceUri": uri}


def _build_apps(log: dice.RollLog) -> Apps:
    apps = Apps()

    @apps.tool(
        resource_uri=DICE_URI,
        meta=_ui_meta(DICE_URI),
        title="Roll dice",
        description="Roll `count` dice with `sides` faces each and show them in a dice view.",
        # Rolling changes nothing outside this server's own roll log, so the model may roll unasked.
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    def roll_dice(sides: Sides = 6, count: Count = 1) -> Annotated[CallToolResult, dice.DiceRoll]:
        """Roll dice for the model and render them in the dice view."""
        result = _roll(sides, count)
        log.record(result, "model")
        return _text_result(dice.describe(result), result.model_dump())

    @apps.tool(
        resource_uri=PLAYGROUND_URI,
        meta=_ui_meta(PLAYGROUND_URI),
        title="Open the playground",
        description="Open a view with one button for every MCP Apps host method; useful to test a host.",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def open_playground() -> str:
        """Open the playground view."""
        return "Opened the moka-demo playground. The person can now try each host method from its buttons."

    apps.add_html_resource(
        DICE_URI,
        documents.render("dice.html"),
        name="dice",
        title="Dice",
        description="Shows a dice roll; can roll again and list the history.",
        csp=ResourceCsp(connect_domains=DICE_CONNECT_DOMAINS),
        prefers_border=True,
    )
    apps.add_html_resource(
        PLAYGROUND_URI,
        documents.render("playground.html"),
        name="playground",
        title="Host method playground",
        description="Buttons for every MCP Apps host method, with an on-page log of each outcome.",
        csp=ResourceCsp(connect_domains=DICE_CONNECT_DOMAINS),
        prefers_border=False,
    )
    return apps


def _roll(sides: int, count: int) -> dice.DiceRoll:
    try:
        return dice.roll(sides, count)
    except dice.DiceError as exc:
        raise ToolError(str(exc)) from exc


def _add_plain_tools(server: MCPServer, log: dice.RollLog) -> None:
    @server.tool(
        title="Roll again (app only)",
        description="Roll dice again from the dice view and remember the roll.",
        meta=APP_ONLY,
    )
    def reroll_dice(sides: Sides = 6, count: Count = 1) -> Annotated[CallToolResult, dice.DiceRoll]:
        """Roll dice for a view."""
        result = _roll(sides, count)
        log.record(result, "app")
        return _text_result(dice.describe(result), result.model_dump())

    @server.tool(
        title="Dice history (app only)",
        description=f"The last {dice.HISTORY_LIMIT} rolls of this server process, oldest first.",
        meta=APP_ONLY,
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def dice_history() -> Annotated[CallToolResult, dice.DiceHistory]:
        """Return the remembered rolls."""
        history = log.snapshot()
        lines = [dice.describe(entry) for entry in history.entries] or ["No rolls yet."]
        return _text_result("\n".join(lines), history.model_dump())

    @server.tool(
        title="Summarize rolls (model only)",
        description="A plain-text summary of the dice rolled so far, for the model.",
        meta=MODEL_ONLY,
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def summarize_rolls() -> str:
        """Summarize the roll history in a few sentences."""
        return dice.summarize(log.snapshot().entries)

    @server.resource(README_URI, name="readme", title="About moka-demo", mime_type="text/markdown")
    def readme() -> str:
        """The demo server's readme."""
        return README


def build_server() -> MCPServer:
    """Build a fresh moka-demo server with its own roll history."""
    log = dice.RollLog()
    server = MCPServer(
        NAME,
        title="Moka demo",
        description="Dice with an MCP App view, and a playground view that exercises every host method.",
        version=VERSION,
        extensions=[_build_apps(log)],
        log_level="WARNING",
    )
    _add_plain_tools(server, log)
    return server


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server over stdio, or over Streamable HTTP with `--http PORT`."""
    args = _parser().parse_args(argv)
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
