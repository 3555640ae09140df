"""A shell for tests (``RecordingShell``) and the endpoints of a core tested without a web server."""

from __future__ import annotations

from typing import Any

from moka_shell.core.shell import Endpoints

# Endpoints for a core that is tested without a web server: views get proxy URLs, no page loads them.
FAKE_ENDPOINTS = Endpoints(host_origin="http://127.0.0.1:1", sandbox_origin="http://127.0.0.1:2", token="test")


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
