"""The JSON config file: Claude Desktop's ``mcpServers`` shape plus Moka's own settings.

A config that can't be parsed or validated raises ``ConfigError`` naming the file, the
key path and the problem, and is never overwritten.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from moka_shell import config_merge
from moka_shell.errors import ConfigError, DataDirError
from moka_shell.paths import ensure_dir

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

ConsentPolicy = Literal["ask", "allow", "deny"]
HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http", "streamableHttp"}
DEMO_SERVER_NAME = "moka-demo"
# In a server's "command", this word means "this Moka" (the running executable), so the
# bundled demo server starts the same way from a venv, a wheel or a frozen app.
SELF_COMMAND = "moka"


class ServerConfig(BaseModel):
    """One entry of ``mcpServers`` (Claude Desktop / Cursor shape)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    type: str | None = None
    disabled: bool = False
    timeout: float | None = Field(default=None, gt=0, description="connect deadline in seconds")
    # False keeps this server's `instructions` out of the model's system prompt.
    use_instructions: bool = Field(default=True, alias="useInstructions")

    @model_validator(mode="after")
    def _needs_command_or_url(self) -> ServerConfig:
        kind = self.transport_id
        if kind == "stdio" and not self.command:
            raise ValueError("a stdio server needs a 'command' (or give a 'url' for streamable HTTP)")
        if kind == "http" and not self.url:
            raise ValueError("an HTTP server needs a 'url'")
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"'url' must start with http:// or https://, got {self.url!r}")
        return self

    @property
    def transport_id(self) -> str:
        """The registered transport this entry uses."""
        if self.type:
            return "http" if self.type in HTTP_TYPES else self.type
        return "http" if self.url else "stdio"

    def to_json(self) -> dict[str, Any]:
        """The entry as written to the file: only keys that carry something."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True)
        return data


class AgentSettings(BaseModel):
    """Which model backend the chat uses."""

    model_config = ConfigDict(extra="forbid")

    backend: str | None = None
    model: str | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    base_urls: dict[str, str] = Field(default_factory=dict, alias="baseUrls")
    system_prompt: str | None = Field(default=None, alias="systemPrompt")
    max_steps: int = Field(default=8, ge=1, le=50, alias="maxSteps")


class ThemeSettings(BaseModel):
    """The chosen theme and light/dark mode."""

    model_config = ConfigDict(extra="forbid")

    theme_id: str = Field(default="moka", alias="themeId")
    mode: Literal["light", "dark", "system"] = "system"


class ConsentSettings(BaseModel):
    """What views may do without asking."""

    model_config = ConfigDict(extra="forbid")

    open_link: ConsentPolicy = "ask"
    message: ConsentPolicy = "allow"
    download: ConsentPolicy = "ask"
    sampling: ConsentPolicy = "ask"


ToolChoice = Literal["ask", "allow", "deny"]
ApprovalMode = Literal["ask", "read-only", "all"]


class ServerApproval(BaseModel):
    """The person's standing choices for one server's tools (core/chat/approval.py applies them)."""

    model_config = ConfigDict(extra="forbid")

    default: ToolChoice | None = None  # every tool of the server; None: decided by the tool's annotations
    tools: dict[str, ToolChoice] = Field(default_factory=dict)


class ApprovalSettings(BaseModel):
    """When a tool call the model makes may run without asking the person."""

    model_config = ConfigDict(extra="forbid")

    # "read-only": tools annotated readOnlyHint run without asking; "ask": every call asks; "all": none ask.
    mode: ApprovalMode = "read-only"
    servers: dict[str, ServerApproval] = Field(default_factory=dict)


class InspectorSettings(BaseModel):
    """How much of the inspector's log is kept on disk."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # The JSONL log's total cap; the oldest files go first (inspector_log.py).
    max_log_mb: int = Field(default=200, alias="maxLogMB", ge=10, le=100_000)


class MokaConfig(BaseModel):
    """The whole config file."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    agent: AgentSettings = Field(default_factory=AgentSettings)
    theme: ThemeSettings = Field(default_factory=ThemeSettings)
    consent: ConsentSettings = Field(default_factory=ConsentSettings)
    approval: ApprovalSettings = Field(default_factory=ApprovalSettings)
    inspector: InspectorSettings = Field(default_factory=InspectorSettings)

    def to_json(self) -> dict[str, Any]:
        """The config as written to disk (aliases, no empty noise)."""
        out = self.model_dump(by_alias=True, exclude={"mcp_servers"}, exclude_none=True)
        out = {"mcpServers": {n: s.to_json() for n, s in self.mcp_servers.items()}, **out}
        return out


def default_config() -> MokaConfig:
    """The config created on first run: the bundled demo server."""
    return MokaConfig(mcpServers={DEMO_SERVER_NAME: ServerConfig(command=SELF_COMMAND, args=["demo-server"])})


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def parse_config(text: str, path: str) -> MokaConfig:
    """Parse and validate config text; errors name the file, key path and problem."""
    try:
        raw = json.loads(text)
    except RecursionError as exc:  # finding R3.3: a file nested 200,000 deep was a bare traceback
        raise ConfigError(path, "nested too deep to be a config file",
                          hint="fix the file by hand; Moka will not overwrite a config it can't read") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            path, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})",
            hint="fix the file by hand; Moka will not overwrite a config it can't read",
        ) from exc
    if not isinstance(raw, dict):
        raise ConfigError(path, f"the top level must be a JSON object, not {type(raw).__name__}")
    try:
        return MokaConfig.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        msg = first["msg"].removeprefix("Value error, ")
        raise ConfigError(path, msg, key_path=_key_path(tuple(first["loc"])),
                          hint="fix the file by hand; Moka will not overwrite a config it can't read") from exc


@dataclass
class ConfigChange:
    """What a reload or a save took over from other writers of the file."""

    servers: set[str] = field(default_factory=set)  # added, removed or changed server names
    keys: set[str] = field(default_factory=set)  # other top-level keys that changed (theme, agent…)

    def __bool__(self) -> bool:
        return bool(self.servers or self.keys)


class ConfigFile:
    """The config on disk, shared with other writers: watched, merged, saved atomically.

    ``config`` is updated in place (never replaced), since the app's parts hold it. A save
    re-reads the file and applies only the changes this process made since it last read it,
    so what a terminal, an editor or a second Moka wrote in the meantime is kept.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._base: dict[str, Any] = {}  # the file as this process last read or wrote it
        self._stamp: tuple[int, int, int] | None = None
        self.config = self._load()

    def _load(self) -> MokaConfig:
        with self._locked():
            try:
                present = self.path.exists()
            except OSError as exc:  # a folder on the way that may not be entered (R3.4)
                raise ConfigError(str(self.path), f"can't be read: {exc.strerror or exc}") from exc
            if not present:
                cfg = default_config()
                self._write(cfg.to_json())
                return cfg
            cfg, self._stamp = self._read()
        self._base = cfg.to_json()
        return cfg

    def changed_on_disk(self) -> bool:
        """Whether someone else wrote the file since this process last read or wrote it (a cheap stat)."""
        return _stamp_of(self.path) != self._stamp

    def reload(self) -> ConfigChange:
        """Take over what others wrote, keeping this process's unsaved changes on top."""
        with self._locked():
            if not self.changed_on_disk():
                return ConfigChange()
            disk, self._stamp = self._read()
        return self._merge(disk.to_json(), write=False)

    def save(self) -> ConfigChange:
        """Write this process's changes over the file's current content (re-read first)."""
        with self._locked():
            if self.changed_on_disk() and self.path.exists():
                disk, self._stamp = self._read()
                return self._merge(disk.to_json(), write=True)
            return self._merge(self._base, write=True)

    def _merge(self, disk: dict[str, Any], *, write: bool) -> ConfigChange:
        before = self.config.to_json()
        merged_json = config_merge.apply(disk, config_merge.diff(self._base, before))
        try:
            merged = MokaConfig.model_validate(merged_json)
        except ValidationError:
            # Our change and theirs don't fit together (rare: both edited one entry's parts);
            # ours wins as a whole rather than writing a file that can't be loaded.
            merged = MokaConfig.model_validate(before)
        after = merged.to_json()
        if write:
            self._write(after)
            self._base = after
        else:
            self._base = disk
        for name in MokaConfig.model_fields:
            setattr(self.config, name, getattr(merged, name))
        extra = self.config.__pydantic_extra__
        if extra is not None:
            extra.clear()
            extra.update(merged.__pydantic_extra__ or {})
        return ConfigChange(servers=config_merge.changed_servers(before, after),
                            keys={k for k in before.keys() | after.keys()
                                  if k != "mcpServers" and before.get(k) != after.get(k)})

    def _read(self) -> tuple[MokaConfig, tuple[int, int, int] | None]:
        stamp = _stamp_of(self.path)
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(str(self.path), f"can't be read: {exc.strerror}") from exc
        except UnicodeDecodeError as exc:  # finding R3.2: a Latin-1 "café" was a bare traceback
            raise ConfigError(str(self.path), f"is not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x})",
                              hint="save the file as UTF-8; Moka will not overwrite a config it can't read") from exc
        return parse_config(text, str(self.path)), stamp

    def _write(self, data: dict[str, Any]) -> None:
        try:  # finding R3.4: a file where the folder should be, or a folder nobody may write, was a traceback
            ensure_dir(self.path.parent, "the config's folder")
            # A temp file of our own: two writers sharing one temp name replaced each other's.
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
        except DataDirError as exc:
            raise ConfigError(str(self.path), f"can't be written: {exc.problem}", hint=exc.hint) from exc
        except OSError as exc:
            raise ConfigError(str(self.path), f"can't be written: {exc.strerror or exc}",
                              hint=f"check that you may write in {self.path.parent}, or pass another --config") from exc
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(data, indent=2) + "\n")
                fh.flush()
                st = os.fstat(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            if isinstance(exc, OSError):  # a full disk: the file on disk is still the old one, whole
                raise ConfigError(str(self.path), f"can't be written: {exc.strerror or exc}",
                                  hint="the file was left as it was; free some space and try again") from exc
            raise
        # The temp file's identity becomes the file's: a later write by anyone changes it.
        self._stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        self._base = data

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the config's lock file across read-merge-write, so writers take turns."""
        try:
            fh = open(self.path.with_name(f".{self.path.name}.lock"), "a")  # noqa: SIM115 (held below)
        except OSError:
            fh = None  # a read-only or missing directory: nobody can write there, so nobody races us
        # Windows has no flock: os.replace is still atomic there; only a same-moment save can be lost.
        if fh is None or fcntl is None:
            yield
            return
        with fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)


def _stamp_of(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def self_command() -> list[str]:
    """How to start this Moka again as a subprocess (frozen apps have no ``python -m``)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "moka_shell"]
