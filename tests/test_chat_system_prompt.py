"""A system prompt sent with a message is the conversation's before its turn starts, not by luck of scheduling."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.demo.server import build_server
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import start_app
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text
from moka_shell.testing.memory import InMemoryTransport

pytestmark = pytest.mark.anyio


async def test_the_system_prompt_is_stored_before_the_turn_task_exists(paths: Paths) -> None:
    """chat.send with a systemPrompt: when the turn's task is made, its conversation already has the prompt.

    Before, the bridge wrote it after start_turn had made the task; it worked only because that task had
    not run yet. The loop's task factory sees the moment the task is made and reads the store then.
    """
    config = MokaConfig(mcpServers={"moka-demo": ServerConfig(type="memory")})
    with FakeOpenAIServer() as srv:
        srv.enqueue([Text("Brief.")])
        config.agent.backend, config.agent.model = "ollama", "fake-model"
        config.agent.base_urls = {"ollama": srv.base_url}
        app = await start_app(paths, config=config, plugins=PluginHost(extra=[InMemoryTransport(build_server).plugin()]))
        bridge = Bridge(app)
        loop = asyncio.get_running_loop()
        at_start: list[str | None] = []

        def factory(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any], **kw: Any) -> asyncio.Task[Any]:
            if getattr(coro, "__qualname__", "") == "ChatEngine._run":  # the turn's own task
                cid = coro.cr_frame.f_locals["turn"].conversation_id
                at_start.append(app.store.settings(cid).get("systemPrompt"))
            return asyncio.Task(coro, loop=loop, **kw)

        loop.set_task_factory(factory)  # type: ignore[arg-type]
        try:
            reply = await bridge.handle({"id": 1, "method": "chat.send",
                                         "params": {"text": "hello", "systemPrompt": "Be brief."}})
            assert reply is not None
            cid = reply["result"]["conversationId"]
            await app.chat.wait(cid)
            settings = app.store.settings(cid)
        finally:
            loop.set_task_factory(None)
            await app.stop()
    assert at_start == ["Be brief."]
    assert settings["systemPrompt"] == "Be brief."
    system = [m["content"] for m in srv.requests[0]["messages"] if m["role"] == "system"]
    assert system and system[0].startswith("Be brief.")
