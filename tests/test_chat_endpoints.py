"""Any endpoint: base URLs from Settings, OPENAI_BASE_URL / ANTHROPIC_BASE_URL, listing models, key sources.

Real parts: the fake providers over HTTP through the official SDKs, `moka chat` as a subprocess,
the real Bridge and the real keyring package (its "fail" backend: no keyring on this machine).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing import start_app
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text

pytestmark = pytest.mark.anyio
NO_KEYRING = "keyring.backends.fail.Keyring"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", NO_KEYRING)


async def start(paths: Paths, agent: dict[str, Any]) -> tuple[MokaApp, Bridge]:
    # Through the config file, as the app runs: Settings changes are saved back to it.
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(json.dumps({"mcpServers": {}, "agent": agent}))
    app = await start_app(paths)
    return app, Bridge(app)


async def call(bridge: Bridge, method: str, **params: Any) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    if "error" in reply:
        raise AssertionError(reply["error"])
    return reply["result"]


async def error_of(bridge: Bridge, method: str, **params: Any) -> dict[str, Any]:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert "error" in reply, reply
    return reply["error"]  # type: ignore[no-any-return]


def backend_info(settings: dict[str, Any], bid: str) -> dict[str, Any]:
    return next(b for b in settings["backends"] if b["id"] == bid)


async def test_openai_base_url_alone_is_used_by_the_app(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """No baseUrls in the config: OPENAI_BASE_URL decides where the OpenAI backend goes, and Settings says so."""
    with FakeOpenAIServer(api_key="sk-env") as srv:
        srv.enqueue([Text("from the env endpoint")])
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
        app, bridge = await start(paths, {"backend": "openai"})
        try:
            info = backend_info(await call(bridge, "settings.get", detect=False), "openai")
            cid = app.chat.start_turn(None, "hello")
            await app.chat.wait(cid)
            reply = app.store.messages(cid)[-1]
        finally:
            await app.stop()
    assert reply["content"] == "from the env endpoint" and "error" not in reply
    assert srv.requests[0]["model"] == "gpt-4.1-mini"  # the preset's default model
    assert info["baseUrl"] == srv.base_url and info["baseUrlSource"] == "env"
    assert info["baseUrlEnvVar"] == "OPENAI_BASE_URL" and info["defaultBaseUrl"] == "https://api.openai.com/v1"
    # The key comes from the environment: said so, and nothing offers to remove it.
    assert info["keySource"] == "env" and info["keyEnvVar"] == "OPENAI_API_KEY" and not info["keyInKeyring"]


def test_openai_base_url_alone_is_used_by_moka_chat(tmp_path: Path) -> None:
    """`moka chat --backend openai` with only OPENAI_BASE_URL and OPENAI_API_KEY in the environment."""
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {}}))
    with FakeOpenAIServer(api_key="sk-cli") as srv:
        srv.enqueue([Text("cli reply via env")])
        env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data"),
               "OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-cli"}
        proc = subprocess.run([sys.executable, "-m", "moka_shell", "chat", "--backend", "openai", "hi there"],
                              capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "assistant: cli reply via env" in proc.stdout
    assert srv.headers[0]["authorization"] == "Bearer sk-cli"


async def test_config_base_url_wins_over_the_environment(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings → Base URL (settings.baseUrl) beats OPENAI_BASE_URL; clearing it falls back to the env."""
    with FakeOpenAIServer() as wanted, FakeOpenAIServer() as other:
        wanted.enqueue([Text("configured wins")])
        monkeypatch.setenv("OPENAI_BASE_URL", other.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
        app, bridge = await start(paths, {"backend": "openai", "model": "fake-model"})
        try:
            bad = await error_of(bridge, "settings.baseUrl", backend="openai", url="ftp://nope")
            settings = await call(bridge, "settings.baseUrl", backend="openai", url=wanted.base_url)
            cid = app.chat.start_turn(None, "hi")
            await app.chat.wait(cid)
            saved = json.loads(paths.config_file.read_text())
            cleared = await call(bridge, "settings.baseUrl", backend="openai", url="")
        finally:
            await app.stop()
    assert "http://" in bad["message"]
    assert backend_info(settings, "openai")["baseUrlSource"] == "config"
    assert len(wanted.requests) == 1 and not other.requests
    assert saved["agent"]["baseUrls"] == {"openai": wanted.base_url}
    info = backend_info(cleared, "openai")
    assert info["baseUrlSource"] == "env" and info["baseUrl"] == other.base_url


async def test_anthropic_base_url_from_the_environment(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_BASE_URL points the Anthropic plugin at the fake, and Test connection lists its models."""
    pytest.importorskip("moka_anthropic")
    with FakeAnthropicServer(api_key="sk-ant", models=("claude-a", "claude-b")) as srv:
        srv.enqueue([Text("hello from claude")])
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
        app, bridge = await start(paths, {"backend": "anthropic", "model": "claude-a"})
        try:
            listed = await call(bridge, "settings.testBackend", backend="anthropic")
            cid = app.chat.start_turn(None, "hi")
            await app.chat.wait(cid)
            reply = app.store.messages(cid)[-1]
            info = backend_info(await call(bridge, "settings.get", detect=False), "anthropic")
        finally:
            await app.stop()
    assert listed["models"] == ["claude-a", "claude-b"] and listed["baseUrl"] == srv.url
    assert reply["content"] == "hello from claude"
    assert info["baseUrlSource"] == "env" and info["models"] == ["claude-a", "claude-b"]


async def test_custom_endpoint_lists_models_and_chats(paths: Paths) -> None:
    """The generic OpenAI-compatible backend: no URL is a clear error; with one, its models and a chat."""
    with FakeOpenAIServer(models=("alpha-1", "beta-2")) as srv:
        srv.enqueue([Text("custom says hi")])
        app, bridge = await start(paths, {"backend": "custom"})
        try:
            no_url = await error_of(bridge, "settings.testBackend", backend="custom")
            cid = app.chat.start_turn(None, "hi")
            await app.chat.wait(cid)
            no_model = app.store.messages(cid)[-1].get("error", "")
            listed = await call(bridge, "settings.testBackend", backend="custom", baseUrl=srv.base_url)
            await call(bridge, "settings.baseUrl", backend="custom", url=srv.base_url)
            await call(bridge, "settings.set", key="agent.model", value="beta-2")
            cid2 = app.chat.start_turn(None, "hi again")
            await app.chat.wait(cid2)
            reply = app.store.messages(cid2)[-1]
        finally:
            await app.stop()
    assert "Base URL" in no_url["message"] or "base URL" in no_url["message"]
    assert "no model is chosen" in no_model
    assert listed["models"] == ["alpha-1", "beta-2"]
    assert reply["content"] == "custom says hi" and srv.requests[-1]["model"] == "beta-2"
    assert "authorization" not in {k.lower() for k in srv.headers[-1]} or \
        srv.headers[-1]["authorization"] == "Bearer not-needed"  # no OpenAI key goes to a custom endpoint


async def test_a_failed_keyring_save_is_never_stored(paths: Paths) -> None:
    """No usable keyring: keys.set fails with the reason and the key source stays "none"."""
    app, bridge = await start(paths, {"backend": "openrouter"})
    try:
        err = await error_of(bridge, "keys.set", backend="openrouter", key="sk-or-123")
        info = backend_info(await call(bridge, "settings.get", detect=False), "openrouter")
    finally:
        await app.stop()
    assert "keyring" in err["message"]
    assert info["keySource"] == "none" and not info["keyInKeyring"] and not info["hasKey"]
