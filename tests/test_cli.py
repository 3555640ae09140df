"""The `moka` command as people and scripts use it: output, exit codes, and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from moka_shell.version import __version__
from moka_shell.core.mcp.catalog import cap_result, result_size
from moka_shell.testing.fake_openai import FakeOpenAIServer, ToolCall


def moka(tmp_path: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
            **(env or {})}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=full,
                          timeout=timeout, input=stdin)


def test_version_and_usage_errors(tmp_path: Path) -> None:
    """--version prints the version; a usage mistake exits 2 with a hint."""
    assert moka(tmp_path, "--version").stdout.strip() == f"moka {__version__}"  # the one place: version.py
    bad = moka(tmp_path, "tools", "--nope")
    assert bad.returncode == 2 and "unrecognized arguments" in bad.stderr and "--help" in bad.stderr


def test_servers_add_list_remove_import(tmp_path: Path) -> None:
    """servers add (stdio and HTTP), list, remove and import edit the config file."""
    assert moka(tmp_path, "servers", "add", "echo", "--env", "A=1", "--", "python3", "-m", "x").returncode == 0
    assert moka(tmp_path, "servers", "add", "remote", "--url", "http://127.0.0.1:9/mcp",
                "--header", "Authorization=Bearer t").returncode == 0
    listing = json.loads(moka(tmp_path, "servers", "list", "--json").stdout)
    assert {r["name"]: r["transport"] for r in listing} == {"moka-demo": "stdio", "echo": "stdio", "remote": "http"}
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["mcpServers"]["echo"] == {"command": "python3", "args": ["-m", "x"], "env": {"A": "1"}}
    assert moka(tmp_path, "servers", "remove", "echo").returncode == 0
    missing = moka(tmp_path, "servers", "remove", "echo")
    assert missing.returncode == 1 and "no server named 'echo'" in missing.stderr
    claude = tmp_path / "claude.json"
    claude.write_text(json.dumps({"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]},
                                                 "remote": {"url": "https://x.example/mcp"}}}))
    out = moka(tmp_path, "servers", "import", str(claude)).stdout
    assert "imported 1 server(s)" in out and "skipped 'remote': a server with this name already exists" in out
    assert moka(tmp_path, "servers", "add", "x").returncode == 2  # neither a command nor a URL


def test_tools_call_and_inspect(tmp_path: Path) -> None:
    """tools --json shows visibility and UI; call prints content and structuredContent; inspect shows mcp.rpc."""
    tools = json.loads(moka(tmp_path, "tools", "moka-demo", "--json").stdout)
    dice = next(t for t in tools if t["name"] == "roll_dice")
    assert dice["resourceUri"] == "ui://moka-demo/dice" and dice["visibility"] == ["model", "app"]
    call = moka(tmp_path, "call", "moka-demo", "roll_dice", '{"sides": 6, "count": 3}')
    assert call.returncode == 0
    rolls = json.loads(call.stdout.split("structuredContent: ", 1)[1])["rolls"]
    assert len(rolls) == 3 and all(1 <= r <= 6 for r in rolls)
    err = moka(tmp_path, "call", "moka-demo", "roll_dice", '{"sides": 1000}')
    assert err.returncode == 1 and "sides must be a whole number from 2 to 100" in err.stdout
    events = [json.loads(line) for line in moka(tmp_path, "inspect", "--json", "--channel", "mcp.rpc").stdout.splitlines()]
    assert events and all(e["channel"] == "mcp.rpc" for e in events)
    assert any(e.get("method") == "tools/call" and e["direction"] == "out" for e in events)
    # tools and call never show a view: no app's HTML is read ahead for one (docs/performance.md §19).
    assert not [e for e in events if e.get("method") == "resources/read"], "a one-shot command read UI resources"


def test_broken_config_is_reported_and_kept(tmp_path: Path) -> None:
    """A broken config names file, key path and problem; exit 1; the file is untouched."""
    (tmp_path / "config.json").write_text('{"mcpServers": {"a": {"args": []}}}')
    proc = moka(tmp_path, "tools")
    assert proc.returncode == 1
    assert str(tmp_path / "config.json") in proc.stderr and "mcpServers.a" in proc.stderr
    assert "needs a 'command'" in proc.stderr
    assert (tmp_path / "config.json").read_text() == '{"mcpServers": {"a": {"args": []}}}'


def test_chat_one_turn_headless(tmp_path: Path) -> None:
    """`moka chat` runs one turn against the configured backend and prints the transcript."""
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("roll_dice", {"count": 2}, "Done rolling.")
        (tmp_path / "config.json").write_text(json.dumps({
            "mcpServers": {"moka-demo": {"command": "moka", "args": ["demo-server"]}},
            "agent": {"backend": "ollama", "model": "m", "baseUrls": {"ollama": srv.base_url}}}))
        proc = moka(tmp_path, "chat", "roll two dice")
        as_json = json.loads(moka(tmp_path, "chat", "--json", "again please").stdout)
    assert proc.returncode == 0, proc.stderr
    assert "you: roll two dice" in proc.stdout and 'tool call: moka-demo/roll_dice {"count": 2} [done]' in proc.stdout
    assert "result: Rolled 2d6" in proc.stdout and "assistant: Done rolling." in proc.stdout
    assert as_json["messages"][0]["content"] == "again please"
    no_backend = moka(tmp_path, "chat", "--backend", "nope", "hi")
    assert no_backend.returncode == 2 and "unknown backend 'nope'" in no_backend.stderr


def test_chat_never_waits_for_a_person(tmp_path: Path) -> None:
    """`moka chat`: a call that needs approval, and sampling consent, fail at once with what to change."""
    servers = Path(__file__).parent / "servers"
    marker = tmp_path / "deleted.txt"
    with FakeOpenAIServer() as srv:
        (tmp_path / "config.json").write_text(json.dumps({
            "mcpServers": {"b": {"command": sys.executable, "args": [str(servers / "approval_server.py"), str(marker)]},
                           "fault": {"command": sys.executable, "args": [str(servers / "fault_server.py")]}},
            "agent": {"backend": "ollama", "model": "m", "baseUrls": {"ollama": srv.base_url}}}))
        srv.tool_then_reply("delete_all", {}, "I was not allowed.")
        refused = moka(tmp_path, "chat", "wipe it", timeout=60)
        srv.tool_then_reply("ask_model", {"question": "why?"}, "No model for you.")
        sampled = moka(tmp_path, "chat", "--approve", "all", "ask it", timeout=60)
        srv.tool_then_reply("delete_all", {"reason": "asked"}, "Deleted.")
        allowed = moka(tmp_path, "chat", "--approve", "all", "wipe it", timeout=60)
    assert refused.returncode == 1 and "tool call: b/delete_all {} [denied]" in refused.stdout
    assert "--approve all" in refused.stdout and "assistant: I was not allowed." in refused.stdout
    assert sampled.returncode == 1 and "asked to use the model (sampling)" in sampled.stdout
    assert '"sampling": "allow"' in sampled.stdout
    assert allowed.returncode == 0 and "[done]" in allowed.stdout and marker.read_text() == "deleted: asked"
    bad = moka(tmp_path, "chat", "--approve", "maybe", "hi")
    assert bad.returncode == 2 and "--approve" in bad.stderr


def test_no_display_falls_back_to_browser_mode_with_a_token(tmp_path: Path) -> None:
    """`moka` with no display says so in one line, serves the UI, and the API refuses a wrong token."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update({"MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")})
    proc = subprocess.Popen([sys.executable, "-m", "moka_shell"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        second = proc.stdout.readline()
        assert "no display found" in first and "browser mode" in first
        url = second.split("at ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:") and "token=" in url
        import urllib.error
        import urllib.request

        base, token = url.split("/?token=")
        good = urllib.request.Request(base + "/api/rpc", data=b'{"id":1,"method":"app.info"}',
                                      headers={"X-Moka-Token": token})
        info = json.loads(urllib.request.urlopen(good, timeout=10).read())
        assert info["result"]["mode"] == "browser"
        bad = urllib.request.Request(base + "/api/rpc", data=b'{"id":1,"method":"app.info"}',
                                     headers={"X-Moka-Token": "wrong"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(bad, timeout=10)
        assert refused.value.code == 403
    finally:
        proc.terminate()
        proc.wait(20)


def test_tool_output_is_capped_before_it_goes_anywhere() -> None:
    """A huge result is cut to the limit, saying what was cut; small ones pass untouched."""
    small = {"content": [{"type": "text", "text": "hi"}]}
    assert cap_result(small, 1000) is small
    huge: dict[str, Any] = {"content": [{"type": "text", "text": "x" * 50_000},
                                        {"type": "image", "data": "A" * 50_000, "mimeType": "image/png"}],
                            "structuredContent": {"blob": "y" * 40_000}}
    capped = cap_result(huge, 20_000)
    assert result_size(capped) <= 20_000
    assert "structuredContent" not in capped and capped["content"][1]["type"] == "text"
    assert capped["_meta"]["moka/truncated"]["originalBytes"] > 100_000


def test_a_one_shot_command_ends_at_once_with_all_it_wrote(tmp_path: Path) -> None:
    """`moka inspect`, `tools`, `call`, `check` end without the interpreter's teardown (cli.main.entry):
    everything they wrote still arrives, through a pipe, past any buffer, with its exit code."""
    folder = tmp_path / "data" / "inspector"
    folder.mkdir(parents=True)
    with (folder / "events-2026-01-01.jsonl").open("w", encoding="utf-8") as fh:
        for seq in range(1, 3001):  # ~1 MB of output: many times stdout's buffer and a pipe's
            fh.write(json.dumps({"seq": seq, "time": 1.0, "channel": "c", "method": "m", "pad": "p" * 300}) + "\n")
    done = moka(tmp_path, "inspect", "--json", "--limit", "3000")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["seq"] for line in done.stdout.splitlines()] == list(range(1, 3001))
    # A Python thread left running (as a library's might be) is not waited for: the command is done.
    script = ("import threading, time, moka_shell.cli.main as m; "
              "threading.Thread(target=time.sleep, args=(600,)).start(); m.entry()")
    ended = subprocess.run([sys.executable, "-c", script, "inspect", "--limit", "1"], capture_output=True, text=True,
                           timeout=120, env={**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"),
                                             "MOKA_DATA_DIR": str(tmp_path / "data")})
    assert ended.returncode == 0 and ended.stdout.count("\n") == 1, ended.stdout + ended.stderr
