"""Reading other clients' MCP config files: Claude Desktop, Cursor and VS Code."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from moka_shell.config import ServerConfig
from moka_shell.errors import ConfigError

# VS Code lets entries refer to prompted inputs and env: ${input:token}, ${env:HOME}.
_VSCODE_INPUT = re.compile(r"\$\{input:[^}]+\}")


@dataclass
class ImportResult:
    """What an import found: servers to add, and entries skipped with the reason."""

    source_format: str
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _strip_jsonc(text: str) -> str:
    """Drop // and /* */ comments and trailing commas (VS Code files are JSONC)."""
    out: list[str] = []
    i, n, in_str = 0, len(text), False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            out.append(c)
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _convert_vscode(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    kind = entry.get("type")
    out: dict[str, Any] = {k: v for k, v in entry.items() if k in ("command", "args", "env", "cwd", "url", "headers")}
    if kind in ("http", "sse"):
        out["type"] = "http" if kind == "http" else "sse"
    blob = json.dumps(out)
    if _VSCODE_INPUT.search(blob):
        raise ValueError("uses VS Code ${input:...} prompts; add it by hand with the value filled in")
    if isinstance(out.get("cwd"), str) and "${workspaceFolder}" in out["cwd"]:
        raise ValueError("uses ${workspaceFolder}, which only VS Code knows; add it by hand")
    return out


def import_config_text(text: str, source: str) -> ImportResult:
    """Read Claude/Cursor (``mcpServers``) or VS Code (``servers``) config text."""
    try:
        raw = json.loads(_strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ConfigError(source, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(raw, dict):
        raise ConfigError(source, "the top level must be a JSON object")
    if isinstance(raw.get("mcpServers"), dict):
        fmt, entries = "claude/cursor", raw["mcpServers"]
    elif isinstance(raw.get("servers"), dict):
        fmt, entries = "vscode", raw["servers"]
    elif isinstance(raw.get("mcp"), dict) and isinstance(raw["mcp"].get("servers"), dict):
        fmt, entries = "vscode", raw["mcp"]["servers"]  # servers inside VS Code's settings.json
    else:
        raise ConfigError(
            source, "found neither 'mcpServers' (Claude Desktop, Cursor) nor 'servers' (VS Code)",
            hint="pass a claude_desktop_config.json, ~/.cursor/mcp.json or .vscode/mcp.json file",
        )
    result = ImportResult(fmt)
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            result.skipped.append((name, "entry is not an object"))
            continue
        try:
            data = _convert_vscode(name, entry) if fmt == "vscode" else entry
            result.servers[name] = ServerConfig.model_validate(data)
        except ValueError as exc:  # ValidationError is a ValueError
            reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
            result.skipped.append((name, reason.removeprefix("Value error, ")))
    return result


def import_config_file(path: Path) -> ImportResult:
    """Read another client's config file from disk."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), f"can't be read: {exc.strerror}") from exc
    return import_config_text(text, str(path))
