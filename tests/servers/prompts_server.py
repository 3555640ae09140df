"""A server with one prompt (an argument with completions), one resource and one resource template.

Run it as `python tests/servers/prompts_server.py` (stdio). The chat's slash-prompt and @-resource
tests insert its prompt, attach its resources and check what reaches the model.
"""

from __future__ import annotations

import anyio
from mcp.server import MCPServer
from mcp_types import Completion, PromptReference

CITIES = ["Amsterdam", "Antwerp", "Athens", "Berlin", "Bern"]
server = MCPServer("prompts-server", version="0.0.1", log_level="WARNING")


@server.prompt(description="Plan a trip to a city")
def plan_trip(city: str) -> str:
    """The prompt text, with the city filled in."""
    return f"Plan a three-day trip to {city}, with one museum a day."


@server.resource("notes://today", mime_type="text/plain", description="Today's notes")
def today() -> str:
    """A plain text resource."""
    return "Buy oat milk. Call Ana at 5."


@server.resource("notes://day/{day}", mime_type="text/plain", description="Notes of one day")
def day_notes(day: str) -> str:
    """A resource template: one note per day."""
    return f"Notes for {day}: nothing planned."


@server.completion()
async def complete(ref: object, argument: object, context: object) -> Completion | None:
    """Cities for plan_trip's argument, days for the template's variable."""
    value = str(getattr(argument, "value", "")).lower()
    if isinstance(ref, PromptReference):
        if len(value) < 2:
            # A broad query answers last, as a server searching a real index does: a typeahead
            # must not let this late answer replace the one for what the person typed since.
            await anyio.sleep(0.6)
        return Completion(values=[c for c in CITIES if c.lower().startswith(value)])
    return Completion(values=[d for d in ("monday", "tuesday", "wednesday") if d.startswith(value)])


if __name__ == "__main__":
    server.run("stdio")
