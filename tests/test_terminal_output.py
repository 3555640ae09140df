"""No raw control character from a server, a view or a recording reaches the terminal (finding G5, rows 25, 31).

Every command runs as a subprocess, as a person or CI runs it, against tests/servers/terminal_server.py,
whose stderr, tool names, description, results and view error are ANSI/OSC/BEL/bidi paint. Before,
`moka check` and `moka replay --check` printed a green "ALL CHECKS PASSED" on a cleared screen and set
the terminal's title, and `moka call` passed a result's escapes through.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall
from support import SERVERS

RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
SERVER = {"command": sys.executable, "args": [str(SERVERS / "terminal_server.py")]}
PAINT_TOOL = "paint\x1b[31m"
HAS_CHROMIUM = bool(os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium"))


def moka(tmp_path: Path, *args: str, config: dict[str, Any] | None = None,
         timeout: float = 240) -> subprocess.CompletedProcess[str]:
    (tmp_path / "config.json").write_text(json.dumps(config or {"mcpServers": {"t": SERVER}}))
    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    return subprocess.run([sys.executable, "-m", "moka_shell", *args], capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=tmp_path)


def assert_inert(done: subprocess.CompletedProcess[str], *, shows: str = "\\x1b[") -> None:
    """Nothing in stdout or stderr a terminal would act on, and the paint still visible as text."""
    for name, text in (("stdout", done.stdout), ("stderr", done.stderr)):
        raw = RAW_CONTROL.search(text)
        assert raw is None, f"raw {raw.group()!r} in {name}: {text[max(0, raw.start() - 80):raw.end() + 80]!r}"
    assert shows in done.stdout + done.stderr, done.stdout + done.stderr


def test_tools_call_and_inspect_print_the_servers_words_inert(tmp_path: Path) -> None:
    """moka tools, moka call (text and --json) and moka inspect: the paint is shown, never acted on."""
    tools = moka(tmp_path, "tools", "t")
    assert tools.returncode == 0, tools.stderr
    assert_inert(tools)
    assert "t/paint\\x1b[31m  [model,app]" in tools.stdout
    called = moka(tmp_path, "call", "t", PAINT_TOOL, "{}")
    assert called.returncode == 0, called.stderr
    assert_inert(called)
    assert "\\x1b]0;pwned\\x07" in called.stdout and "\\u202edesrever" in called.stdout
    assert_inert(moka(tmp_path, "call", "t", PAINT_TOOL, "{}", "--json"), shows="\\u001b[")
    inspected = moka(tmp_path, "inspect", "--limit", "50")
    assert inspected.returncode == 0
    assert_inert(inspected, shows="\\u001b")
    listed = moka(tmp_path, "servers", "list", "--check")
    assert_inert(listed, shows="t ")


def test_chat_prints_a_models_and_a_tools_paint_inert(tmp_path: Path) -> None:
    """moka chat: the model's reply and the tool's result, both painted, are inert in the transcript."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("app", {})], [Text("Done \x1b[2J\x1b]0;pwned\x07")]])
        done = moka(tmp_path, "chat", "--approve", "all", "paint it", config={
            "mcpServers": {"t": SERVER},
            "agent": {"backend": "ollama", "model": "m", "baseUrls": {"ollama": srv.base_url}}}, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_inert(done)
    assert "assistant: Done \\x1b[2J\\x1b]0;pwned\\x07" in done.stdout


@pytest.mark.skipif(not HAS_CHROMIUM, reason="chromium is not installed")
def test_check_and_replay_print_a_views_paint_inert(tmp_path: Path) -> None:
    """The review's rows 25 and 31: a view's thrown ANSI error, and a recording's painted tool name."""
    checked = moka(tmp_path, "check", "t", "--tool", "app", "--record", "r.json")
    assert checked.returncode == 1
    assert_inert(checked)
    assert "ALL CHECKS PASSED\\x1b[0m" in checked.stdout and "FAILED:" in checked.stdout
    # The fake "OK" after a line break in the error stays on the error's own line.
    assert not any(line.startswith("OK: faked") for line in checked.stdout.splitlines())
    rec = json.loads((tmp_path / "r.json").read_text())
    rec["tool"]["name"] = "app\x1b[31m\x1b]0;pwned\x07"
    (tmp_path / "hostile.json").write_text(json.dumps(rec))
    replayed = moka(tmp_path, "replay", "hostile.json", "--check", config={"mcpServers": {}})
    assert replayed.returncode == 1
    assert_inert(replayed)
    assert "(app\\x1b[31m\\x1b]0;pwned\\x07;" in replayed.stdout
    assert replayed.stdout.rstrip().splitlines()[-1].startswith("FAILED")
