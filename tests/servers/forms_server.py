"""A server whose tool has nested objects, arrays, enums, booleans and defaults (for the Tool runner form)."""

from __future__ import annotations

from typing import Literal

from mcp.server import MCPServer
from pydantic import BaseModel, Field

server = MCPServer("forms-server")


class Traveller(BaseModel):
    """One person on the trip."""

    name: str = Field(description="Full name")
    age: int = Field(ge=0, le=120)


class Options(BaseModel):
    """Booking options."""

    room: Literal["single", "double", "suite"] = "double"
    breakfast: bool = False


@server.tool()
def plan_trip(destination: str, nights: int, travellers: list[Traveller], options: Options,
              budget: float = 1000.0) -> dict[str, object]:
    """Plan a trip; echoes what it got so tests can see the form's output."""
    return {"destination": destination, "nights": nights, "travellers": [t.model_dump() for t in travellers],
            "options": options.model_dump(), "budget": budget}


if __name__ == "__main__":
    server.run()
