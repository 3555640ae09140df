"""The JSON config file: Claude Desktop's ``mcpServers`` shape plus Moka's own settings.

A config that can't be parsed or validated raises ``ConfigError`` naming the file, the
key path and the problem, and is never overwritten.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from moka_shell import config_merge
from moka_shell.config_oauth import OAuthSettings
from moka_shell.config_disk import Stamp, Unsettled, locked, read_settled, stamp_of, swap_in, write_temp
from moka_shell.errors import ConfigError, DataDirError
from moka_shell.paths import ensure_dir

ConsentPolicy = Literal["ask", "allow", "deny"]
HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http", "streamableHttp"}
DEMO_SERVER_NAME = "moka-demo"
PUBLISH_ATTEMPTS = 20  # a save that keeps meeting new writes gives up (the change is kept: core/config_watch.py)
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
    oauth: OAuthSettings | None = None  # a client the server's owner gave, or a grant without a person
    # Whether Moka goes by this server's tool annotations (readOnlyHint lets a call run unasked).
    # Unset: only Moka's own demo server's are trusted; a server a person adds, until they say so.
    trust_annotations: bool | None = Field(default=None, alias="trustAnnotations")

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

    @property
    def is_moka_demo(self) -> bool:
        """Is this Moka's own bundled demo server (``moka demo-server``, the first run's entry)?"""
        return self.transport_id == "stdio" and self.command == SELF_COMMAND and self.args[:1] == ["demo-server"]

    @property
    def annotations_trusted(self) -> bool:
        """Does Moka go by this server's tool annotations? The person's word, else only for Moka's own demo.

        The MCP spec says a client must treat annotations as untrusted unless they come from a
        trusted server: a server that says ``readOnlyHint: true`` of a tool that writes would
        otherwise run it with nobody asked (security finding G3).
        """
        return self.trust_annotations if self.trust_annotations is not None else self.is_moka_demo


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
    """How much of the inspector's log is kept on disk, and how many events in memory."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    # The JSONL log's total cap; the oldest files go first (inspector_log.py).
    max_log_mb: int = Field(default=200, alias="maxLogMB", ge=10, le=100_000)
    # The newest events the Inspector screen holds (the ring; its other cap is RING_BYTES of their
    # JSON). Moka's memory grows with the ring until it is full, then stays flat: a smaller ring keeps
    # a long-running Moka small, and older events stay on disk for `moka inspect`.
    ring_events: int = Field(default=100_000, alias="ringEvents", ge=1_000, le=1_000_000)


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
    so what a terminal, an editor or a second Moka wrote in the meantime is kept; and it never
    replaces a file it has not read (config_disk.swap_in), also when the other writer takes no lock.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._base: dict[str, Any] = {}  # the merge base: the file as this process last took it over
        self._disk: bytes | None = None  # the file's bytes as this process last read or wrote them
        self._disk_json: dict[str, Any] = {}  # ... and their content
        self._stamp: Stamp | None = None
        self._broken: tuple[Stamp | None, ConfigError] | None = None  # a file that stayed unreadable
        self.config = self._load()

    def _load(self) -> MokaConfig:
        with locked(self.path):
            try:
                present = self.path.exists()
            except OSError as exc:  # a folder on the way that may not be entered (R3.4)
                raise ConfigError(str(self.path), f"can't be read: {exc.strerror or exc}") from exc
            cfg = self._read() if present else self._create(default_config())
        self._base = cfg.to_json()
        return cfg

    def _create(self, cfg: MokaConfig) -> MokaConfig:
        data = cfg.to_json()
        encoded = _encode(data)
        stamp = self._write(encoded, None)
        if stamp is None:  # someone else made the file meanwhile: theirs it is
            return self._read()
        self._disk, self._disk_json, self._stamp = encoded, data, stamp
        return cfg

    def changed_on_disk(self) -> bool:
        """Whether someone else wrote the file since this process last read or wrote it (a cheap stat)."""
        return stamp_of(self.path) != self._stamp

    def reload(self) -> ConfigChange:
        """Take over what others wrote, keeping this process's unsaved changes on top."""
        with locked(self.path):
            if not self.changed_on_disk():
                return ConfigChange()
            self._read()
        disk = self._disk_json
        return self._take(self._merged(disk), base=disk)

    def save(self) -> ConfigChange:
        """Write this process's changes over the file's current content (re-read first)."""
        with locked(self.path):
            if self.changed_on_disk():
                self._reread()
            merged, after = self._publish()
        return self._take(merged, base=after)

    def _merged(self, disk: dict[str, Any]) -> MokaConfig:
        """The file's content ``disk`` with this process's changes since it last took the file over on top."""
        before = self.config.to_json()
        try:
            return MokaConfig.model_validate(config_merge.apply(disk, config_merge.diff(self._base, before)))
        except ValidationError:
            # Our change and theirs don't fit together (rare: both edited one entry's parts);
            # ours wins as a whole rather than writing a file that can't be loaded.
            return MokaConfig.model_validate(before)

    def _take(self, merged: MokaConfig, *, base: dict[str, Any]) -> ConfigChange:
        """Make ``merged`` the running config (in place); ``base`` is the file's content it came from."""
        before, after = self.config.to_json(), merged.to_json()
        self._base = base
        for name in MokaConfig.model_fields:
            setattr(self.config, name, getattr(merged, name))
        extra = self.config.__pydantic_extra__
        if extra is not None:
            extra.clear()
            extra.update(merged.__pydantic_extra__ or {})
        return ConfigChange(servers=config_merge.changed_servers(before, after),
                            keys={k for k in before.keys() | after.keys()
                                  if k != "mcpServers" and before.get(k) != after.get(k)})

    def _publish(self) -> tuple[MokaConfig, dict[str, Any]]:
        """Write our changes over the file, never replacing a version of it this process has not read."""
        for _ in range(PUBLISH_ATTEMPTS):
            merged = self._merged(self._disk_json)
            data = merged.to_json()
            encoded = _encode(data)
            stamp = self._write(encoded, self._disk)
            if stamp is not None:
                self._disk, self._disk_json, self._stamp = encoded, data, stamp
                return merged, data
            self._reread()  # someone wrote since we read: merge onto theirs and try again
        raise ConfigError(str(self.path), f"kept changing while Moka saved it ({PUBLISH_ATTEMPTS} tries)",
                          hint="Moka keeps its change and saves it again when the file is quiet")

    def _reread(self) -> None:
        if self.path.exists():
            self._read()
        else:  # deleted: written again from what this process last knew of it
            self._disk, self._stamp = None, None

    def _read(self) -> MokaConfig:
        """The file now, waiting out a write under way (sets what this process last read)."""
        stamp = stamp_of(self.path)
        if self._broken is not None and self._broken[0] == stamp:
            raise self._broken[1]  # still the file that did not load: no need to wait for it again
        try:
            cfg, data, stamp = read_settled(self.path, self._parse)
        except Unsettled as exc:
            assert isinstance(exc.error, ConfigError)
            self._broken = (exc.stamp, exc.error)
            raise exc.error from None
        except OSError as exc:
            raise ConfigError(str(self.path), f"can't be read: {exc.strerror or exc}") from exc
        self._broken = None
        self._disk, self._disk_json, self._stamp = data, cfg.to_json(), stamp
        return cfg

    def _parse(self, data: bytes) -> MokaConfig:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # finding R3.2: a Latin-1 "café" was a bare traceback
            problem = f"is not UTF-8 text (byte {exc.start} is 0x{exc.object[exc.start]:02x})"
            error = ConfigError(str(self.path), problem,
                                hint="save the file as UTF-8; Moka will not overwrite a config it can't read")
            raise Unsettled(error, final=exc.end < len(data)) from exc  # cut inside a character: still coming
        try:
            return parse_config(text, str(self.path))
        except ConfigError as exc:
            # JSON that stops short may be a write under way; a whole file that's wrong is final.
            raise Unsettled(exc, final=not isinstance(exc.__cause__, json.JSONDecodeError)) from exc

    def _write(self, data: bytes, expected: bytes | None) -> Stamp | None:
        """Swap ``data`` in if the file is still ``expected``; its stamp, or None if someone else wrote."""
        try:  # finding R3.4: a file where the folder should be, or a folder nobody may write, was a traceback
            ensure_dir(self.path.parent, "the config's folder")
            tmp, stamp = write_temp(self.path, data)
            return stamp if swap_in(tmp, self.path, expected=expected, ours=data) else None
        except DataDirError as exc:
            raise ConfigError(str(self.path), f"can't be written: {exc.problem}", hint=exc.hint) from exc
        except OSError as exc:  # a full disk: the file on disk is still the old one, whole
            raise ConfigError(str(self.path), f"can't be written: {exc.strerror or exc}",
                              hint=f"the file was left as it was; free some space, check that you may write in "
                                   f"{self.path.parent}, or pass another --config") from exc


def _encode(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode("utf-8")


def self_command() -> list[str]:
    """How to start this Moka again as a subprocess (frozen apps have no ``python -m``)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "moka_shell"]
