"""moka-anthropic: Claude models for Moka, through the official anthropic SDK."""

from __future__ import annotations

from moka_shell import hookimpl
from moka_shell.hookspecs import RegisterBackend

from moka_anthropic.backend import AnthropicBackend, AnthropicOptions

__version__ = "0.1.0"
__all__ = ["AnthropicBackend", "AnthropicOptions", "register_agent_backends"]


@hookimpl
def register_agent_backends(register: RegisterBackend) -> None:
    """Register the `anthropic` backend."""
    register(AnthropicBackend())
