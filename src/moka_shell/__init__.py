"""Moka: an Electron-free desktop host for MCP Apps, with a chat for any model.

The names below are the plugin author's API: ``from moka_shell import hookimpl, BaseBackend``.
Every name loads on first use, so ``import moka_shell`` stays cheap (no pluggy, no pydantic, no mcp,
no GUI toolkit until a plugin asks for them): ``moka`` imports this package before its window opens.
"""

# Every public-looking name here is in __all__ (tests/test_exported_members.py): the module's own
# helpers are imported under private names, and there is no `from __future__` import to leak one.
import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:  # pragma: no cover - the same names, eagerly, for type checkers
    from moka_shell.hookspecs import (PluginApp, RegisterBackend, RegisterDisplayMode, RegisterTheme,
                                      RegisterTransport, hookimpl)
    from moka_shell.core.chat.backends import (
        AgentBackend,
        AgentEvent,
        AgentRequest,
        BackendOptions,
        BaseBackend,
        ChatMessage,
        Done,
        ModelTool,
        TextDelta,
        ToolCallDelta,
        ToolCallEnd,
        ToolCallRecord,
        ToolCallStart,
        Usage,
    )
    from moka_shell.core.mcp.transport import Transport
    from moka_shell.core.themes import Mode, ThemeProvider
    from moka_shell.core.views.display import DisplayMode, WireMode
    from moka_shell.errors import AgentError, MokaError, NeedsKeyError, PluginError, ProviderError

from moka_shell.version import __version__

# Public name → the module that defines it (loaded by __getattr__ on first access).
_LAZY: dict[str, str] = {
    **dict.fromkeys(["hookimpl", "PluginApp", "RegisterBackend", "RegisterDisplayMode", "RegisterTheme",
                     "RegisterTransport"], "moka_shell.hookspecs"),
    **dict.fromkeys(
        ["AgentBackend", "AgentEvent", "AgentRequest", "BackendOptions", "BaseBackend", "ChatMessage", "Done",
         "ModelTool", "TextDelta", "ToolCallDelta", "ToolCallEnd", "ToolCallRecord", "ToolCallStart", "Usage"],
        "moka_shell.core.chat.backends"),
    "Transport": "moka_shell.core.mcp.transport",
    "Mode": "moka_shell.core.themes",
    "ThemeProvider": "moka_shell.core.themes",
    "DisplayMode": "moka_shell.core.views.display",
    "WireMode": "moka_shell.core.views.display",
    **dict.fromkeys(["AgentError", "MokaError", "NeedsKeyError", "PluginError", "ProviderError"],
                    "moka_shell.errors"),
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> _typing.Any:
    """Load a public name from its module the first time it is asked for (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'moka_shell' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    """The public names, including the ones not loaded yet."""
    return sorted({*globals(), *_LAZY})
