"""One MCP server connection, supervised: connect deadline, reconnect with backoff, status.

Each connection runs in its own task so that a crashing transport (which cancels the
body of ``async with Client``) never reaches the chat or a view. See the fault table
in ``shared/docs/mcp-python-sdk.md``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import anyio
import mcp_types as types
import pydantic
from mcp import Client, MCPError
from mcp.client import advertise

from moka_shell import __version__
from moka_shell.config import ServerConfig
from moka_shell.core.mcp.catalog import APP_MIME, ToolEntry, UiResource, cap_result
from moka_shell.core.mcp.coalesce import Coalesced
from moka_shell.core.mcp.logging_transport import LoggingTransport
from moka_shell.core.mcp.sdk import describe_exception, dump, quiet_sdk_logs
from moka_shell.core.mcp.stderr import INFO_LINES, StderrTail, pump
from moka_shell.core.mcp.transport import Transport
from moka_shell.core.mcp.ui_resources import read_catalogue, read_ui_resource
from moka_shell.errors import MokaError, ServerUnavailableError, ToolCallError, UnknownToolError, to_jsonrpc
from moka_shell.inspector import Inspector

Status = Literal["connecting", "ready", "failed", "stopped", "disabled"]
UI_EXTENSION = advertise("io.modelcontextprotocol/ui", {"mimeTypes": [APP_MIME]})
DEFAULT_CONNECT_TIMEOUT = 20.0
CALL_TIMEOUT = 300.0
BACKOFF = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
HEALTHY_SECONDS = 60.0  # a session ready this long was healthy: the next retry starts from the shortest delay
LIST_CHANGED_DEBOUNCE = 0.25  # a burst of list_changed notifications within this makes one refresh
log = logging.getLogger("moka.servers")
quiet_sdk_logs()


class ServerConnection:
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
        self.ui_cache: dict[str, UiResource] = {}
        self._listing_keys: dict[str, str] = {}  # uri -> its resources/list entry as JSON, to see what changed
        self.client: Client | None = None
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.generation = 0
        self._connecting = False  # True from start() until the current attempt ends
        self._dead = asyncio.Event()
        self._stop = asyncio.Event()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._list_changed_task: asyncio.Task[None] | None = None
        self._refresher = Coalesced(self._refresh_now, LIST_CHANGED_DEBOUNCE)
        self._ready_since: float | None = None
        # Set by MokaApp: answers sampling/createMessage from this server (after consent).
        self.sampler: Callable[[str, dict[str, Any]], Any] | None = None

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
            if self.status in ("failed", "disabled", "stopped") and self.generation > 0 and not self._connecting:
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
        failures = 0
        last_error: str | None = None
        while not self._stop.is_set():
            self.generation += 1
            self._connecting = True
            # The last failure stays visible while the next attempt runs (finding R1.3).
            self._set("connecting", f"{last_error} (connecting again)" if last_error else None)
            self._ready_since = None
            try:
                error = await self._connect_once()
            except Exception as exc:  # a bug here must not end the retries
                log.exception("connecting %r failed unexpectedly", self.name)
                error = describe_exception(exc)
            self._connecting = False
            self.client = None
            if self._stop.is_set():
                break
            healthy = self._ready_since is not None and time.monotonic() - self._ready_since >= HEALTHY_SECONDS
            failures = 0 if healthy else failures + 1
            delay = BACKOFF[min(failures, len(BACKOFF) - 1)]
            last_error = error or "the connection closed"
            self._set("failed", last_error + f" (retrying in {delay:g} s)")
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass

    async def _connect_once(self) -> str | None:
        """Run one connection until it dies; returns the error, or None after a clean stop."""
        self._dead.clear()
        read_fd, write_fd = os.pipe()
        errlog = os.fdopen(write_fd, "w", buffering=1, encoding="utf-8", errors="replace")
        reader = threading.Thread(target=self._pump_stderr, args=(read_fd,), daemon=True, name=f"stderr:{self.name}")
        reader.start()
        timed_out = False
        try:
            inner = self.transport.open(self.config, errlog)
            logged = LoggingTransport(inner, self.inspector, self.name)
            with anyio.CancelScope(deadline=anyio.current_time() + self.connect_timeout) as scope:
                async with Client(logged, extensions=[UI_EXTENSION], read_timeout_seconds=CALL_TIMEOUT,
                                  client_info=types.Implementation(name="moka", version=__version__),
                                  message_handler=self._on_message, log_level="info",
                                  logging_callback=self._on_log, cache=None,
                                  sampling_callback=self._on_sampling if self.sampler else None) as client:
                    # The child has our copy of the pipe now; close ours so EOF means "exited".
                    errlog.close()
                    self.client = client
                    self.protocol_version = client.protocol_version
                    info = client.server_info
                    self.server_info = dump(info) if info is not None else None
                    await self._refresh(client, keep_cache=False)
                    scope.deadline = float("inf")
                    self._set("ready")
                    self._ready_since = time.monotonic()
                    self._start_listening(client)
                    await self._park()
            timed_out = scope.cancelled_caught
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
            return self._with_stderr(describe_exception(exc))
        finally:
            if not errlog.closed:
                errlog.close()
            for task in (self._list_changed_task, self._refresher.task):
                if task:
                    task.cancel()
        if timed_out:
            return self._with_stderr(f"did not finish connecting within {self.connect_timeout:g} s")
        # Why it closed is often the server's last words (finding R1.9).
        return None if self._stop.is_set() else self._with_stderr("the connection closed")

    def _with_stderr(self, message: str) -> str:
        last = [line[:300] for line in self.stderr.last(3) if line.strip()]
        return message + (f" — stderr: {' | '.join(last)}" if last else "")

    async def _park(self) -> None:
        waiters = [asyncio.ensure_future(self._stop.wait()), asyncio.ensure_future(self._dead.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()

    def _pump_stderr(self, fd: int) -> None:
        loop = self._loop

        def on_line(line: str) -> None:
            self.stderr.append(line)
            if loop is not None and not loop.is_closed():
                try:
                    loop.call_soon_threadsafe(functools.partial(self.inspector.record, "server", {"stderr": line},
                                                                server=self.name, method="stderr"))
                except RuntimeError:  # the loop closed meanwhile (shutdown)
                    pass

        pump(fd, on_line)
        # EOF: the child exited (or closed stderr). Wake the supervisor.
        if loop is not None and not loop.is_closed() and self.config.transport_id == "stdio":
            try:
                loop.call_soon_threadsafe(self._dead.set)
            except RuntimeError:  # the loop closed meanwhile (shutdown)
                pass

    @property
    def _loop(self) -> asyncio.AbstractEventLoop | None:
        return self._task.get_loop() if self._task else None

    # ---- catalogue ---------------------------------------------------------------------------

    async def _refresh(self, client: Client, *, keep_cache: bool) -> None:
        """List tools and resources, and read the UI resources (with ``keep_cache``: only changed ones)."""
        old, old_keys = (self.ui_cache, self._listing_keys) if keep_cache else ({}, {})
        cat = await read_catalogue(client, self.name, old, old_keys)
        self.tools, self.listing_meta, self.ui_cache, self._listing_keys = cat.tools, cat.listing_meta, cat.ui, cat.keys

    async def _fetch_ui(self, client: Client, uri: str) -> UiResource:
        return await read_ui_resource(client, uri, self.listing_meta.get(uri, {}).get("ui") or {})

    async def ui_resource(self, uri: str) -> UiResource:
        """The cached UI resource, fetched now if it is not cached."""
        cached = self.ui_cache.get(uri)
        if cached is not None and cached.error is None:
            return cached
        client = self._client_or_raise()
        fresh = await self._fetch_ui(client, uri)
        self.ui_cache[uri] = fresh
        return fresh

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ServerNotification):
            message = message.root if hasattr(message, "root") else message
        if isinstance(message, (types.ToolListChangedNotification, types.ResourceListChangedNotification)):
            self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        """Refresh the catalogue soon: a burst of list_changed notifications makes one refresh."""
        if self.client is not None:
            self._refresher.request()

    async def _refresh_now(self) -> bool:
        client = self.client
        if client is None:
            return False
        try:
            await self._refresh(client, keep_cache=True)
        except Exception as exc:  # the supervisor notices a dead connection; keep the old catalogue
            self.inspector.record("server", {"error": f"refresh failed: {describe_exception(exc)}"},
                                  server=self.name, method="refresh/error")
            return False
        try:
            self.on_change(self)
        except Exception:
            log.exception("reporting %r's new catalogue failed", self.name)
        return True

    async def _on_sampling(self, context: Any, params: Any) -> Any:
        """A server asks the model for a message: the person decides, then the current backend answers."""
        assert self.sampler is not None
        try:
            result = await self.sampler(self.name, dump(params))
        except MokaError as exc:
            return types.ErrorData(**to_jsonrpc(exc))
        return types.CreateMessageResult.model_validate(result)

    async def _on_log(self, params: Any) -> None:
        self.inspector.record("server", dump(params), server=self.name, method="notifications/message")

    def _start_listening(self, client: Client) -> None:
        if (client.protocol_version or "") < "2026-07-28":
            return

        async def listen() -> None:
            try:
                async with client.listen(tools_list_changed=True, resources_list_changed=True) as sub:
                    async for _event in sub:
                        self._schedule_refresh()
            except Exception:  # listening is best effort; the connection itself is supervised
                return

        self._list_changed_task = asyncio.get_running_loop().create_task(listen())

    # ---- calls -------------------------------------------------------------------------------

    def _client_or_raise(self) -> Client:
        if self.status != "ready" or self.client is None:
            raise ServerUnavailableError(self.name, self.status, self.error)
        return self.client

    def tool(self, name: str) -> ToolEntry:
        """The catalogue entry of a tool, or UnknownToolError."""
        try:
            return self.tools[name]
        except KeyError:
            raise UnknownToolError(self.name, name, list(self.tools)) from None

    async def call_tool(self, name: str, arguments: dict[str, Any] | None, *,
                        timeout: float | None = None) -> dict[str, Any]:
        """Call a tool; returns the wire ``CallToolResult`` dict, size-capped.

        Protocol failures raise ToolCallError; a dead connection is marked so the
        supervisor reconnects.
        """
        client = self._client_or_raise()
        self.tool(name)
        return cap_result(await self._guard(client.call_tool(name, arguments or {}, read_timeout_seconds=timeout),
                                            f"tools/call {name}"))

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Proxy a read-only request (resources/read, resources/list, ...) for a view."""
        client = self._client_or_raise()
        if method == "resources/read":
            coro: Any = client.read_resource(str(params.get("uri", "")))
        elif method == "resources/list":
            coro = client.list_resources(cursor=params.get("cursor"))
        elif method == "resources/templates/list":
            coro = client.list_resource_templates(cursor=params.get("cursor"))
        elif method == "prompts/list":
            coro = client.list_prompts(cursor=params.get("cursor"))
        else:
            raise ToolCallError(f"{method} is not proxied")
        return await self._guard(coro, method)

    async def _guard(self, coro: Any, what: str) -> dict[str, Any]:
        try:
            result = await coro
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._dead.set()
                raise ToolCallError(f"{what} on {self.name!r} failed: the server's connection closed "
                                    f"({exc.message}); Moka is reconnecting") from exc
            raise ToolCallError(f"{what} on {self.name!r} failed: {exc.message} (code {exc.code})") from exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise
            # The HTTP transport's task group crashed and cancelled the call: the server died.
            self._dead.set()
            raise ToolCallError(f"{what} on {self.name!r} failed: the connection was lost; Moka is reconnecting") from None
        except (pydantic.ValidationError, RuntimeError) as exc:
            raise ToolCallError(f"{what} on {self.name!r} returned an invalid result: {describe_exception(exc)}") from exc
        except (TimeoutError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            self._dead.set()
            raise ToolCallError(f"{what} on {self.name!r} failed: {describe_exception(exc)}") from exc
        return dump(result)

    def info(self) -> dict[str, Any]:
        """The server as the UI and CLI show it."""
        out: dict[str, Any] = {"name": self.name, "status": self.status, "transport": self.config.transport_id,
                               "toolCount": len(self.tools), "stderr": self.stderr.last(INFO_LINES),
                               "generation": self.generation, "config": self.config.to_json()}
        if self.error:
            out["error"] = self.error
        if self.protocol_version:
            out["protocolVersion"] = self.protocol_version
        if self.server_info:
            out["serverInfo"] = {k: v for k, v in self.server_info.items() if k in ("name", "version", "title")}
        return out
