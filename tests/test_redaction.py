"""Secrets stay secret (finding S9): known values are masked before the inspector, the database, the UI, the logs.

Unit tests for core/redact.py, then the two leaks of the finding for real: a stdio server that
prints its env secret to stderr, and a provider (the fake OpenAI server) whose 401 quotes the key.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from pathlib import Path

import pytest

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.mcp.stderr import pump
from moka_shell.core.redact import MASK, SECRETS, Redactor, config_secrets, env_secrets, mask_logs
from moka_shell.inspector import Inspector
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app
from moka_shell.testing.fake_openai import Error, FakeOpenAIServer
from support import SERVERS, until

PAT = "ghp_" + "S3cretPersonalAccessToken1234"
HEADER = "hdr-" + "9f8e7d6c5b4a39281716"
KEY = "sk-TEST-" + "abcdefghijklmnop0123456789"


def test_added_values_are_masked_in_text_and_json() -> None:
    r = Redactor(with_env=False)
    r.add(PAT, "short", None)
    assert r.mask(f"token is {PAT}.") == f"token is {MASK}."
    assert r.mask("short stays short") == "short stays short"  # under MIN_LENGTH: ordinary text
    quoted = 'ab"c\\d-secret-value'
    r.add(quoted)
    assert quoted not in json.loads(r.mask(json.dumps({"x": f"see {quoted}"})))["x"]
    assert r.scrub({"a": [PAT, {"k": f"x{PAT}y"}], PAT: 1}) == {"a": [MASK, {"k": f"x{MASK}y"}], MASK: 1}


def test_environment_and_config_values_are_known() -> None:
    assert env_secrets({"OPENAI_API_KEY": KEY, "HOME": "/root/somewhere", "GH_TOKEN": PAT,
                        "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock", "TOKEN_FILE": "/run/secrets/token"}) == [KEY, PAT]
    config = MokaConfig(mcpServers={"s": ServerConfig(command="x", env={"GITHUB_PAT": PAT},
                                                      headers={"Authorization": f"Bearer {HEADER}"})})
    r = Redactor(with_env=False)
    r.watch(lambda: config_secrets(config))
    assert set(config_secrets(config)) == {PAT, f"Bearer {HEADER}"}
    assert r.mask(f"{PAT} and {HEADER} and Bearer {HEADER}") == f"{MASK} and {MASK} and {MASK}"


def test_a_failing_provider_does_not_stop_masking() -> None:
    r = Redactor(with_env=False)
    r.add(PAT)

    def broken() -> list[str]:
        raise RuntimeError("config gone")

    r.watch(broken)
    assert r.mask(PAT) == MASK


def test_the_inspector_stores_masked_events(tmp_path: Path) -> None:
    """In the ring and in the JSONL on disk."""
    SECRETS.add(PAT)
    insp = Inspector(tmp_path / "insp")
    insp.record("server", {"event": "stderr", "line": f"PAT={PAT}"}, server="s")
    insp.close()
    assert PAT not in json.dumps(insp.query())
    assert MASK in json.dumps(insp.query())
    on_disk = "".join(p.read_text() for p in (tmp_path / "insp").rglob("*.jsonl"))
    assert on_disk and PAT not in on_disk


def test_stderr_lines_are_masked_as_they_are_read() -> None:
    SECRETS.add(PAT)
    read_fd, write_fd = os.pipe()
    lines: list[str] = []
    reader = threading.Thread(target=pump, args=(read_fd, lines.append))
    reader.start()
    os.write(write_fd, f"env GITHUB_PAT={PAT}\nok\n".encode())
    os.close(write_fd)
    reader.join(10)
    assert lines == [f"env GITHUB_PAT={MASK}", "ok"]


def test_logs_are_masked(caplog: pytest.LogCaptureFixture) -> None:
    SECRETS.add(PAT)
    logging.getLogger().addHandler(caplog.handler)
    mask_logs()
    logging.getLogger("moka.test").warning("server said %s", PAT)
    assert PAT not in caplog.text and MASK in caplog.text


@pytest.mark.anyio
async def test_a_server_printing_its_env_leaks_nothing(paths: Paths) -> None:
    """S9: stderr echoing a configured env value and a header value: not in the inspector, nor servers.list."""
    cfg = {"mcpServers": {"leaky": {"command": sys.executable, "args": [str(SERVERS / "hostile_env_server.py")],
                                    "env": {"GITHUB_PAT": PAT, "ECHO_HEADER": HEADER}},
                          "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Api-Key": HEADER}}}}
    paths.config_file.write_text(json.dumps(cfg))
    app = await start_app(paths, store=False)
    try:
        conn = app.servers.connections["leaky"]
        await until(lambda: any("GITHUB_PAT" in line for line in conn.stderr), "the server's env line on its stderr")
        # The stderr servers.list shows (the config's own env is there for the Edit dialog, by design).
        listed = json.dumps(app.servers.connections["leaky"].info().get("stderr"))
        events = json.dumps(app.inspector.query(limit=100000))
    finally:
        await app.stop()
    assert "GITHUB_PAT=" + MASK in listed
    assert PAT not in listed and HEADER not in listed
    assert PAT not in events and HEADER not in events and "GITHUB_PAT=" in events


@pytest.mark.anyio
async def test_a_provider_echoing_the_key_leaks_nothing(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """S9: a 401 that quotes the key: not in SQLite, the inspector or the chat.error event."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Error("auth", message=f"Incorrect API key provided: {KEY}")]])
        config = MokaConfig(mcpServers={})
        config.agent.backend = "openai"
        config.agent.model = "fake-model"
        config.agent.base_urls = {"openai": srv.base_url}
        events = EventRecorder()
        app = await start_app(paths, config=config, events=events)
        app.backends["openai"].obj.max_retries = 0
        try:
            cid = app.chat.start_turn(None, "hello")
            await app.chat.wait(cid)
            stored = json.dumps(app.store.messages(cid))
            logged = json.dumps(app.inspector.query(limit=100000))
        finally:
            await app.stop()
    errors = [d for e, d in events if e == "chat.error"]
    assert errors and "Incorrect API key" in errors[0]["message"] and KEY not in errors[0]["message"]
    assert "Incorrect API key" in stored and KEY not in stored
    assert KEY not in logged
    db = b"".join(p.read_bytes() for p in paths.data_dir.rglob("*.db*"))
    assert KEY.encode() not in db
