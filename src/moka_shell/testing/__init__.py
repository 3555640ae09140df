"""Fakes and helpers for testing Moka and Moka plugins."""

from typing import Any

from moka_shell.core.shell import Endpoints
from moka_shell.testing.memory import InMemoryTransport, TransportPlugin

# Endpoints for a core that is tested without a web server: views get proxy URLs, no page loads them.
FAKE_ENDPOINTS = Endpoints(host_origin="http://127.0.0.1:1", sandbox_origin="http://127.0.0.1:2", token="test")

__all__ = ["FAKE_ENDPOINTS", "InMemoryTransport", "RecordingShell", "TransportPlugin"]


class RecordingShell:
    """A shell for tests: records the links and downloads the core hands it (``ShellActions``)."""

    def __init__(self) -> None:
        self.links: list[str] = []
        self.downloads: list[dict[str, Any]] = []

    def open_link(self, url: str) -> None:
        """Record the link instead of opening a browser."""
        self.links.append(url)

    async def save_download(self, file: dict[str, Any]) -> None:
        """Record the file instead of asking where to save it."""
        self.downloads.append(file)
