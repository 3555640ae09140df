"""What moka-demo serves, as MCP wire JSON: the one source both of its modes list and call.

Standard library only: the stdio mode (`stdio_server.py`) must not import the `mcp` SDK or
pydantic (docs/performance.md §11); the `--http` mode (`server.py`) lists these same dicts.
"""

from __future__ import annotations

from typing import Any

from moka_shell.demo import dice, documents

NAME = "moka-demo"
VERSION = "0.1.0"
TITLE = "Moka demo"
DESCRIPTION = "Dice with an MCP App view, and a playground view that exercises every host method."
SERVER_INFO: dict[str, str] = {"name": NAME, "title": TITLE, "version": VERSION, "description": DESCRIPTION}

APP_MIME = "text/html;profile=mcp-app"
UI_EXTENSION = "io.modelcontextprotocol/ui"
DICE_URI = "ui://moka-demo/dice"
PLAYGROUND_URI = "ui://moka-demo/playground"
README_URI = "moka-demo://readme"
DICE_CONNECT_DOMAINS = ["https://api.example.com"]

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


def _integer(title: str, default: int, low: int, high: int, what: str) -> dict[str, Any]:
    return {"default": default, "description": f"{what}, {low} to {high}.", "maximum": high,
            "minimum": low, "title": title, "type": "integer"}


def _dice_arguments(tool: str) -> dict[str, Any]:
    sides = _integer("Sides", 6, dice.MIN_SIDES, dice.MAX_SIDES, "Faces per die")
    count = _integer("Count", 1, dice.MIN_COUNT, dice.MAX_COUNT, "How many dice to roll")
    return {"type": "object", "properties": {"sides": sides, "count": count}, "title": f"{tool}Arguments"}


def _no_arguments(tool: str) -> dict[str, Any]:
    return {"type": "object", "properties": {}, "title": f"{tool}Arguments"}


def _text_output(tool: str) -> dict[str, Any]:
    # A tool that returns text gives it as {"result": text} too, as the SDK's tools do.
    return {"type": "object", "properties": {"result": {"title": "Result", "type": "string"}},
            "required": ["result"], "title": f"{tool}Output"}


_ROLL_FIELDS: dict[str, Any] = {
    "sides": {"title": "Sides", "type": "integer"},
    "count": {"title": "Count", "type": "integer"},
    "rolls": {"items": {"type": "integer"}, "title": "Rolls", "type": "array"},
    "total": {"title": "Total", "type": "integer"},
}
DICE_ROLL_SCHEMA: dict[str, Any] = {
    "description": "One roll of `count` dice with `sides` faces each.", "type": "object",
    "properties": _ROLL_FIELDS, "required": list(_ROLL_FIELDS), "title": "DiceRoll",
}
_ENTRY_FIELDS: dict[str, Any] = {
    **_ROLL_FIELDS,
    "source": {"enum": ["model", "app"], "title": "Source", "type": "string"},
    "at": {"title": "At", "type": "string"},
}
DICE_HISTORY_SCHEMA: dict[str, Any] = {
    "$defs": {"HistoryEntry": {
        "description": "A roll remembered by the server, with who asked for it and when.", "type": "object",
        "properties": _ENTRY_FIELDS, "required": list(_ENTRY_FIELDS), "title": "HistoryEntry",
    }},
    "description": "The most recent rolls of this server process, oldest first.", "type": "object",
    "properties": {"entries": {"items": {"$ref": "#/$defs/HistoryEntry"}, "title": "Entries", "type": "array"}},
    "required": ["entries"], "title": "DiceHistory",
}


def _ui_tool(uri: str) -> dict[str, Any]:
    # The flat key is the deprecated spelling; older hosts still read only that one.
    return {"ui": {"resourceUri": uri}, "ui/resourceUri": uri}


TOOLS: list[dict[str, Any]] = [
    {"name": "roll_dice", "title": "Roll dice",
     "description": "Roll `count` dice with `sides` faces each and show them in a dice view.",
     "inputSchema": _dice_arguments("roll_dice"), "outputSchema": DICE_ROLL_SCHEMA,
     # Rolling changes nothing outside this server's own roll log, so the model may roll unasked.
     "annotations": {"readOnlyHint": True, "openWorldHint": False}, "_meta": _ui_tool(DICE_URI)},
    {"name": "open_playground", "title": "Open the playground",
     "description": "Open a view with one button for every MCP Apps host method; useful to test a host.",
     "inputSchema": _no_arguments("open_playground"), "outputSchema": _text_output("open_playground"),
     "annotations": {"readOnlyHint": True}, "_meta": _ui_tool(PLAYGROUND_URI)},
    {"name": "reroll_dice", "title": "Roll again (app only)",
     "description": "Roll dice again from the dice view and remember the roll.",
     "inputSchema": _dice_arguments("reroll_dice"), "outputSchema": DICE_ROLL_SCHEMA,
     "_meta": {"ui": {"visibility": ["app"]}}},
    {"name": "dice_history", "title": "Dice history (app only)",
     "description": f"The last {dice.HISTORY_LIMIT} rolls of this server process, oldest first.",
     "inputSchema": _no_arguments("dice_history"), "outputSchema": DICE_HISTORY_SCHEMA,
     "annotations": {"readOnlyHint": True}, "_meta": {"ui": {"visibility": ["app"]}}},
    {"name": "summarize_rolls", "title": "Summarize rolls (model only)",
     "description": "A plain-text summary of the dice rolled so far, for the model.",
     "inputSchema": _no_arguments("summarize_rolls"), "outputSchema": _text_output("summarize_rolls"),
     "annotations": {"readOnlyHint": True}, "_meta": {"ui": {"visibility": ["model"]}}},
]
TOOLS_BY_NAME: dict[str, dict[str, Any]] = {tool["name"]: tool for tool in TOOLS}


def _view_meta(prefers_border: bool) -> dict[str, Any]:
    return {"ui": {"csp": {"connectDomains": list(DICE_CONNECT_DOMAINS)}, "prefersBorder": prefers_border}}


RESOURCES: list[dict[str, Any]] = [
    {"uri": DICE_URI, "name": "dice", "title": "Dice", "mimeType": APP_MIME,
     "description": "Shows a dice roll; can roll again and list the history.", "_meta": _view_meta(True)},
    {"uri": PLAYGROUND_URI, "name": "playground", "title": "Host method playground", "mimeType": APP_MIME,
     "description": "Buttons for every MCP Apps host method, with an on-page log of each outcome.",
     "_meta": _view_meta(False)},
    {"uri": README_URI, "name": "readme", "title": "About moka-demo", "mimeType": "text/markdown",
     "description": "The demo server's readme."},
]
_DOCUMENTS = {DICE_URI: "dice.html", PLAYGROUND_URI: "playground.html"}


def resource_text(uri: str) -> str:
    """The text behind one listed resource (KeyError for any other URI)."""
    if uri == README_URI:
        return README
    return documents.render(_DOCUMENTS[uri])


def read_resource(uri: str) -> list[dict[str, Any]] | None:
    """`resources/read` contents for a listed URI, or None when no resource has it."""
    listed = next((item for item in RESOURCES if item["uri"] == uri), None)
    if listed is None:
        return None
    content: dict[str, Any] = {"uri": uri, "mimeType": listed["mimeType"], "text": resource_text(uri)}
    if "_meta" in listed:
        content["_meta"] = listed["_meta"]
    return [content]
