"""Every hook a Moka plugin can implement.

Plugins are found through the ``moka`` entry-point group (the pluggy project name is
also ``moka``). Built-in behaviour is registered through these same hooks from
``moka_shell.builtins``. Hooks are synchronous and cheap; async work belongs on the
objects a plugin registers. Every hook call runs on a worker thread with a deadline
(5 s; 2 s for the decision hooks): a plugin that does not return in time is named in
``moka plugins`` and not called again, and Moka goes on without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover - imports for annotations only; `import moka_shell` stays light
    from moka_shell.core.app import MokaApp
    from moka_shell.core.chat.backends import AgentBackend
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
def moka_startup(app: MokaApp) -> None:
    """Called once after the servers have started connecting, on a worker thread (5 s deadline).

    To start work on the core loop, use ``asyncio.run_coroutine_threadsafe(coro, app.loop)``.

    :param app: the running application
    """


@hookspec
def moka_shutdown(app: MokaApp) -> None:
    """Called once before Moka stops, on a worker thread (5 s deadline).

    :param app: the running application
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
