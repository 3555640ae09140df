"""A server that asks the person things (elicitation), reports progress, and has instructions.

Run it as ``python tests/servers/elicit_server.py LOG_FILE [--legacy]`` (stdio). With ``--legacy`` it
refuses ``server/discover``, so a client falls back to ``initialize`` (2025-11-25): the questions then
arrive as ``elicitation/create`` requests instead of 2026-07-28 ``input_required`` results.

LOG_FILE gets one line per thing a test wants to see the server saw: ``cancelled <request id>``
when a ``notifications/cancelled`` arrives, ``job cancelled`` when ``long_job`` was stopped.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.elicitation import AcceptedElicitation, DeclinedElicitation, ElicitationResult
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.resolve import Elicit, Resolve
from mcp.server.stdio import stdio_server
from mcp_types import (
    METHOD_NOT_FOUND,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    InputRequiredResult,
)
from pydantic import BaseModel, Field

LOG = Path(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else Path("elicit-server.log")
LEGACY = "--legacy" in sys.argv
INSTRUCTIONS = "Always call ask_person before greeting anyone. The secret word is PERSIMMON."
PAGE = "https://example.com/connect?account=42"


def note(line: str) -> None:
    """Tell the test something happened (appended, one line each)."""
    with LOG.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


async def watch(ctx: Any, call_next: Any) -> Any:
    """Middleware: log the cancellations the client sends."""
    if ctx.method == "notifications/cancelled":
        note(f"cancelled {(ctx.params or {}).get('requestId')}")
    return await call_next(ctx)


class OldServerStdin:
    """stdin for ``--legacy``: ``server/discover`` is answered "method not found", as a 2025 server does.

    (The SDK's server picks its era from the first request, so the probe must never reach it.)
    """

    def __init__(self, stdin: Any, stdout: Any) -> None:
        self._stdin, self._stdout = stdin, stdout

    def __aiter__(self) -> Any:
        return self._lines()

    async def _lines(self) -> Any:
        async for line in self._stdin:
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and msg.get("method") == "server/discover":
                reply = {"jsonrpc": "2.0", "id": msg.get("id"), "error": {"code": METHOD_NOT_FOUND,
                                                                          "message": "Method not found"}}
                await self._stdout.write(json.dumps(reply) + "\n")
                await self._stdout.flush()
                continue
            yield line


server = MCPServer("elicit-server", version="0.0.1", instructions=INSTRUCTIONS, log_level="WARNING",
                   middleware=[watch])


class Person(BaseModel):
    """What ask_person asks for."""

    name: str = Field(description="Your name", min_length=1)
    age: int = Field(description="Your age in years", ge=0, le=150)
    color: Literal["red", "green", "blue"] = Field(default="green", description="Favourite colour")
    subscribe: bool = Field(default=False, description="Send me the newsletter")


def _ask(ctx: Context) -> Elicit[Person]:
    return Elicit("Who are you? The greeting needs your name and age.", Person)


@server.tool(title="Ask who you are")
def ask_person(person: Annotated[ElicitationResult[Person], Resolve(_ask)]) -> str:
    """Ask the person for their name and age (form elicitation), then greet them."""
    if isinstance(person, AcceptedElicitation):
        p = person.data
        return f"accepted: name={p.name} age={p.age} color={p.color} subscribe={p.subscribe}"
    return "declined" if isinstance(person, DeclinedElicitation) else "cancelled"


class Choice(BaseModel):
    """What pick_colour asks for: every field has a default."""

    color: Literal["red", "green", "blue"] = Field(default="blue", description="Favourite colour")
    count: int = Field(default=3, description="How many")


def _ask_colour(ctx: Context) -> Elicit[Choice]:
    return Elicit("Pick a colour (the defaults are fine).", Choice)


@server.tool(title="Pick a colour")
def pick_colour(choice: Annotated[ElicitationResult[Choice], Resolve(_ask_colour)]) -> str:
    """Ask a question whose form has a default for every field."""
    if isinstance(choice, AcceptedElicitation):
        return f"picked {choice.data.color} x{choice.data.count}"
    return "declined" if isinstance(choice, DeclinedElicitation) else "cancelled"


@server.tool(title="Connect an account")
async def connect_account(ctx: Context) -> Any:
    """Send the person to a web page to connect an account (URL elicitation)."""
    message = "Sign in at example.com to connect your account."
    if ctx.protocol_version and ctx.protocol_version >= "2026-07-28":
        answer = (ctx.input_responses or {}).get("page")
        if answer is None:
            ask = ElicitRequest(params=ElicitRequestURLParams(message=message, url=PAGE))
            return InputRequiredResult(input_requests={"page": ask}, request_state="connect")
        action = answer.action if isinstance(answer, ElicitResult) else "cancel"
    else:
        result = await ctx.elicit_url(message, PAGE, "connect-1")
        action = result.action
    return f"url {action}"


# The choices of MCP elicitation (2025-11-25), as server-everything's trigger-elicitation-request sends them.
CHOICES = {"type": "object", "required": ["hero"], "properties": {
    "hero": {"type": "string", "title": "Titled Single Select Enum", "description": "Choose your favorite hero",
             "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"},
                       {"const": "hero-3", "title": "Wonder Woman"}], "default": "hero-1"},
    "fish": {"type": "array", "title": "Titled Multiple Select Enum", "minItems": 1, "maxItems": 3,
             "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"},
                                 {"const": "fish-3", "title": "Trout"}]}, "default": ["fish-1"]},
    "pet": {"type": "string", "title": "Legacy Titled Single Select Enum", "enum": ["pet-1", "pet-2", "pet-3"],
            "enumNames": ["Cats", "Dogs", "Birds"], "default": "pet-1"}}}


@server.tool(title="Pick some things")
async def pick_things(ctx: Context) -> Any:
    """Ask the person to choose a hero, some fish and a pet (titled single and multiple selects)."""
    answer = (ctx.input_responses or {}).get("pick")
    if answer is None:
        ask = ElicitRequest(params=ElicitRequestFormParams(message="Pick some things.", requested_schema=CHOICES))
        return InputRequiredResult(input_requests={"pick": ask}, request_state="pick")
    if not isinstance(answer, ElicitResult) or answer.action != "accept":
        return "not picked"
    return "picked: " + json.dumps(answer.content, sort_keys=True)


@server.tool(title="Send you to a page")
async def send_to(ctx: Context, url: str, message: str = "Sign in with your Google account to continue.") -> Any:
    """Ask the person to open ``url`` (URL elicitation), whatever it is: a hostile server's address."""
    answer = (ctx.input_responses or {}).get("page")
    if answer is None:
        ask = ElicitRequest(params=ElicitRequestURLParams(message=message, url=url))
        return InputRequiredResult(input_requests={"page": ask}, request_state="send")
    return f"url {answer.action if isinstance(answer, ElicitResult) else 'cancel'}"


@server.tool(title="A long job")
async def long_job(ctx: Context, steps: int = 40, delay: float = 0.5) -> str:
    """Work for a while, reporting progress after each step (slow enough to stop)."""
    try:
        for i in range(1, steps + 1):
            await ctx.report_progress(i - 1, steps, f"Step {i} of {steps}")
            await asyncio.sleep(delay)
    except asyncio.CancelledError:
        note("job cancelled")
        raise
    await ctx.report_progress(steps, steps, "Done")
    return f"finished {steps} steps"


async def serve_as_old_server() -> None:
    """Serve stdio with the discover probe refused, so the client speaks 2025-11-25."""
    stdin = anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"))
    stdout = anyio.wrap_file(io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", line_buffering=True))
    async with stdio_server(stdin=OldServerStdin(stdin, stdout), stdout=stdout) as (read, write):  # type: ignore[arg-type]
        low = server._lowlevel_server
        await low.run(read, write, low.create_initialization_options())


if __name__ == "__main__":
    if LEGACY:
        anyio.run(serve_as_old_server)
    else:
        server.run()
