"""One MCP server connection, supervised: connect deadline, reconnect with backoff, status.

Each connection runs in its own task, so a crashing transport (which cancels the body of ``async
with Client``) never reaches the chat or a view (the fault table of ``mcp-python-sdk.md``). Here:
the lifecycle and ``info()``. The parts it holds, each given what it uses: ``link`` (the shared
state: name, config, status, client, ``lost``), ``listing`` (tools, resources, the ui:// cache),
``requests`` (calls, prompts, resources, completions), ``events`` (what the server sends unasked),
``settings`` (log level, roots), ``subscriptions`` (followed resources, the listen stream). What the
chat and views ask on every turn (``tool``, ``call_tool``, ``request``, ``ui_resource``) the
connection hands on; the person's extras are asked of their part (``conn.settings.set_roots``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.client import advertise

from moka_shell.config import ServerConfig
from moka_shell.core.mcp.backoff import Backoff
from moka_shell.core.mcp.catalog import APP_MIME, ToolEntry, UiResource, safe_icons
from moka_shell.core.mcp.elicitation import Elicitor, sdk_callback
from moka_shell.core.mcp.link import Link, Status
from moka_shell.core.mcp.listing import ServerListing, has_capability
from moka_shell.core.mcp.logging_transport import LoggingTransport
from moka_shell.core.mcp.oauth.credentials import ClientSecrets
from moka_shell.core.mcp.oauth.provider import auth_state
from moka_shell.core.mcp.progress import CallTracker
from moka_shell.core.mcp.requests import ServerRequests
from moka_shell.core.mcp.sdk import describe_exception, dump, quiet_sdk_logs
from moka_shell.core.mcp.server_settings import ServerSettings
from moka_shell.core.mcp.session_events import LOG_INFO_LINES, Sampler, SessionEvents
from moka_shell.core.mcp.stderr import INFO_LINES, StderrPipe, StderrTail
from moka_shell.core.mcp.subscriptions import ResourceSubscriptions
from moka_shell.core.mcp.transport import Transport
from moka_shell.errors import MokaError, SignInRequiredError
from moka_shell.inspector import Inspector
from moka_shell.version import __version__

if TYPE_CHECKING:
    from moka_shell.core.mcp.stdio_launch import EarlyStart

UI_EXTENSION = advertise("io.modelcontextprotocol/ui", {"mimeTypes": [APP_MIME]})
DEFAULT_CONNECT_TIMEOUT = 20.0
CALL_TIMEOUT = 300.0
STOP_WAIT = 10.0  # for a connection to close politely before its task is cancelled
INSTRUCTIONS_SHOWN = 4000  # characters of the server's instructions on its card
log = logging.getLogger("moka.servers")
quiet_sdk_logs()


def cancelling() -> bool:
    """Whether the running task has been asked to cancel (even if the CancelledError was swallowed)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class ServerConnection:
    """A supervised connection to one MCP server."""

    def __init__(self, name: str, config: ServerConfig, transport: Transport, inspector: Inspector,
                 on_change: Callable[[ServerConnection], None], *, connect_timeout: float | None = None,
                 calls: CallTracker | None = None, elicitor: Elicitor | None = None, sampler: Sampler | None = None,
                 on_resource_updated: Callable[[str, str], None] | None = None,
                 early: EarlyStart | None = None, stderr_sink: Callable[[str], object] | None = None) -> None:
        self.name = name
        self.transport = transport
        self.inspector = inspector
        self.on_change = on_change
        self.connect_timeout = connect_timeout or config.timeout or DEFAULT_CONNECT_TIMEOUT
        self.elicitor = elicitor  # the person answers this server's questions (None: none are asked)
        self.link = Link(name, config)
        self._early = early  # its process, started before the SDK loaded: the first attempt adopts it
        self.stderr = early.tail if early is not None else StderrTail()
        self._stderr_sink = stderr_sink or (lambda line: inspector.record("server", {"stderr": line}, server=name,
                                                                          method="stderr"))
        self.listing = ServerListing(self.link, inspector, changed=lambda: self._report("new catalogue"))
        self.requests = ServerRequests(self.link, self.listing, self.stderr, calls=calls)
        self.subscriptions = ResourceSubscriptions(self.link, inspector, self.listing, on_updated=on_resource_updated)
        self.events = SessionEvents(name, inspector, self.listing, self.subscriptions, sampler=sampler,
                                    logs_changed=lambda: self._report("log lines"))
        self.settings = ServerSettings(self.link, inspector, reconnect=self.restart)
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.instructions: str | None = None  # the server's, for the model's system prompt
        self.generation = 0
        self.backoff = Backoff()
        self._connecting = False  # True from start() until the current attempt ends
        self.retired = False  # Moka is stopping: this connection never starts again (finding N8b)
        self._attempt: anyio.CancelScope | None = None  # the connect attempt under way, for stop()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    @property
    def config(self) -> ServerConfig:
        """The server's config entry (the person's edits replace it; the caller saves it)."""
        return self.link.config

    @config.setter
    def config(self, config: ServerConfig) -> None:
        self.link.config = config

    @property
    def status(self) -> Status:
        """``connecting``, ``ready``, ``failed``, ``stopped``, ``disabled`` or ``signin``."""
        return self.link.status

    @property
    def error(self) -> str | None:
        """Why the last attempt failed (kept while the next one runs)."""
        return self.link.error

    @property
    def tools(self) -> dict[str, ToolEntry]:
        """The tools listed, by name."""
        return self.listing.tools

    def tool(self, name: str) -> ToolEntry:
        """The catalogue entry of a tool, or UnknownToolError."""
        return self.requests.tool(name)

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        """Call a tool; the wire ``CallToolResult`` dict, size-capped (``ServerRequests.call_tool``)."""
        return await self.requests.call_tool(name, arguments, timeout=timeout)

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Proxy a read-only request (resources/read, resources/list, ...) for a view."""
        return await self.requests.request(method, params)

    async def ui_resource(self, uri: str) -> UiResource:
        """The cached UI resource, read now if it is not cached."""
        return await self.listing.ui_resource(uri)

    def _report(self, what: str, status: dict[str, Any] | None = None) -> None:
        # Neither the log nor a listener may stop the supervisor or the handler that called us (finding R2.6).
        try:
            if status is not None:
                self.inspector.record("server", status, server=self.name, method=f"status/{status['status']}")
            self.on_change(self)
        except Exception:
            log.exception("reporting %r's %s failed", self.name, what)

    # ---- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the supervisor task (no-op when disabled or already running)."""
        if self.config.disabled or self.retired or self.running:
            return
        self._stop.clear()
        self._connecting = True  # so wait_ready() waits for this attempt, not the last one
        self.link.status = "connecting"
        self._task = asyncio.get_running_loop().create_task(self._supervise(), name=f"mcp:{self.name}")

    @property
    def running(self) -> bool:
        """Whether the supervisor task is alive."""
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        """Stop the connection and wait for the child process to be gone."""
        early, self._early = self._early, None
        if early is not None:  # started early, never adopted
            await early.discard()
        self._stop.set()
        self._wake.set()
        self.link.lost.set()
        if self._attempt is not None and self.status != "ready":
            self._attempt.cancel()  # a handshake in progress ends now, not at its connect deadline
        if self._task:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), timeout=STOP_WAIT)
            except asyncio.TimeoutError:
                self._task.cancel()
            except asyncio.CancelledError:
                self._task.cancel()
                if cancelling():  # our caller is being cancelled, not just the supervisor: say so
                    raise
        self._set("disabled" if self.config.disabled else "stopped")

    async def retire(self) -> None:
        """Stop for good: Moka is stopping, and nothing may start this connection again."""
        self.retired = True
        await self.stop()

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
        self.link.status, self.link.error = status, error
        self._report(f"status {status}", {"status": status, "error": error, "generation": self.generation})

    async def _supervise(self) -> None:
        last_error: str | None = None
        while not self._stop.is_set():
            # A cancellation can be lost on the way (Python 3.11's wait_for drops one that meets
            # its result; the SDK's task groups may absorb one): this task was cancelled if it says
            # so, whatever swallowed the error. Retrying then kept Moka from exiting (N8b).
            if cancelling():
                raise asyncio.CancelledError
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
            self.link.client = None
            if self._stop.is_set():
                break
            delay = None if signin else self.backoff.next_delay()
            last_error = error or "the connection closed"
            if delay is None:
                self._set("signin", error)
            else:
                self._set("failed", last_error + f" (retrying in {delay:g} s)")
            self._wake.clear()
            if cancelling():
                raise asyncio.CancelledError
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=delay)

    async def _connect_once(self) -> str | None:
        """Run one connection until it dies; returns the error, or None after a clean stop."""
        self.link.lost.clear()
        early, self._early = self._early, None
        pipe = early.pipe if early is not None else StderrPipe(self.name, self.stderr, self._stderr_sink,
                                                               stdio=self.config.transport_id == "stdio")
        timed_out = False
        try:
            inner = early.process.streams(pipe.file) if early is not None else self.transport.open(self.config, pipe.file)
            logged = LoggingTransport(inner, self.inspector, self.name)
            # The deadline covers the handshake and listing; ui:// resources are read after (R1.15).
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                self._attempt = scope
                async with Client(logged, extensions=[UI_EXTENSION], read_timeout_seconds=CALL_TIMEOUT,
                                  client_info=types.Implementation(name="moka", version=__version__),
                                  message_handler=self.events.on_message, cache=None,
                                  log_level=self.settings.log_level,  # type: ignore[arg-type]
                                  logging_callback=self.events.on_log,
                                  elicitation_callback=sdk_callback(self.elicitor, self.name),
                                  list_roots_callback=self.settings.on_list_roots if self.settings.roots else None,
                                  sampling_callback=self.events.on_sampling if self.events.sampler else None) as client:
                    pipe.transport_opened()
                    self.link.client = client
                    self.protocol_version = client.protocol_version
                    info = client.server_info
                    self.server_info = dump(info) if info is not None else None
                    self.instructions = client.instructions
                    await self.settings.send_log_level(client)
                    self.listing.ui.clear()
                    await self.listing.refresh(client)
                    scope.deadline = float("inf")
                    self._set("ready")
                    self.backoff.ready()
                    self.subscriptions.listen(client)
                    try:
                        await self.subscriptions.resubscribe(client)
                    except MokaError as exc:  # the resource may be gone; the connection is fine
                        self.inspector.record("server", {"error": str(exc)}, server=self.name, method="resources/subscribe")
                    await self._park(pipe)
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
            return await pipe.explain(describe_exception(exc))
        finally:
            self._attempt = None
            pipe.close()
            self.subscriptions.stop_listening()
            self.listing.refresher.cancel()
        if self._stop.is_set():
            return None
        if timed_out:
            return await pipe.explain(f"did not finish connecting within {self.connect_timeout:g} s")
        # Why it closed is often the server's exit status and last words (finding R1.9).
        return None if self._stop.is_set() else await pipe.explain("the connection closed")

    async def _park(self, pipe: StderrPipe) -> None:
        """Wait until stopped, or the connection is lost (a request saw it die; a stdio child's stderr ended)."""
        events = [self._stop, self.link.lost] + ([pipe.eof] if pipe.stdio else [])
        waiters = [asyncio.ensure_future(e.wait()) for e in events]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()

    def info(self) -> dict[str, Any]:
        """The server as the UI and CLI show it."""
        out: dict[str, Any] = {"name": self.name, "status": self.status, "transport": self.config.transport_id,
                               "toolCount": len(self.tools), "stderr": self.stderr.last(INFO_LINES),
                               "generation": self.generation, "config": self.config.to_json(),
                               "logLevel": self.settings.log_level, "logs": list(self.events.logs)[-LOG_INFO_LINES:],
                               "roots": self.settings.roots, "listVersion": self.listing.version,
                               "subscribed": sorted(self.subscriptions.subscribed),
                               "trustsAnnotations": self.config.annotations_trusted}
        if self.error:
            out["error"] = self.error
        if (auth := auth_state(self.config.url, self.config.headers, self.config.oauth)) is not None:
            out["auth"] = auth  # OAuth: signed-in/-out
        if self.config.oauth is not None and self.config.url:  # which of its client's secrets are kept (not them)
            out["oauthSecrets"] = ClientSecrets(self.config.url).stored()
        if self.protocol_version:
            out["protocolVersion"] = self.protocol_version
        if self.instructions:
            out["instructions"] = self.instructions[:INSTRUCTIONS_SHOWN]
        if self.server_info:
            out["serverInfo"] = {k: v for k, v in self.server_info.items() if k in ("name", "version", "title", "websiteUrl")}
            if icons := safe_icons(self.server_info.get("icons")):
                out["serverInfo"]["icons"] = icons
        if (client := self.link.ready_or_none()) is not None:
            out["capabilities"] = {c: has_capability(client, c) for c in ("prompts", "resources", "completions", "logging")}
        return out
