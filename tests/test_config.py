"""Config parsing, validation errors, first-run defaults, and importing other clients' files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from moka_shell.config import ConfigFile, ServerConfig, parse_config
from moka_shell.config_import import import_config_file, import_config_text
from moka_shell.errors import ConfigError

CLAUDE = {
    "mcpServers": {
        "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
        "weather": {"command": "uv", "args": ["run", "weather.py"], "env": {"API_KEY": "x"}, "cwd": "/srv/weather"},
        "remote": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer abc"}},
    }
}

CURSOR = {"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse", "type": "http"},
                         "local": {"command": "node", "args": ["server.js"], "disabled": True}}}

VSCODE = """{
  // VS Code's .vscode/mcp.json is JSONC
  "inputs": [{"type": "promptString", "id": "token", "password": true}],
  "servers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"},
    "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch"],},
    "secret": {"type": "stdio", "command": "srv", "env": {"TOKEN": "${input:token}"}}
  }
}"""


def test_first_run_creates_the_demo_server(tmp_path: Path) -> None:
    """A missing config file is created with the bundled demo server."""
    cfg = ConfigFile(tmp_path / "sub" / "config.json")
    assert list(cfg.config.mcp_servers) == ["moka-demo"]
    on_disk = json.loads((tmp_path / "sub" / "config.json").read_text())
    assert on_disk["mcpServers"]["moka-demo"] == {"command": "moka", "args": ["demo-server"]}


def test_claude_shape_round_trips(tmp_path: Path) -> None:
    """Every Claude Desktop field survives a load and a save."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CLAUDE))
    cfg = ConfigFile(path)
    assert cfg.config.mcp_servers["weather"].cwd == "/srv/weather"
    assert cfg.config.mcp_servers["remote"].transport_id == "http"
    assert cfg.config.mcp_servers["filesystem"].transport_id == "stdio"
    cfg.save()
    again = json.loads(path.read_text())
    assert again["mcpServers"] == CLAUDE["mcpServers"]


@pytest.mark.parametrize(("text", "key_path", "words"), [
    ("{not json", None, "not valid JSON"),
    ("[1, 2]", None, "top level must be a JSON object"),
    ('{"mcpServers": {"a": {"args": ["x"]}}}', "mcpServers.a", "needs a 'command'"),
    ('{"mcpServers": {"a": {"command": "x", "args": "notalist"}}}', "mcpServers.a.args", "valid list"),
    ('{"mcpServers": {"a": {"url": "ftp://x"}}}', "mcpServers.a", "must start with http"),
    ('{"mcpServers": {"a": {"command": "x", "timeout": -1}}}', "mcpServers.a.timeout", "greater than 0"),
    ('{"theme": {"mode": "sepia"}}', "theme.mode", "light"),
])
def test_bad_config_names_file_key_and_problem(text: str, key_path: str | None, words: str) -> None:
    """A broken config gives a message with the file, the key path and the problem."""
    with pytest.raises(ConfigError) as info:
        parse_config(text, "/etc/moka.json")
    message = str(info.value)
    assert "/etc/moka.json" in message and words in message
    if key_path:
        assert info.value.key_path == key_path


def test_broken_config_is_never_overwritten(tmp_path: Path) -> None:
    """Loading a broken file raises and leaves the file exactly as it was."""
    path = tmp_path / "config.json"
    path.write_text('{"mcpServers": {oops}')
    with pytest.raises(ConfigError):
        ConfigFile(path)
    assert path.read_text() == '{"mcpServers": {oops}'


def test_import_claude_and_cursor() -> None:
    """Claude Desktop and Cursor files share the mcpServers shape."""
    claude = import_config_text(json.dumps(CLAUDE), "claude_desktop_config.json")
    assert claude.source_format == "claude/cursor"
    assert set(claude.servers) == {"filesystem", "weather", "remote"}
    assert claude.servers["remote"].headers == {"Authorization": "Bearer abc"}
    cursor = import_config_text(json.dumps(CURSOR), "mcp.json")
    assert cursor.servers["linear"].transport_id == "http"
    assert cursor.servers["local"].disabled is True


def test_import_vscode_jsonc_and_inputs(tmp_path: Path) -> None:
    """VS Code's JSONC 'servers' file imports; entries needing ${input:...} are skipped with a reason."""
    path = tmp_path / "mcp.json"
    path.write_text(VSCODE)
    result = import_config_file(path)
    assert result.source_format == "vscode"
    assert set(result.servers) == {"github", "fetch"}
    assert result.servers["github"].url == "https://api.githubcopilot.com/mcp/"
    assert result.servers["fetch"].args == ["mcp-server-fetch"]
    assert result.skipped and result.skipped[0][0] == "secret" and "${input" in result.skipped[0][1]


def test_import_unknown_shape_says_what_it_wanted() -> None:
    """A file with neither key says which keys it looked for."""
    with pytest.raises(ConfigError, match="mcpServers"):
        import_config_text('{"servers_list": []}', "x.json")


def test_server_config_type_names_plugin_transport() -> None:
    """`type` names a plugin transport; HTTP spellings all mean the built-in http transport."""
    assert ServerConfig(type="websocket", command="x").transport_id == "websocket"
    for spelling in ("http", "streamable-http", "streamableHttp"):
        assert ServerConfig(type=spelling, url="http://127.0.0.1:1/mcp").transport_id == "http"
