"""Every error Moka raises on purpose, in one tree.

    MokaError                       anything Moka reports to a person
    ├── ConfigError                 a config file that can't be read, parsed or validated
    ├── PluginError                 a plugin that failed to load or raised in a hook
    ├── PluginInstallError          `moka plugins install|uninstall|new` can't do what was asked (nothing changed)
    ├── UsageError                  a command used wrongly (exit code 2)
    ├── InvalidParamsError          a request's parameters are wrong (JSON-RPC -32602)
    ├── ServerError                 an MCP server problem
    │   ├── UnknownServerError      no server of that name (also a KeyError)
    │   ├── ServerUnavailableError  the server is not connected (connecting, failed, stopped)
    │   ├── ToolCallError           a tools/call failed at the protocol level
    │   ├── SignInRequiredError     the server wants an OAuth sign-in first (answered 401)
    │   ├── SignInError             an OAuth sign-in could not be completed
    │   └── UnknownToolError        no tool of that name on that server (also a KeyError)
    ├── ViewError                   an MCP App view could not be prepared (bad resource, mime type)
    │   └── ViewOrderError          a step of a view's life out of its order (core/views/view.py)
    ├── NoConversationsError        this run keeps no conversations (`moka check`, `tools`, `call`)
    ├── BridgeError                 a JSON-RPC error to answer a view or the UI with (carries `code`)
    ├── AgentError                  a model backend problem, shown in the conversation
    │   ├── NeedsKeyError           the backend needs an API key; the message says how to add one
    │   ├── ProviderError           the provider answered with an error (auth, rate limit, ...)
    │   └── UnknownBackendError     no backend of that id (also a KeyError)
    ├── StoreError                  the conversation database can't be used (or can't be written now)
    │   └── StoreDamagedError       its file is damaged (failed the integrity check, or a page is malformed)
    ├── DataDirError                a folder Moka keeps files in is blocked by a file, or can't be made
    └── InstanceRunningError        another Moka already uses this data dir

Every message says what is wrong and, where there is one, how to fix it. Every class carries
the JSON-RPC code it is answered with (``rpc_code``); ``to_jsonrpc`` is the one way an error
leaves the core as a JSON-RPC error object (the bridge, the view dispatcher, sampling).
"""

from __future__ import annotations

from typing import Any, Literal


class MokaError(Exception):
    """Base of every error Moka reports to a person."""

    exit_code = 1
    rpc_code = -32000  # the MCP Apps spec's code for a refusal; subclasses name their own

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}\n  hint: {self.hint}"
        return self.message


class ConfigError(MokaError):
    """A config file that can't be read, parsed or validated."""

    def __init__(self, path: str, problem: str, *, key_path: str | None = None, hint: str | None = None) -> None:
        where = f"{path}" + (f" at {key_path}" if key_path else "")
        super().__init__(f"config error in {where}: {problem}", hint=hint)
        self.path = path
        self.key_path = key_path
        self.problem = problem


class PluginError(MokaError):
    """A plugin that failed to load or raised in a hook."""

    def __init__(self, plugin: str, problem: str) -> None:
        super().__init__(f"plugin {plugin!r}: {problem}")
        self.plugin = plugin
        self.problem = problem


class PluginInstallError(MokaError):
    """``moka plugins install|uninstall|new`` can't do what was asked; nothing was changed."""


class UsageError(MokaError):
    """A command used wrongly; the CLI exits with 2."""

    exit_code = 2


class InvalidParamsError(MokaError):
    """A request's parameters are missing or of the wrong type."""

    rpc_code = -32602


class ServerError(MokaError):
    """An MCP server problem."""


class UnknownServerError(ServerError, KeyError):
    """No server of that name is configured."""

    def __init__(self, name: str, known: list[str]) -> None:
        listing = ", ".join(known) if known else "none configured"
        super().__init__(
            f"no server named {name!r} (known: {listing})",
            hint="add one with `moka servers add NAME -- COMMAND ARGS...` or `moka servers add NAME --url URL`",
        )
        self.name = name

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return MokaError.__str__(self)


class ServerExistsError(ServerError):
    """Adding a server under a name that is taken, without saying to replace it."""

    def __init__(self, name: str, *, hint: str) -> None:
        super().__init__(f"a server named {name!r} already exists", hint=hint)
        self.name = name


class ServerUnavailableError(ServerError):
    """The server is not connected right now."""

    def __init__(self, name: str, status: str, reason: str | None = None) -> None:
        msg = f"server {name!r} is {status}"
        if reason:
            msg += f": {reason}"
        super().__init__(msg, hint=f"see `moka servers list` and `moka inspect --channel server` for {name!r}")
        self.name = name
        self.status = status
        self.reason = reason


class ToolCallError(ServerError):
    """A tools/call failed at the protocol level (not a tool's own isError result)."""


class SignInRequiredError(ServerError):
    """The server answered 401: a person must sign in (OAuth) before Moka can connect."""


class SignInError(ServerError):
    """An OAuth sign-in could not be completed (refused, timed out, or the server's metadata is wrong).

    ``needs_client_id``: the server lets no client register itself; a client id from its owner is needed.
    """

    def __init__(self, message: str, *, hint: str | None = None, needs_client_id: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.needs_client_id = needs_client_id


class ElicitationRefusedError(ServerError):
    """A server asked the person something (elicitation) that nobody can answer here, or that was not valid."""

    # Not -32000 (the SDK's "connection closed"): the code the SDK itself uses for "elicitation not supported".
    rpc_code = -32600


class UnknownToolError(ServerError, KeyError):
    """No tool of that name on that server."""

    def __init__(self, server: str, tool: str, known: list[str]) -> None:
        listing = ", ".join(sorted(known)) if known else "none"
        super().__init__(f"server {server!r} has no tool {tool!r} (tools: {listing})")
        self.server = server
        self.tool = tool

    def __str__(self) -> str:
        return MokaError.__str__(self)


class ViewError(MokaError):
    """An MCP App view could not be prepared or failed."""


class UnsafeLinkError(MokaError):
    """A link a server or view wants opened that Moka will not open: not http(s), or not plain to read."""

    def __init__(self, url: str, why: str) -> None:
        super().__init__(f"{url[:200]!r} is not an address Moka opens: {why}")
        self.url, self.why = url[:200], why


class ViewOrderError(ViewError):
    """A step of a view's life asked for out of the order ``core/views/view.py`` states (a caller's bug)."""

    rpc_code = -32603


class NoConversationsError(MokaError):
    """This run keeps no conversations: it opened no store (``moka check``, ``tools``, ``call``, ``replay``)."""

    def __init__(self, message: str = "conversations are not available in this mode: this run keeps no "
                                      "conversation store") -> None:
        super().__init__(message, hint="`moka check`, `tools`, `call` and `replay` open no store; chat in "
                                       "`moka` or `moka serve`")


class RecordingError(MokaError):
    """A view recording that can't be read or replayed (docs/app-authors.md, "Recordings")."""


class BridgeError(MokaError):
    """A JSON-RPC error to answer a view or the UI with."""

    # JSON-RPC 2.0 codes, plus the -32000 the MCP Apps spec uses for denials.
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    DENIED = -32000

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.rpc_code = code
        self.data = data

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` object (never carries a null)."""
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


class AgentError(MokaError):
    """A model backend problem, shown in the conversation."""


class NeedsKeyError(AgentError):
    """The backend needs an API key."""


ProviderErrorKind = Literal["auth", "rate_limit", "network", "context_length", "bad_request", "server", "other"]


class ProviderError(AgentError):
    """The model provider answered with an error."""

    def __init__(self, kind: ProviderErrorKind, message: str, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind


class UnknownBackendError(AgentError, KeyError):
    """No agent backend with that id is registered."""

    def __init__(self, backend_id: str, known: list[str]) -> None:
        super().__init__(
            f"no model backend {backend_id!r} (available: {', '.join(sorted(known)) or 'none'})",
            hint="`moka plugins` lists the installed backends",
        )
        self.backend_id = backend_id

    def __str__(self) -> str:
        return MokaError.__str__(self)


class StoreError(MokaError):
    """The conversation database can't be used (or, like a full disk, can't be written right now)."""


class StoreDamagedError(StoreError):
    """The conversation database's file is damaged; Moka leaves it as it is."""


class DataDirError(MokaError):
    """A folder Moka keeps files in is blocked by a file, or can't be created."""

    def __init__(self, path: str, problem: str, *, hint: str | None = None) -> None:
        super().__init__(f"{path}: {problem}", hint=hint)
        self.path = path
        self.problem = problem


class InstanceRunningError(MokaError):
    """Another Moka already uses this data dir (it holds the dir's lock)."""

    def __init__(self, data_dir: str, holder: dict[str, Any]) -> None:
        who = f"pid {holder['pid']}" if isinstance(holder.get("pid"), int) else "another process"
        where = f", at {holder['url'].split('?')[0]}" if isinstance(holder.get("url"), str) else ""
        super().__init__(f"Moka is already running on the data dir {data_dir} ({who}{where})",
                         hint="use the running Moka, stop it first, or pass another --data-dir")
        self.data_dir = data_dir
        self.holder = holder


def to_jsonrpc(exc: MokaError, *, with_hint: bool = True) -> dict[str, Any]:
    """The JSON-RPC ``error`` object for one of our errors (never carries a null)."""
    if isinstance(exc, BridgeError):
        return exc.to_error()
    return {"code": exc.rpc_code, "message": str(exc) if with_hint else exc.message}
