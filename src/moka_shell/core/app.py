"""MokaApp: the core's lifecycle. It builds the subsystems, wires their seams, starts and stops them.

Everything stateful lives on one asyncio loop. Front ends (the desktop windows, browser mode,
headless checks) reach it only through ``moka_shell.bridge``; shells give it what it needs from
them as values (``Endpoints``, ``ShellActions``), never by assigning its attributes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from moka_shell.config import ApprovalMode, ConfigFile, MokaConfig, ServerConfig
from moka_shell.core.chat.approval import Approvals
from moka_shell.core.chat.backends import AgentBackend
from moka_shell.core.chat.sampling import ServerSampling
from moka_shell.core.config_watch import ConfigWatch
from moka_shell.core.consent import Consent
from moka_shell.core.instance_lock import InstanceLock
from moka_shell.core.mcp.answers import ScriptedAnswers
from moka_shell.core.mcp.elicitation import Elicitations
from moka_shell.core.mcp.progress import CallTracker
from moka_shell.core.mcp.oauth.store import use_data_dir
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.core.mcp.transport import Transport
from moka_shell.core.server_configs import ServerConfigs
from moka_shell.core.redact import SECRETS, config_secrets, mask_logs
from moka_shell.core.shell import Endpoints, EventShellActions, Mode, ShellActions
from moka_shell.core.themes import Appearance, ThemeProvider
from moka_shell.errors import MokaError, NoConversationsError, StoreDamagedError, StoreError
from moka_shell.inspector import Inspector
from moka_shell.paths import Paths, secure_data_dir
from moka_shell.plugins import PluginHost
from moka_shell.registered import Registered

if TYPE_CHECKING:
    from moka_shell.core.chat.engine import ChatEngine
    from moka_shell.core.chat.store import Store
    from moka_shell.core.views.display import DisplayMode
    from moka_shell.core.views.host import ViewHost
    from moka_shell.core.views.storage import ViewStorage
    from moka_shell.hookspecs import PluginApp

log = logging.getLogger("moka")

# A page's reconnect backs off to 8 s, and a reload takes a moment: while no front end is there for
# less than this, a question (approval, consent, elicitation) is still asked, and shown when it is back.
ASK_GRACE = 30.0
Listener = Callable[[str, Any], None]


class MokaApp:
    """The running application core (create it, then ``await app.start()`` on its loop)."""

    def __init__(self, paths: Paths, *, plugins: PluginHost | None = None, config: MokaConfig | None = None,
                 mode: Mode = "headless", connect_timeout: float | None = None,
                 actions: ShellActions | None = None, handshake_timeout: float | None = None,
                 interactive: bool = True, approve: ApprovalMode | None = None,
                 answers: ScriptedAnswers | None = None, read_ui_ahead: bool = True) -> None:
        self.paths = paths
        use_data_dir(paths.data_dir)  # where OAuth tokens go when there is no OS keyring
        self.mode: Mode = mode
        self.plugins = plugins or PluginHost(plugin_folder=paths.plugin_folder)
        self.config_file: ConfigFile | None = None
        if config is None:
            self.config_file = ConfigFile(paths.config_file)
            config = self.config_file.config
        self.config = config
        SECRETS.watch(lambda: config_secrets(self.config))  # servers' env and headers values are masked everywhere
        mask_logs()
        self.inspector = Inspector(paths.inspector_dir, max_log_bytes=config.inspector.max_log_mb * 2**20,
                                   capacity=config.inspector.ring_events)
        self._listeners: list[Listener] = []
        self._left_at: float | None = None  # when the last front end went (a page's socket dropped)
        self.transports: dict[str, Registered[Transport]] = self.plugins.registry("transports")
        self.backends: dict[str, Registered[AgentBackend]] = self.plugins.registry("backends")
        self.themes: dict[str, Registered[ThemeProvider]] = self.plugins.registry("themes")
        self.display_modes: dict[str, Registered[DisplayMode]] = self.plugins.registry("display_modes")
        self.calls = CallTracker(self.emit)
        # interactive=False (moka chat): nobody will answer a question, so none is asked and none waits.
        can_ask: Callable[[], bool] = lambda: interactive and self._someone_there()
        # A server's question (elicitation) is never left waiting where nobody can answer, nor in a check:
        # there the answers given up front (``answers``, the CLI's --answer…) answer it, or it is refused.
        # Its links open through the view host, made below (the lambda reads it when a link is opened).
        self.elicitations = Elicitations(self.emit, self.calls, self.inspector,
                                         can_ask=lambda: can_ask() and mode != "check",
                                         open_link=lambda url: self.view_host.open_link(url), scripted=answers)
        self.servers = ServerManager(
            self.transports, self.inspector, self._servers_changed, connect_timeout=connect_timeout,
            calls=self.calls, elicitor=self.elicitations,
            on_resource_updated=lambda server, uri: self.emit("resource.updated", {"server": server, "uri": uri}),
            read_ui_ahead=read_ui_ahead)
        self.problems: list[MokaError] = []
        self.store_problem: StoreDamagedError | None = None  # the database is damaged: a read-only copy is open
        self.appearance = Appearance(self.themes, self.config, self.save_config, self._theme_changed)
        self.consent = Consent(self.plugins, self.config, self.emit, self.save_config, mode=mode,
                               someone_listening=can_ask)
        self.approvals = Approvals(self.config, self.emit, self.save_config, can_ask=can_ask, mode=approve)
        self.actions: ShellActions = actions or EventShellActions(self.emit)  # the shell's native side
        self._handshake_timeout = handshake_timeout  # the view host's (view_host), its default when None
        self._endpoints: Endpoints | None = None  # where pages are served, once open() has decided
        # The conversations (start(store=True)): `store` and `chat` say NoConversationsError without them.
        self._store: Store | None = None
        self._chat: ChatEngine | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # the core loop, once started (plugins schedule on it)
        self.instance_lock: InstanceLock | None = None  # held while the store is open (start(store=True))
        self.config_watch: ConfigWatch | None = None
        if self.config_file is not None:
            self.config_watch = ConfigWatch(self.config_file, self.servers, self.emit,
                                            lambda: self._theme_changed(self.appearance.current()))
        # Every edit of a server's entry (the UI's add, edit, remove, switches) goes through here.
        self.server_configs = ServerConfigs(self.config, self.save_config, in_use=lambda n: n in self.servers.connections)

    @property
    def store(self) -> Store:
        """The conversation store (``start(store=True)``); NoConversationsError in a run that keeps none."""
        if self._store is None:
            raise NoConversationsError()
        return self._store

    @property
    def chat(self) -> ChatEngine:
        """The chat engine (``start(store=True)``); NoConversationsError in a run that keeps none."""
        if self._chat is None:
            raise NoConversationsError()
        return self._chat

    @property
    def keeps_conversations(self) -> bool:
        """Was this run started with its store (``moka``, ``moka serve``, ``moka chat``)?"""
        return self._chat is not None

    @functools.cached_property
    def view_host(self) -> ViewHost:
        """The views' host, made when first used: `moka tools` and `moka call` never use it, and
        start faster without its modules (docs/performance.md §19)."""
        from moka_shell.core.views.host import HANDSHAKE_TIMEOUT, ViewHost

        host = ViewHost(
            servers=self.servers, inspector=self.inspector, emit=self.emit, display_modes=self.display_modes,
            theme=self.appearance.current, host_context_hook=self._host_context_extras, consent=self.consent.ask,
            actions=self.actions, mode=self.mode,
            handshake_timeout=HANDSHAKE_TIMEOUT if self._handshake_timeout is None else self._handshake_timeout)
        if self._endpoints is not None:  # open() has run: wire it as open() would have
            self._attach_views(host, self._endpoints)
        return host

    def _views_made(self) -> bool:
        return "view_host" in self.__dict__  # functools.cached_property keeps it there once made

    @property
    def endpoints(self) -> Endpoints:
        """Where the UI and the sandbox are served (the view host's copy is the one)."""
        return self.view_host.endpoints if self._views_made() else self._endpoints or Endpoints()

    @property
    def for_plugins(self) -> PluginApp:
        """This app as the lifecycle hooks give it to plugins (mypy holds MokaApp to that promise)."""
        return self

    # ---- events ------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every pushed UI event; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._unsubscribe(listener)

    def _unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
            if not self._listeners:
                self._left_at = time.monotonic()

    def _someone_there(self) -> bool:
        """Is a front end connected, or was one a moment ago (a dropped socket, a reload: it comes back)?

        A question asked in between waits, and the page shows it when it is back (``*.pending``).
        """
        return bool(self._listeners) or (self._left_at is not None and time.monotonic() - self._left_at < ASK_GRACE)

    def emit(self, event: str, data: Any) -> None:
        """Push an event to every front end."""
        for listener in list(self._listeners):
            try:
                listener(event, data)
            except Exception:  # one broken front end must not stop the others
                log.exception("event listener failed for %s", event)

    def _servers_changed(self) -> None:
        self.emit("servers.changed", self.servers.infos())

    def _theme_changed(self, theme: dict[str, Any]) -> None:
        self.emit("theme.changed", theme)
        if self._views_made():  # no view host yet: no view to tell
            self.view_host.theme_changed()

    def _plugins_blocked(self, found: dict[str, str]) -> None:
        # In the instance file, so `moka plugins` (another process) can name what blocked in this one.
        if self.instance_lock is not None and found:
            blocked = {**self.instance_lock.info.get("blockedPlugins", {}), **found}
            self.instance_lock.describe(blockedPlugins=blocked)

    async def _host_context_extras(self, server: str, tool: str, context: dict[str, Any]) -> list[Any]:
        return await self.plugins.call_each_async("moka_host_context", timeout=self.plugins.decision_timeout,
                                                  server=server, tool=tool, context=context)

    # ---- lifecycle ---------------------------------------------------------------------------

    async def start(self, *, servers: list[str] | None = None, store: bool = True,
                    endpoints: Endpoints | None = None) -> None:
        """Load servers and start connecting (only ``servers`` when given).

        ``endpoints`` are where the UI and the sandbox are served (the web server's); without
        them views can be created and fed, but no page can load them.
        """
        self.open(servers=servers, store=store, endpoints=endpoints)
        await self.start_servers(servers)

    def open(self, *, servers: list[str] | None = None, store: bool = True, endpoints: Endpoints | None = None) -> None:
        """Everything but the servers' connections: from here the page can be answered.

        The servers to come are listed as connecting (``ServerManager.expect``) until
        ``start_servers`` makes their connections, which imports the MCP SDK; the desktop answers
        its page in between and imports the SDK on a worker thread (docs/performance.md §13).
        """
        secure_data_dir(self.paths.data_dir)  # what an older Moka left group- and world-readable (G10)
        if store:
            self._open_conversations()
        self._attach(endpoints or Endpoints())
        self.problems = [self.store_problem] if self.store_problem else []
        self.servers.expect(self._wanted(servers))
        self.loop = asyncio.get_running_loop()

    async def launch_servers_early(self, servers: list[str] | None = None) -> None:
        """Start the stdio servers' processes now, so they start while the MCP SDK is imported (§19)."""
        await self.servers.launch_early(self._wanted(servers))

    async def start_servers(self, servers: list[str] | None = None) -> None:
        """Make the servers' connections and start them, then the config watch and the plugins' start."""
        await self.launch_servers_early(servers)  # the connections, made next, import the SDK
        load_problems = self.servers.load(self._wanted(servers))
        self.problems = [*load_problems, *self.problems]
        self.servers.start_all()
        self._servers_changed()  # a page answered before this saw them as connecting
        if load_problems:
            self.emit("app.problems", self.all_problems())
        if servers is None and self.config_watch is not None:
            self.config_watch.start()  # a run limited to some servers (moka check) ignores the rest
        # On a worker thread with a deadline: a plugin that blocks here is named and skipped.
        await self.plugins.call_each_async("moka_startup", app=self.for_plugins)

    def _wanted(self, servers: list[str] | None) -> dict[str, ServerConfig]:
        wanted = self.config.mcp_servers
        return wanted if servers is None else {n: c for n, c in wanted.items() if n in servers}

    def all_problems(self) -> list[str]:
        """Every start-up problem the page shows: servers, the store, plugins, the Inspector's log, the config."""
        return ([str(e) for e in self.problems] + [str(e) for e in self.plugins.broken()]
                + ([self.inspector.problem] if self.inspector.problem else [])
                + ([unsaved] if self.config_watch and (unsaved := self.config_watch.problem) else []))

    def _open_conversations(self) -> None:
        """Lock the data dir, open the store (a read-only copy of a damaged one) and make the chat."""
        # One writer per data dir: a second instance is told who holds it (InstanceRunningError).
        self.instance_lock = InstanceLock(self.paths.data_dir)
        self.instance_lock.acquire()
        self._plugins_blocked({i.name: i.error or "" for i in self.plugins.infos.values() if i.blocked})
        self.plugins.on_block = lambda name, why: self._plugins_blocked({name: why})
        # Imported here: only runs that keep conversations chat, and `moka tools`/`call`/`check` start
        # faster without the chat engine and its store (docs/performance.md §19).
        from moka_shell.core.chat.engine import ChatEngine
        from moka_shell.core.chat.store import Store

        try:
            store = Store(self.paths.database)
        except StoreDamagedError as exc:
            # Say so, keep the file, and show what can still be read from a copy (read-only).
            store = Store.damaged_copy(self.paths.database)
            self.store_problem = StoreDamagedError(
                f"{exc.message}; showing a read-only copy ({store.path.name}) of what could be read: "
                f"{store.salvage.summary() if store.salvage else 'all of it'}; new messages are not saved",
                hint=exc.hint)
        self._store = store
        self._chat = ChatEngine(store=store, servers=self.servers, views=self.view_host, backends=self.backends,
                                config=self.config, emit=self.emit, inspector=self.inspector, approvals=self.approvals)

    def serve_at(self, endpoints: Endpoints) -> None:
        """Pages are served at ``endpoints`` from now on (a core opened without its web server, then given one)."""
        self._attach(endpoints)

    def _attach(self, endpoints: Endpoints) -> None:
        """The one wiring step after construction: what the start decided (where pages are served,
        whether conversations are kept) goes to the two subsystems that need it (the view host
        now if it exists, else when it is made)."""
        self._endpoints = endpoints
        if self._views_made():
            self._attach_views(self.view_host, endpoints)
        if self._chat is not None:  # servers may ask the model only where a chat can answer
            self.servers.offer_sampling(ServerSampling(chat=self._chat, consent=self.consent.ask,
                                                       approvals=self.approvals, config=self.config,
                                                       inspector=self.inspector))

    def _attach_views(self, host: ViewHost, endpoints: Endpoints) -> None:
        from moka_shell.core.views.ports import NoChat

        host.attach(endpoints=endpoints, chat=self._chat or NoChat(),
                    records=self._store.view if self._store else None,  # parked views read back here
                    storage=self._view_storage())

    def _view_storage(self) -> ViewStorage:
        """Views' storage in the store's database; in memory without a store, on a damaged file's
        read-only copy, or when the disk is full at start."""
        from moka_shell.core.views.storage import ViewStorage

        if self._store is not None and not self._store.read_only:
            try:
                return ViewStorage(self._store.db)
            except StoreError as exc:
                log.warning("%s", exc)
        return ViewStorage()

    async def stop(self) -> None:
        """Tear down views, stop servers, flush the inspector."""
        await self.plugins.call_each_async("moka_shutdown", app=self.for_plugins)
        if self.config_watch is not None:
            await self.config_watch.stop()
        try:
            if self._views_made():
                await asyncio.wait_for(self.view_host.close_all(), timeout=5)
        except asyncio.TimeoutError:
            pass
        await self.servers.stop_all()
        if self._store is not None:
            self._store.close()
        if self.instance_lock is not None:
            self.instance_lock.release()
        self.inspector.close()

    def save_config(self) -> None:
        """Persist config changes made through the UI (merged with what others wrote; one that can't be
        saved now stays in use and is tried again: core/config_watch.py)."""
        if self.config_watch is not None:
            self.config_watch.save()
