"""moka-anthropic: Claude models for Moka, through the official anthropic SDK."""

from __future__ import annotations

from typing import Any

from moka_shell.hookspecs import hookimpl

from moka_anthropic.backend import AnthropicBackend, AnthropicOptions

__version__ = "0.1.0"
__all__ = ["AnthropicBackend", "AnthropicOptions", "register_agent_backends"]


@hookimpl
def register_agent_backends(register: Any) -> None:
    """Register the `anthropic` backend."""
    register(AnthropicBackend())
