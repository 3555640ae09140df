"""A small MCP server for fault tests: a slow tool, a tool that kills the process, its pid."""

from __future__ import annotations

import os
import sys
import time

from typing import Annotated

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent, ToolAnnotations

server = MCPServer("fault-server")


@server.tool()
def pid() -> int:
    """This server's process id."""
    return os.getpid()


@server.tool()
def slow(seconds: float = 5.0) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def die() -> str:
    """Exit at once, mid-call."""
    os._exit(3)


@server.tool(meta={"ui": {"resourceUri": "ui://fault/view"}}, annotations=ToolAnnotations(read_only_hint=True))
def with_view() -> str:
    """A tool with a trivial view, so tests can act as that view."""
    return "view tool"


@server.resource("ui://fault/view", mime_type="text/html;profile=mcp-app")
def fault_view() -> str:
    """The trivial view."""
    return "<!doctype html><html><head><title>fault view</title></head><body>fault</body></html>"


def _sample(question: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=50)


@server.tool()
def ask_model(question: str, answer: Annotated[CreateMessageResult, Resolve(_sample)]) -> str:
    """Ask the host's model (sampling/createMessage) and return what it said."""
    content = answer.content
    return f"the model said: {getattr(content, 'text', content)}"


def _tuned(question: str) -> Sample:
    return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=question))], max_tokens=33,
                  temperature=0.25, stop_sequences=["STOP"])


@server.tool()
def ask_model_tuned(question: str, answer: Annotated[CreateMessageResult, Resolve(_tuned)]) -> str:
    """Ask the model with maxTokens 33, temperature 0.25 and the stop sequence "STOP"."""
    return f"{getattr(answer.content, 'text', answer.content)}|{answer.stop_reason}"


@server.tool()
async def touch_view(ctx: Context) -> str:
    """Say that ui://fault/view changed (to subscriptions/listen followers)."""
    await ctx.notify_resource_updated("ui://fault/view")
    return "touched"


@server.tool()
def echo(text: str = "hi") -> str:
    """Say it back."""
    return text


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        print("fault-server starting", file=sys.stderr)
        server.run()
