"""Every hook a Moka plugin can implement.

Plugins are found through the ``moka`` entry-point group (the pluggy project name is
also ``moka``). Built-in behaviour is registered through these same hooks from
``moka_shell.builtins``. Hooks are synchronous and cheap; async work belongs on the
objects a plugin registers. Every hook call runs on a worker thread with a deadline
(5 s; 2 s for the decision hooks): a plugin that does not return in time is named in
``moka plugins`` and not called again, and Moka goes on without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

import pluggy

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only; `import moka_shell` stays light
    from moka_shell.core.chat.backends import AgentBackend
    from moka_shell.core.mcp.catalog import ToolEntry
    from moka_shell.core.mcp.transport import Transport
    from moka_shell.core.themes import ThemeProvider
    from moka_shell.core.views.display import DisplayMode

hookspec = pluggy.HookspecMarker("moka")
hookimpl = pluggy.HookimplMarker("moka")

# The callback each registration hook receives; it records one object of the hook's contract.
Register = Callable[[Any], None]
RegisterTransport = Callable[["Transport"], None]
RegisterBackend = Callable[["AgentBackend"], None]
RegisterTheme = Callable[["ThemeProvider"], None]
RegisterDisplayMode = Callable[["DisplayMode"], None]



class PluginServer(Protocol):
    """One configured MCP server, as a plugin sees it."""

    @property
    def name(self) -> str:
        """The server's name in the config."""
        ...

    @property
    def status(self) -> str:
        """``connecting``, ``ready``, ``failed``, ``stopped``, ``disabled`` or ``signin``."""
        ...

    @property
    def tools(self) -> Mapping[str, ToolEntry]:
        """The server's tools by name (empty until it is ready)."""
        ...

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        """Call a tool of the ready server; the wire ``CallToolResult``, size-capped (on the core loop)."""
        ...


class PluginServers(Protocol):
    """Every configured MCP server."""

    @property
    def connections(self) -> Mapping[str, PluginServer]:
        """Each server by name."""
        ...

    def get(self, name: str) -> PluginServer:
        """The server named ``name`` (``UnknownServerError`` if there is none)."""
        ...


class PluginApp(Protocol):
    """What ``moka_startup`` and ``moka_shutdown`` give a plugin: the core loop, the servers, the events.

    The running Moka has more, but this is the part a plugin may rely on from one version to the next.
    """

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The core loop (set before ``moka_startup`` runs): start work with ``run_coroutine_threadsafe``."""
        ...

    @property
    def servers(self) -> PluginServers:
        """The configured MCP servers."""
        ...

    def subscribe(self, listener: Callable[[str, Any], None]) -> Callable[[], None]:
        """Call ``listener(event, data)`` for every event pushed to the UI (on the core loop); returns how to stop."""
        ...


# ---- registration hooks ---------------------------------------------------------------------


@hookspec
def register_transports(register: RegisterTransport) -> None:
    """Register MCP transports.

    Call ``register(transport)`` with an object satisfying
    ``moka_shell.core.mcp.transport.Transport``: ``transport_id`` (the value a server config
    names in ``"type"``, e.g. ``"stdio"`` or ``"http"``) and ``open(config, errlog)``, which
    returns an async context manager yielding the SDK's ``(read_stream, write_stream)`` pair,
    as ``mcp.client.stdio.stdio_client(...)`` does. A child process's stderr goes to ``errlog``.

    :param register: the callback that records one transport
    """


@hookspec
def register_agent_backends(register: RegisterBackend) -> None:
    """Register model backends.

    Call ``register(backend)`` with an object satisfying
    ``moka_shell.core.chat.backends.AgentBackend`` (``backend_id``, ``Options``, ``stream``).

    :param register: the callback that records one backend
    """


@hookspec
def register_themes(register: RegisterTheme) -> None:
    """Register themes.

    Call ``register(theme)`` with an object satisfying
    ``moka_shell.core.themes.ThemeProvider``: ``theme_id``, ``label``, and
    ``variables(mode)`` giving values for the standard MCP Apps style variables
    (``mode`` is ``"light"`` or ``"dark"``).

    :param register: the callback that records one theme
    """


@hookspec
def register_display_modes(register: RegisterDisplayMode) -> None:
    """Register display modes.

    Call ``register(mode)`` with an object satisfying
    ``moka_shell.core.views.display.DisplayMode``: ``mode_id``, ``wire_mode`` (the MCP Apps
    ``displayMode`` the view is told: inline, fullscreen or pip), ``label``,
    ``fixed_size`` and ``opens_window``.

    :param register: the callback that records one display mode
    """


# ---- lifecycle hooks ------------------------------------------------------------------------


@hookspec
def moka_startup(app: PluginApp) -> None:
    """Called once after the servers have started connecting, on a worker thread (5 s deadline).

    To start work on the core loop, use ``asyncio.run_coroutine_threadsafe(coro, app.loop)``.

    :param app: the running application (what a plugin may use of it: ``PluginApp``)
    """


@hookspec
def moka_shutdown(app: PluginApp) -> None:
    """Called once before Moka stops, on a worker thread (5 s deadline).

    :param app: the running application (what a plugin may use of it: ``PluginApp``)
    """


# ---- decision hooks -------------------------------------------------------------------------


# firstresult documents the contract; PluginHost.first_result implements it, one plugin at a time.
@hookspec(firstresult=True)
def moka_consent(action: str, server: str, detail: dict[str, Any]) -> bool | None:
    """Decide whether a view may perform an action, before the person is asked.

    ``action`` is one of ``open_link``, ``message``, ``download``, ``sampling``.
    Return True to allow, False to deny, or None to leave it to the settings.

    :param action: what the view asks for
    :param server: the server that owns the view
    :param detail: the request's parameters (e.g. ``{"url": ...}``)
    :returns: True, False or None
    """


@hookspec
def moka_host_context(server: str, tool: str, context: dict[str, Any]) -> dict[str, Any] | None:
    """Contribute extra top-level keys to a view's ``hostContext``.

    Asked once per view, when it is created; the answer is kept for every later context the
    view gets. Returned keys are merged in; ``None`` values are dropped, so the view never sees a null.

    :param server: the server that owns the view
    :param tool: the tool whose call created the view
    :param context: the host context built so far (read only)
    :returns: a dict of keys to add, or None
    """
