"""The JSON config file: Claude Desktop's ``mcpServers`` shape plus Moka's own settings.

A config that can't be parsed or validated raises ``ConfigError`` naming the file, the
key path and the problem, and is never overwritten.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from moka_shell.errors import ConfigError

ConsentPolicy = Literal["ask", "allow", "deny"]
HTTP_TYPES = {"http", "streamable-http", "streamablehttp", "streamable_http", "streamableHttp"}
DEMO_SERVER_NAME = "moka-demo"
# In a server's "command", this word means "this Moka" (the running executable), so the
# bundled demo server starts the same way from a venv, a wheel or a frozen app.
SELF_COMMAND = "moka"


class ServerConfig(BaseModel):
    """One entry of ``mcpServers`` (Claude Desktop / Cursor shape)."""

    model_config = ConfigDict(extra="allow")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    type: str | None = None
    disabled: bool = False
    timeout: float | None = Field(default=None, gt=0, description="connect deadline in seconds")

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
        data = self.model_dump(exclude_none=True, exclude_defaults=True)
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


class MokaConfig(BaseModel):
    """The whole config file."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    mcp_servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    agent: AgentSettings = Field(default_factory=AgentSettings)
    theme: ThemeSettings = Field(default_factory=ThemeSettings)
    consent: ConsentSettings = Field(default_factory=ConsentSettings)

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


class ConfigFile:
    """The config on disk: loaded once, saved atomically, created on first run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = self._load()

    def _load(self) -> MokaConfig:
        if not self.path.exists():
            cfg = default_config()
            self._write(cfg)
            return cfg
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(str(self.path), f"can't be read: {exc.strerror}") from exc
        return parse_config(text, str(self.path))

    def save(self) -> None:
        """Write the current config (only ever called after a successful load)."""
        self._write(self.config)

    def _write(self, cfg: MokaConfig) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(cfg.to_json(), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)


def self_command() -> list[str]:
    """How to start this Moka again as a subprocess (frozen apps have no ``python -m``)."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "moka_shell"]
