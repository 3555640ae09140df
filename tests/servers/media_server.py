"""A server whose tools answer with media: an image, an audio clip, an embedded image resource, a text file.

Run it as `python tests/servers/media_server.py` (stdio). The chat-image tests check that each
reaches the model in the provider's own format (or as a line of text that says why not).
"""

from __future__ import annotations

import base64

from mcp.server import MCPServer
from mcp_types import AudioContent, BlobResourceContents, EmbeddedResource, ImageContent, TextContent, ToolAnnotations

# A real 2×2 PNG (red) and a tiny WAV header: small, but what the formats say they are.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP8z8DAwMDAxAAAHwQCAB7dVEMAAAAASUVORK5CYII="
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00"
                       b"\x02\x00\x10\x00data\x00\x00\x00\x00").decode("ascii")
server = MCPServer("media-server", version="0.0.1", log_level="WARNING")
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)  # runs without asking


@server.tool(annotations=READ_ONLY)
def screenshot(label: str = "screen") -> list[TextContent | ImageContent]:
    """Take a 'screenshot': a line of text and a PNG image."""
    return [TextContent(type="text", text=f"screenshot of {label}"),
            ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(annotations=READ_ONLY)
def recording() -> list[TextContent | AudioContent | EmbeddedResource]:
    """A clip: text, an audio block and an embedded image resource (a blob)."""
    return [TextContent(type="text", text="a short clip"),
            AudioContent(type="audio", data=WAV, mime_type="audio/wav"),
            EmbeddedResource(type="resource", resource=BlobResourceContents(
                uri="media://cover.png", mime_type="image/png", blob=PNG))]


if __name__ == "__main__":
    server.run("stdio")
