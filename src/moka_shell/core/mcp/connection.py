"""One MCP server connection, supervised: connect deadline, reconnect with backoff, status.

Each connection runs in its own task so that a crashing transport (which cancels the
body of ``async with Client``) never reaches the chat or a view. See the fault table
in ``shared/docs/mcp-python-sdk.md``. The connection is split by concern:

- here: the lifecycle (supervisor, one connection attempt, stderr, status and ``info()``);
- ``requests.py`` (mixin ServerRequests): tool calls, prompts, resources, completions;
- ``session_events.py`` (mixin SessionEvents): what the server sends unasked (list changes, logs, sampling);
- ``server_settings.py`` (mixin ServerSettings): the log level and the roots the person chose;
- ``subscriptions.py`` (mixin ResourceSubscriptions): resources followed, and their updates;
- ``backoff.py``: when to retry; ``listing.py``: paginated lists; ``ui_resources.py``: the ui:// cache.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import IO, Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import advertise

from moka_shell.version import __version__
from moka_shell.config import ServerConfig
from moka_shell.core.mcp.backoff import Backoff
from moka_shell.core.mcp.catalog import APP_MIME, ToolEntry, UiResource, safe_icons
from moka_shell.core.mcp.coalesce import Coalesced
from moka_shell.core.mcp.elicitation import Elicitor, sdk_callback
from moka_shell.core.mcp.listing import has_capability, read_listing
from moka_shell.core.mcp.logging_transport import LoggingTransport
from moka_shell.core.mcp.oauth.provider import auth_state
from moka_shell.core.mcp.progress import CallTracker
from moka_shell.core.mcp.requests import ServerRequests
from moka_shell.core.mcp.sdk import describe_exception, dump, quiet_sdk_logs
from moka_shell.core.mcp.server_settings import ServerSettings
from moka_shell.core.mcp.session_events import LOG_INFO_LINES, SessionEvents
from moka_shell.core.mcp.stderr import INFO_LINES, LineRelay, StderrTail, pump
from moka_shell.core.mcp.stdio_client import EXIT_PREFIX
from moka_shell.core.mcp.subscriptions import ResourceSubscriptions
from moka_shell.core.mcp.transport import Transport
from moka_shell.core.mcp.ui_resources import UiCache
from moka_shell.errors import MokaError, SignInRequiredError
from moka_shell.inspector import Inspector

Status = Literal["connecting", "ready", "failed", "stopped", "disabled", "signin"]
UI_EXTENSION = advertise("io.modelcontextprotocol/ui", {"mimeTypes": [APP_MIME]})
DEFAULT_CONNECT_TIMEOUT = 20.0
CALL_TIMEOUT = 300.0
LIST_CHANGED_DEBOUNCE = 0.25  # a burst of list_changed notifications within this makes one refresh
INSTRUCTIONS_SHOWN = 4000  # characters of the server's instructions on its card
EXIT_REPORT_WAIT = 1.0  # after a stdio server's stderr closed, for its exit status to arrive
log = logging.getLogger("moka.servers")
quiet_sdk_logs()


class ServerConnection(ServerRequests, SessionEvents, ServerSettings, ResourceSubscriptions):
    """A supervised connection to one MCP server."""

    def __init__(self, name: str, config: ServerConfig, transport: Transport, inspector: Inspector,
                 on_change: Callable[[ServerConnection], None], *, connect_timeout: float | None = None) -> None:
        self.name = name
        self.config = config
        self.transport = transport
        self.inspector = inspector
        self.on_change = on_change
        self.connect_timeout = connect_timeout or config.timeout or DEFAULT_CONNECT_TIMEOUT
        self.status: Status = "disabled" if config.disabled else "stopped"
        self.error: str | None = None
        self.stderr = StderrTail()
        self.tools: dict[str, ToolEntry] = {}
        self.listing_meta: dict[str, dict[str, Any]] = {}
        self.ui = UiCache()
        self._listing_keys: dict[str, str] = {}  # uri -> its resources/list entry as JSON, to see what changed
        self.client: Client | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.generation = 0
        self.list_version = 0  # counts list_changed refreshes
        self.backoff = Backoff()
        self._connecting = False  # True from start() until the current attempt ends
        self._dead = asyncio.Event()
        self._errlog: tuple[IO[str], threading.Thread] | None = None  # this attempt's stderr pipe and its reader
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._list_changed_task: asyncio.Task[None] | None = None
        self._refresher = Coalesced(self._refresh_now, LIST_CHANGED_DEBOUNCE)
        self.exit_reason: str | None = None  # how the process of the current connection ended, when it did
        self._exited = asyncio.Event()
        self._init_events()
        self.subscribed: set[str] = set()  # resources followed (kept across reconnects)
        self.on_resource_updated: Callable[[str, str], None] | None = None  # set by ServerManager
        # Set by MokaApp: answers sampling/createMessage from this server (after consent).
        self.sampler: Callable[[str, dict[str, Any]], Any] | None = None
        # Set by ServerManager: the person answers this server's questions; calls track progress.
        self.elicitor: Elicitor | None = None
        self.calls: CallTracker | None = None
        self.instructions: str | None = None  # the server's, for the model's system prompt

    @property
    def ui_cache(self) -> dict[str, UiResource]:
        """The UI resources read so far, by uri."""
        return self.ui.entries

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor task (no-op when disabled or already running)."""
        if self.config.disabled or (self._task and not self._task.done()):
            return
        self._stop.clear()
        self._connecting = True  # so wait_ready() waits for this attempt, not the last one
        self.status = "connecting"
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name=f"mcp:{self.name}")

    async def stop(self) -> None:
        """Stop the connection and wait for the child process to be gone."""
        self._stop.set()
        self._wake.set()
        self._dead.set()
        if self._task:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=10)
            except (asyncio.TimeoutError, asyncio.CancelledError):
                self._task.cancel()
        self._set("disabled" if self.config.disabled else "stopped")

    async def restart(self) -> None:
        """Drop the current connection and connect again now."""
        await self.stop()
        self.start()

    async def wait_ready(self, timeout: float) -> bool:
        """Wait until ready or failed; True if ready."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.status == "ready":
                return True
            if self.status in ("failed", "disabled", "stopped", "signin") and self.generation > 0 and not self._connecting:
                return False
            await asyncio.sleep(0.02)
        return self.status == "ready"

    def _set(self, status: Status, error: str | None = None) -> None:
        self.status = status
        self.error = error
        # Neither the log nor a listener may stop the supervisor that called us (finding R2.6).
        try:
            self.inspector.record("server", {"status": status, "error": error, "generation": self.generation},
                                  server=self.name, method=f"status/{status}")
            self.on_change(self)
        except Exception:
            log.exception("reporting %r's status %s failed", self.name, status)

    async def _supervise(self) -> None:
        last_error: str | None = None
        while not self._stop.is_set():
            self.generation += 1
            self._connecting = True
            # The last failure stays visible while the next attempt runs (finding R1.3).
            self._set("connecting", f"{last_error} (connecting again)" if last_error else None)
            signin = False
            try:
                error = await self._connect_once()
            except SignInRequiredError as exc:  # retrying cannot help: wait, untimed, until a sign-in restarts it
                error, signin = str(exc), True
            except Exception as exc:  # a bug here must not end the retries
                log.exception("connecting %r failed unexpectedly", self.name)
                error = describe_exception(exc)
            self._connecting = False
            self.client = None
            if self._stop.is_set():
                break
            delay = None if signin else self.backoff.next_delay()
            last_error = error or "the connection closed"
            if delay is None:
                self._set("signin", error)
            else:
                self._set("failed", last_error + f" (retrying in {delay:g} s)")
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass

    async def _connect_once(self) -> str | None:
        """Run one connection until it dies; returns the error, or None after a clean stop."""
        self._dead.clear()
        self._exited.clear()
        self.exit_reason = None
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w", buffering=1, encoding="utf-8", errors="replace")
        reader = threading.Thread(target=self._pump_stderr, args=(read_fd, self.generation), daemon=True,
                                  name=f"stderr:{self.name}")
        reader.start()
        self._errlog = (errlog, reader)
        timed_out = False
        try:
            inner = self.transport.open(self.config, errlog)
            logged = LoggingTransport(inner, self.inspector, self.name)
            # The deadline covers the handshake and listing; ui:// resources are read after (R1.15).
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                async with Client(logged, extensions=[UI_EXTENSION], read_timeout_seconds=CALL_TIMEOUT,
                                  client_info=types.Implementation(name="moka", version=__version__),
                                  message_handler=self._on_message, log_level=self.log_level,  # type: ignore[arg-type]
                                  logging_callback=self._on_log, cache=None,
                                  elicitation_callback=sdk_callback(self.elicitor, self.name),
                                  list_roots_callback=self._on_list_roots if self.roots else None,
                                  sampling_callback=self._on_sampling if self.sampler else None) as client:
                    if self.config.transport_id == "stdio":
                        # The child has our copy of the pipe now; close ours so EOF means "exited".
                        # (Other transports keep it: the HTTP transport writes its errors there.)
                        errlog.close()
                    self.client = client
                    self.protocol_version = client.protocol_version
                    info = client.server_info
                    self.server_info = dump(info) if info is not None else None
                    self.instructions = client.instructions
                    await self._send_log_level(client)
                    self.ui.clear()
                    await self._refresh(client)
                    scope.deadline = float("inf")
                    self._set("ready")
                    self.backoff.ready()
                    self._start_listening(client)
                    try:
                        await self._resubscribe(client)
                    except MokaError as exc:  # the resource may be gone; the connection is fine
                        self.inspector.record("server", {"error": str(exc)}, server=self.name, method="resources/subscribe")
                    await self._park()
            timed_out = scope.cancelled_caught
        except SignInRequiredError:  # the supervisor waits for a sign-in instead of retrying
            raise
        except MokaError as exc:  # e.g. the command does not exist
            return str(exc)
        except BaseException as exc:  # noqa: BLE001 - ExceptionGroups from the SDK; cancellation re-raised below
            if isinstance(exc, asyncio.CancelledError) and self._stop.is_set():
                return None
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            if isinstance(exc, asyncio.CancelledError):
                task = asyncio.current_task()
                if task is not None and task.cancelling():
                    raise
            return await self._why(describe_exception(exc))
        finally:
            if not errlog.closed:
                errlog.close()
            for task in (self._list_changed_task, self._refresher.task):
                if task:
                    task.cancel()
        if timed_out:
            return await self._why(f"did not finish connecting within {self.connect_timeout:g} s")
        # Why it closed is often the server's exit status and last words (finding R1.9).
        return None if self._stop.is_set() else await self._why("the connection closed")

    async def _why(self, message: str) -> str:
        """``message`` with how the process ended (stdio) and the server's last stderr lines."""
        if self.config.transport_id == "stdio" and self.exit_reason is None:
            try:
                await asyncio.wait_for(self._exited.wait(), timeout=EXIT_REPORT_WAIT)
            except asyncio.TimeoutError:
                pass
        elif self.config.transport_id != "stdio" and self._errlog is not None:
            # Other transports write their own hints into the pipe (e.g. "this looks like an SSE URL"):
            # let the reader take in what is there before quoting it, or the line can be missed.
            errlog, reader = self._errlog
            if not errlog.closed:
                errlog.close()
            await asyncio.to_thread(reader.join, EXIT_REPORT_WAIT)
        if self.exit_reason and self.exit_reason not in message:
            message += f": {self.exit_reason}"
        last = [line[:300] for line in self.stderr.last(3) if line.strip() and not line.startswith(EXIT_PREFIX)]
        return message + (f" — stderr: {' | '.join(last)}" if last else "")

    async def _park(self) -> None:
        waiters = [asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._dead.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()

    def _pump_stderr(self, fd: int, generation: int) -> None:
        loop = self._loop

        def later(*call: Any) -> None:
            if loop is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(*call)
                except RuntimeError:  # the loop closed meanwhile (shutdown)
                    pass

        # Batched onto the loop with back-pressure: one callback per line queued without bound (R1.7).
        relay = LineRelay(loop, lambda line: self.inspector.record("server", {"stderr": line}, server=self.name,
                                                                   method="stderr"))

        def on_line(line: str) -> None:
            self.stderr.append(line)
            if line.startswith(EXIT_PREFIX):  # the stdio transport's report of how the process ended
                later(self._exited_with, generation, line[len(EXIT_PREFIX):])
            relay.put(line)

        pump(fd, on_line)
        # EOF: the child exited (or closed stderr). Wake the supervisor.
        if self.config.transport_id == "stdio":
            later(self._ended, generation)

    def _exited_with(self, generation: int, reason: str) -> None:
        # An earlier attempt's log may end after a restart began: it must not speak for this one.
        if generation == self.generation:
            self.exit_reason = reason
            self._exited.set()

    def _ended(self, generation: int) -> None:
        if generation == self.generation:
            self._dead.set()

    @property
    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return self._task.get_loop() if self._task else None

    # ---- catalogue --------------------------------------------------------------------------

    async def _refresh(self, client: Client) -> None:
        """List every tool and resource; then read (in the background) the UI resources that are new or changed."""
        found = await read_listing(client, self.name)
        changed = {uri for uri, key in found.keys.items() if self._listing_keys.get(uri) != key}
        self.tools, self.listing_meta, self._listing_keys = found.tools, found.listing_meta, found.keys
        uris = sorted({t.resource_uri for t in self.tools.values() if t.resource_uri})
        self.ui.keep_only(set(uris), changed)
        self.ui.prefetch(client, uris, self.listing_meta)

    async def ui_resource(self, uri: str) -> UiResource:
        """The cached UI resource, read now if it is not cached."""
        client = self._client_or_raise()
        return await self.ui.get(client, uri, self.listing_meta.get(uri, {}).get("ui") or {})

    async def _refresh_now(self) -> bool:
        client = self.client
        if client is None:
            return False
        try:
            await self._refresh(client)
            self.list_version += 1  # the card's cached prompts and resources are stale now
        except Exception as exc:  # the supervisor notices a dead connection; keep the old catalogue
            self.inspector.record("server", {"error": f"refresh failed: {describe_exception(exc)}"},
                                  server=self.name, method="refresh/error")
            return False
        try:
            self.on_change(self)
        except Exception:
            log.exception("reporting %r's new catalogue failed", self.name)
        return True

    # ---- what the UI shows -------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """The server as the UI and CLI show it."""
        out: dict[str, Any] = {"name": self.name, "status": self.status, "transport": self.config.transport_id,
                               "toolCount": len(self.tools), "stderr": self.stderr.last(INFO_LINES),
                               "generation": self.generation, "config": self.config.to_json(),
                               "logLevel": self.log_level, "logs": list(self.logs)[-LOG_INFO_LINES:],
                               "roots": self.roots, "listVersion": self.list_version,
                               "subscribed": sorted(self.subscribed)}
        if self.error:
            out["error"] = self.error
        if (auth := auth_state(self.config.url, self.config.headers)) is not None:  # OAuth: signed-in/-out
            out["auth"] = auth
        if self.protocol_version:
            out["protocolVersion"] = self.protocol_version
        if self.instructions:
            out["instructions"] = self.instructions[:INSTRUCTIONS_SHOWN]
        if self.server_info:
            out["serverInfo"] = {k: v for k, v in self.server_info.items() if k in ("name", "version", "title", "websiteUrl")}
            if icons := safe_icons(self.server_info.get("icons")):
                out["serverInfo"]["icons"] = icons
        client = self.client
        if client is not None and self.status == "ready":
            out["capabilities"] = {c: has_capability(client, c) for c in ("prompts", "resources", "completions",
                                                                           "logging")}
        return out
