"""moka-demo on the `mcp` SDK's MCPServer: the `--http` mode and in-process tests.

It lists the same wire definitions as the stdio mode (`catalog.py`) and runs the same handlers
(`tools.py`); the SDK checks the arguments against each handler's signature.
"""

from __future__ import annotations

from typing import Any

from mcp.server import MCPServer
from mcp.server.apps import Apps, ResourceCsp
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, Tool

from moka_shell.demo import catalog, dice, tools


class DemoServer(MCPServer):
    """MCPServer whose tool list is the catalog's, so both modes list the very same schemas."""

    async def list_tools(self) -> list[Tool]:
        """The catalog's tools (the SDK would derive schemas from the handlers' signatures)."""
        return [Tool.model_validate(tool) for tool in catalog.TOOLS]


def _handler(name: str, log: dice.RollLog) -> Any:
    def run(arguments: dict[str, Any]) -> CallToolResult:
        try:
            return CallToolResult.model_validate(tools.call(name, arguments, log))
        except dice.DiceError as exc:
            raise ToolError(str(exc)) from exc

    if "sides" in catalog.TOOLS_BY_NAME[name]["inputSchema"]["properties"]:
        def with_dice(sides: int = 6, count: int = 1) -> CallToolResult:
            return run({"sides": sides, "count": count})
        handler: Any = with_dice
    else:
        def without_arguments() -> CallToolResult:
            return run({})
        handler = without_arguments
    handler.__name__ = name  # the SDK names its argument model after it ("roll_diceArguments")
    return handler


def _apps() -> Apps:
    # Registered only so that the server advertises the Apps extension as the SDK does.
    apps = Apps()
    for resource in catalog.RESOURCES:
        if resource["mimeType"] == catalog.APP_MIME:
            ui = resource["_meta"]["ui"]
            apps.add_html_resource(resource["uri"], catalog.resource_text(resource["uri"]), name=resource["name"],
                                   title=resource["title"], description=resource["description"],
                                   csp=ResourceCsp(connect_domains=ui["csp"]["connectDomains"]),
                                   prefers_border=ui["prefersBorder"])
    return apps


def build_server() -> MCPServer:
    """A fresh moka-demo server on the SDK, with its own roll history."""
    log = dice.RollLog()
    server = DemoServer(catalog.NAME, title=catalog.TITLE, description=catalog.DESCRIPTION,
                        version=catalog.VERSION, extensions=[_apps()], log_level="WARNING")
    for tool in catalog.TOOLS:
        server.add_tool(_handler(tool["name"], log), name=tool["name"], title=tool["title"],
                        description=tool["description"], meta=tool["_meta"], structured_output=False)
    readme = next(item for item in catalog.RESOURCES if item["uri"] == catalog.README_URI)

    @server.resource(catalog.README_URI, name=readme["name"], title=readme["title"],
                     description=readme["description"], mime_type=readme["mimeType"])
    def read_readme() -> str:
        return catalog.README

    return server
