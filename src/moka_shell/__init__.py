"""Moka: an Electron-free desktop host for MCP Apps, with a chat for any model."""

from __future__ import annotations

from moka_shell.hookspecs import hookimpl

__version__ = "0.1.0"
__all__ = ["__version__", "hookimpl"]
