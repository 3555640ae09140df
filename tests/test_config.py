"""Config parsing, validation errors, first-run defaults, and importing other clients' files."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from moka_shell.config import ConfigFile, ServerConfig, parse_config
from moka_shell.paths import Paths
from moka_shell.config_import import import_config_file, import_config_text
from moka_shell.errors import ConfigError
from moka_shell.testing import EventRecorder, start_app

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


# ---- sharing the file with other writers (ux.md problem 3, reliability.md R2.3/R2.4) --------

def moka_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real `moka` CLI in a process of its own, on this test's config file."""
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=env,
                          timeout=120)


def test_a_save_keeps_what_someone_else_wrote(tmp_path: Path) -> None:
    """A hand edit made while the file is open survives this process's next save (a theme change)."""
    cfg_file = ConfigFile(tmp_path / "config.json")
    edited = json.loads(cfg_file.path.read_text())
    edited["mcpServers"]["hand-added"] = {"command": "node", "args": ["x.js"]}
    edited["agent"]["baseUrls"] = {"openai": "http://127.0.0.1:9/v1"}
    cfg_file.path.write_text(json.dumps(edited))
    cfg_file.config.theme.mode = "dark"
    change = cfg_file.save()
    on_disk = json.loads(cfg_file.path.read_text())
    assert on_disk["theme"]["mode"] == "dark"
    assert on_disk["mcpServers"]["hand-added"] == {"command": "node", "args": ["x.js"]}
    assert on_disk["agent"]["baseUrls"] == {"openai": "http://127.0.0.1:9/v1"}
    assert change.servers == {"hand-added"} and "agent" in change.keys
    assert "hand-added" in cfg_file.config.mcp_servers  # the running config has it too


def test_a_save_applies_only_this_process_s_changes(tmp_path: Path) -> None:
    """Removing one server here and another there, both removals hold; our removal does not resurrect theirs."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {n: {"command": "node"} for n in ("a", "b", "c")}}))
    ours = ConfigFile(path)
    assert moka_cli(tmp_path, "servers", "remove", "b").returncode == 0
    del ours.config.mcp_servers["a"]
    ours.save()
    assert set(json.loads(path.read_text())["mcpServers"]) == {"c"}


def test_reload_picks_up_changes_and_keeps_unsaved_ones(tmp_path: Path) -> None:
    """A cheap stat notices another writer; the config object is updated in place."""
    cfg_file = ConfigFile(tmp_path / "config.json")
    config = cfg_file.config
    assert not cfg_file.changed_on_disk()
    cfg_file.config.consent.message = "ask"  # changed here, not saved yet
    assert moka_cli(tmp_path, "servers", "add", "cli_added", "--", "node", "y.js").returncode == 0
    assert cfg_file.changed_on_disk()
    change = cfg_file.reload()
    assert change.servers == {"cli_added"} and cfg_file.config is config
    assert config.mcp_servers["cli_added"].command == "node" and config.consent.message == "ask"
    assert not cfg_file.changed_on_disk() and not cfg_file.reload()
    cfg_file.save()
    on_disk = json.loads(cfg_file.path.read_text())
    assert "cli_added" in on_disk["mcpServers"] and on_disk["consent"]["message"] == "ask"


def test_a_broken_file_on_disk_is_neither_loaded_nor_overwritten(tmp_path: Path) -> None:
    """Half-way through someone's edit: reload and save refuse, the file stays as they left it."""
    cfg_file = ConfigFile(tmp_path / "config.json")
    cfg_file.path.write_text('{"mcpServers": {')
    with pytest.raises(ConfigError, match="not valid JSON"):
        cfg_file.reload()
    cfg_file.config.theme.mode = "dark"
    with pytest.raises(ConfigError):
        cfg_file.save()
    assert cfg_file.path.read_text() == '{"mcpServers": {'


WRITER = """
import sys
from moka_shell.config import ConfigFile, ServerConfig
cfg_file = ConfigFile(__import__("pathlib").Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    cfg_file.config.mcp_servers[f"{sys.argv[2]}{i}"] = ServerConfig(command="node")
    cfg_file.save()
"""


def test_two_processes_saving_at_once_lose_nothing(tmp_path: Path) -> None:
    """Two writers, 60 saves each at the same time: every server of both is in the file, no save failed."""
    path = tmp_path / "config.json"
    ConfigFile(path)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "60"], stderr=subprocess.PIPE,
                              text=True) for tag in ("a", "b")]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    names = set(json.loads(path.read_text())["mcpServers"])
    assert {f"{t}{i}" for t in "ab" for i in range(60)} <= names
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.anyio
async def test_servers_added_in_a_terminal_reach_the_running_app(tmp_path: Path) -> None:
    """`moka servers add` while Moka runs: the app connects it, tells the UI, and a UI save keeps it."""
    paths = Paths(tmp_path / "config.json", tmp_path / "data")
    paths.config_file.write_text(json.dumps({"mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}}}))
    events = EventRecorder()
    app = await start_app(paths, events=events, store=False, endpoints=None, ready_within=None)
    try:
        assert app.config_watch is not None
        app.config_watch.interval = 0.2  # the 1 s default only makes the test slow
        proc = await asyncio.to_thread(moka_cli, tmp_path, "servers", "add", "cli_added", "--", "moka", "demo-server")
        assert proc.returncode == 0, proc.stderr
        for _ in range(200):
            if "cli_added" in app.servers.connections:
                break
            await asyncio.sleep(0.05)
        await app.servers.wait_ready(["cli_added"], timeout=30)
        assert app.servers.get("cli_added").status == "ready"
        assert any(n == "servers.changed" and any(s["name"] == "cli_added" for s in d) for n, d in events)
        app.appearance.set(mode="dark")  # a UI save
        on_disk = json.loads(paths.config_file.read_text())
        assert "cli_added" in on_disk["mcpServers"] and on_disk["theme"]["mode"] == "dark"
        # Removed in the terminal: the app stops it.
        assert (await asyncio.to_thread(moka_cli, tmp_path, "servers", "remove", "cli_added")).returncode == 0
        for _ in range(200):
            if "cli_added" not in app.servers.connections:
                break
            await asyncio.sleep(0.05)
        assert "cli_added" not in app.servers.connections
    finally:
        await app.stop()


def test_cli_add_refuses_a_taken_name_unless_replace(tmp_path: Path) -> None:
    """A duplicate name is a clear error that leaves the file alone; --replace replaces it."""
    assert moka_cli(tmp_path, "servers", "add", "dup", "--", "node", "a.js").returncode == 0
    before = (tmp_path / "config.json").read_text()
    again = moka_cli(tmp_path, "servers", "add", "dup", "--", "node", "b.js")
    assert again.returncode == 1 and "a server named 'dup' already exists" in again.stderr
    assert "--replace" in again.stderr and (tmp_path / "config.json").read_text() == before
    replaced = moka_cli(tmp_path, "servers", "add", "dup", "--replace", "--", "node", "b.js")
    assert replaced.returncode == 0 and "replaced 'dup'" in replaced.stdout
    assert json.loads((tmp_path / "config.json").read_text())["mcpServers"]["dup"]["args"] == ["b.js"]


def test_a_config_that_is_not_utf8_or_nested_too_deep_is_a_clear_error(tmp_path: Path) -> None:
    """Findings R3.2 and R3.3: both were bare tracebacks that named no file; the file is left alone."""
    p = tmp_path / "config.json"
    latin1 = '{"mcpServers": {"caf\xe9": {}}}'.encode("latin-1")
    p.write_bytes(latin1)
    with pytest.raises(ConfigError) as err:
        ConfigFile(p)
    assert str(p) in str(err.value) and "not UTF-8" in str(err.value) and "0xe9" in str(err.value)
    assert p.read_bytes() == latin1
    p.write_text("[" * 200_000)
    with pytest.raises(ConfigError) as err:
        ConfigFile(p)
    assert "nested too deep" in str(err.value)
    assert p.read_text() == "[" * 200_000


# ---- writers that take no lock (a person's editor): finding N7 -------------------------------------


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "compare-then-replace"])
def test_a_write_never_replaces_a_file_it_has_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       exchange: bool) -> None:
    """swap_in leaves a file written after ours was merged (in place or renamed over), and puts ours in only
    over the file it read; the system's exchange and the compare-then-replace fallback alike."""
    from moka_shell import config_disk

    if not exchange:
        monkeypatch.setattr(config_disk, "_exchange_works", False)  # as on a system without renameat2
    path = tmp_path / "config.json"
    path.write_bytes(b'{"v": "A"}')
    read = path.read_bytes()
    (tmp_path / "editor.tmp").write_bytes(b'{"v": "B"}')  # an editor saves after we read: rename style
    os.replace(tmp_path / "editor.tmp", path)
    tmp, _ = config_disk.write_temp(path, b'{"v": "ours"}')
    assert not config_disk.swap_in(tmp, path, expected=read, ours=b'{"v": "ours"}')
    assert path.read_bytes() == b'{"v": "B"}'
    with open(path, "w", encoding="utf-8") as fh:  # ... and in place
        fh.write('{"v": "C"}')
    tmp, _ = config_disk.write_temp(path, b'{"v": "ours"}')
    assert not config_disk.swap_in(tmp, path, expected=b'{"v": "B"}', ours=b'{"v": "ours"}')
    assert path.read_bytes() == b'{"v": "C"}'
    tmp, _ = config_disk.write_temp(path, b'{"v": "ours"}')
    assert config_disk.swap_in(tmp, path, expected=b'{"v": "C"}', ours=b'{"v": "ours"}')
    assert path.read_bytes() == b'{"v": "ours"}'
    tmp, _ = config_disk.write_temp(path, b"{}")
    assert not config_disk.swap_in(tmp, path, expected=None, ours=b"{}")  # "create" finds a file: it stays
    assert path.read_bytes() == b'{"v": "ours"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]  # no temp file left behind


def test_a_save_keeps_a_hand_edit_that_a_stat_cannot_see(tmp_path: Path) -> None:
    """An in-place edit of the same size within one timestamp tick looks unchanged to a stat; the save
    still keeps it (before, it wrote its own copy over the edit: finding N7)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"mcpServers": {"one": {"command": "node"}}}))
    cfg_file = ConfigFile(path)
    st = path.stat()
    with open(path, "w", encoding="utf-8") as fh:  # the person renames the server in their editor
        fh.write(json.dumps({"mcpServers": {"two": {"command": "node"}}}))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # a coarse clock: the same mtime
    assert path.stat().st_ino == st.st_ino and path.stat().st_size == st.st_size and not cfg_file.changed_on_disk()
    cfg_file.config.theme.mode = "dark"
    cfg_file.save()
    on_disk = json.loads(path.read_text())
    assert set(on_disk["mcpServers"]) == {"two"} and on_disk["theme"]["mode"] == "dark"
    assert set(cfg_file.config.mcp_servers) == {"two"}


def test_a_file_left_broken_is_refused_and_read_once_repaired(tmp_path: Path) -> None:
    """A file that does not parse is read again for a moment (a write may be under way), then refused,
    also when asked again; once repaired it is read."""
    cfg_file = ConfigFile(tmp_path / "config.json")
    cfg_file.path.write_text('{"theme": {"mode": ')
    for _ in range(2):
        with pytest.raises(ConfigError, match="not valid JSON"):
            cfg_file.reload()
    cfg_file.path.write_text(json.dumps({"theme": {"mode": "dark"}}))
    assert "theme" in cfg_file.reload().keys and cfg_file.config.theme.mode == "dark"
