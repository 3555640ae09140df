"""Images that reach the model: tool results, a view's ui/message and model context, the person's
attachments; in OpenAI's content parts and Anthropic's content blocks, with text where a backend
takes no images. Real parts: an MCP server subprocess, the fake providers through the official
SDKs, the real dispatcher and Bridge."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.chat.backends import AgentEvent, AgentRequest, BaseBackend, Done, TextDelta
from moka_shell.hookspecs import hookimpl
from moka_shell.paths import Paths
from moka_shell.plugins import PluginHost
from moka_shell.testing import start_app
from moka_shell.testing.fake_anthropic import FakeAnthropicServer
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall

pytestmark = pytest.mark.anyio
SERVERS = Path(__file__).resolve().parent / "servers"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEUlEQVR4nGP8z8DAwMDAxAAAHwQCAB7dVEMAAAAASUVORK5CYII="


def servers() -> dict[str, ServerConfig]:
    return {"media": ServerConfig(command=sys.executable, args=[str(SERVERS / "media_server.py")], trustAnnotations=True),
            "moka-demo": ServerConfig(command="moka", args=["demo-server"])}


class TextOnly(BaseBackend):
    """A third-party backend that takes no images (it declares no accepts_media): it keeps what it was sent."""

    backend_id = "textonly"
    display_name = "Text only"
    default_model = "t"

    def __init__(self) -> None:
        self.requests: list[AgentRequest] = []

    async def stream(self, request: AgentRequest) -> AsyncIterator[AgentEvent]:
        self.requests.append(request)
        yield TextDelta(text="read it")
        yield Done()


class TextOnlyPlugin:
    __name__ = "textonly-plugin"

    def __init__(self) -> None:
        self.backend = TextOnly()

    @hookimpl
    def register_agent_backends(self, register: Any) -> None:
        register(self.backend)


async def make_app(paths: Paths, backend: str, base_url: str | None, extra: list[Any] | None = None) -> MokaApp:
    config = MokaConfig(mcpServers=servers())
    config.agent.backend, config.agent.model = backend, "fake-model"
    if base_url:
        config.agent.base_urls = {backend: base_url}
    app = await start_app(paths, config=config, plugins=PluginHost(extra=extra or []))
    return app


async def send_app_message(app: MokaApp, content: list[dict[str, Any]]) -> str:
    """A view of the demo server, through the real dispatcher: handshake, then ui/message."""
    app.config.consent.message = "allow"
    view = await app.view_host.open_view("moka-demo", "open_playground")
    assert view is not None
    d = app.view_host.dispatcher
    await d.handle(view.id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
        "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
    await d.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    reply = await d.handle(view.id, {"jsonrpc": "2.0", "id": 1, "method": "ui/message",
                                     "params": {"role": "user", "content": content}})
    assert reply is not None and reply.get("result") == {}, reply
    assert view.conversation_id
    return view.conversation_id


def openai_images(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    return [p["image_url"]["url"] for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


async def test_tool_result_image_reaches_openai_as_an_image_part(paths: Paths) -> None:
    """A tool's image goes in a user message right after the tool messages (tool messages take only text)."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("screenshot", {"label": "home"})], [Text("I see red.")]])
        app = await make_app(paths, "ollama", srv.base_url)
        try:
            cid = app.chat.start_turn(None, "look at the screen")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    messages = srv.requests[1]["messages"]
    roles = [m["role"] for m in messages]
    tool_at = roles.index("tool")
    assert roles[tool_at + 1] == "user"  # straight after the tool messages
    assert "screenshot of home" in messages[tool_at]["content"] and "attached" in messages[tool_at]["content"]
    assert openai_images(messages[tool_at + 1]) == [f"data:image/png;base64,{PNG}"]
    assert "screenshot" in messages[tool_at + 1]["content"][0]["text"]


async def test_tool_result_image_and_resource_reach_anthropic_inside_the_tool_result(
        paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """Anthropic: image blocks inside tool_result; audio becomes a line that says it was not sent."""
    pytest.importorskip("moka_anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    with FakeAnthropicServer() as srv:
        srv.enqueue([[ToolCall("recording", {})], [Text("A cover and a clip.")]])
        app = await make_app(paths, "anthropic", srv.url)
        try:
            cid = app.chat.start_turn(None, "play it")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    user = srv.requests[1]["messages"][-1]
    [result] = [b for b in user["content"] if b["type"] == "tool_result"]
    kinds = [b["type"] for b in result["content"]]
    assert kinds == ["text", "image"]
    assert result["content"][1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG}
    text = result["content"][0]["text"]
    assert "a short clip" in text and "audio audio/wav" in text and "not sent" in text


async def test_app_message_image_reaches_both_providers(paths: Paths, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view's ui/message with an image: OpenAI image_url part, Anthropic image block, in the user turn."""
    content = [{"type": "text", "text": "what is in this picture?"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("a red square")]])
        app = await make_app(paths, "ollama", srv.base_url)
        try:
            cid = await send_app_message(app, content)
            await app.chat.wait(cid)
        finally:
            await app.stop()
    user = [m for m in srv.requests[0]["messages"] if m["role"] == "user"][-1]
    assert openai_images(user) == [f"data:image/png;base64,{PNG}"]
    assert "Message from the app \"open_playground\"" in user["content"][0]["text"]
    pytest.importorskip("moka_anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    with FakeAnthropicServer() as asrv:
        asrv.enqueue([[Text("a red square")]])
        app = await make_app(paths, "anthropic", asrv.url)
        try:
            cid = await send_app_message(app, content)
            await app.chat.wait(cid)
        finally:
            await app.stop()
    blocks = asrv.requests[0]["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["text", "image"] and blocks[1]["source"]["data"] == PNG


async def test_model_context_image_goes_with_the_next_turn(paths: Paths) -> None:
    """ui/update-model-context with an image: the next person's message carries it."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("noted")]])
        app = await make_app(paths, "ollama", srv.base_url)
        try:
            _cid, view, _r = await app.view_host.run_tool("moka-demo", "roll_dice", {})
            assert view is not None
            await app.view_host.dispatcher.handle(view.id, {
                "jsonrpc": "2.0", "id": 5, "method": "ui/update-model-context",
                "params": {"content": [{"type": "text", "text": "the chart"},
                                       {"type": "image", "data": PNG, "mimeType": "image/png"}]}})
            cid = app.chat.start_turn(None, "what does the chart show?")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    user = [m for m in srv.requests[0]["messages"] if m["role"] == "user"][-1]
    assert openai_images(user) == [f"data:image/png;base64,{PNG}"]
    assert "the chart" in user["content"][0]["text"] and "what does the chart show?" in user["content"][0]["text"]


async def test_attachments_reach_the_model_and_stay_with_the_message(paths: Paths) -> None:
    """chat.send with an image and a text file: image part + the file's text; both kept for later turns."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("first")], [Text("second")]])
        app = await make_app(paths, "ollama", srv.base_url)
        bridge = Bridge(app)
        try:
            files = [{"name": "dot.png", "mimeType": "image/png", "data": PNG},
                     {"name": "notes.txt", "mimeType": "text/plain", "data": base64.b64encode(b"remember 42").decode()}]
            sent = await bridge.handle({"id": 1, "method": "chat.send", "params": {"text": "see attached",
                                                                                  "attachments": files}})
            cid = sent["result"]["conversationId"]
            await app.chat.wait(cid)
            await bridge.handle({"id": 2, "method": "chat.send", "params": {"conversationId": cid, "text": "and?"}})
            await app.chat.wait(cid)
            got = (await bridge.handle({"id": 3, "method": "conversations.get", "params": {"id": cid}}))["result"]
            meta = got["messages"][0]["data"]["attachments"]
            back = (await bridge.handle({"id": 4, "method": "chat.attachment", "params": {"id": meta[0]["id"]}}))["result"]
            too_big = await bridge.handle({"id": 5, "method": "chat.send", "params": {"text": "x", "attachments": [
                {"name": "big.bin", "mimeType": "application/octet-stream",
                 "data": base64.b64encode(b"\0" * (9 * 1024 * 1024)).decode()}]}})
        finally:
            await app.stop()
    for request in srv.requests:  # the attachment is sent on the first turn and every later one
        first_user = [m for m in request["messages"] if m["role"] == "user"][0]
        assert openai_images(first_user) == [f"data:image/png;base64,{PNG}"]
        assert "remember 42" in first_user["content"][0]["text"] and "see attached" in first_user["content"][0]["text"]
    assert [m["name"] for m in meta] == ["dot.png", "notes.txt"] and "data" not in json.dumps(meta).lower().replace(
        '"data"', "")  # descriptions only, no contents in the message
    assert back["data"] == PNG and back["mimeType"] == "image/png"
    assert "error" in too_big and "at most" in too_big["error"]["message"]


async def test_a_backend_without_images_gets_text_that_says_so(paths: Paths) -> None:
    """A backend that declares no media gets a line naming the image, never the bytes."""
    plugin = TextOnlyPlugin()
    with FakeOpenAIServer() as srv:
        srv.enqueue([[ToolCall("screenshot", {})], [Text("done")]])
        app = await make_app(paths, "ollama", srv.base_url, extra=[plugin])
        try:
            cid = app.chat.start_turn(None, "shoot")
            await app.chat.wait(cid)
            app.chat.start_turn(cid, "now you", backend="textonly")
            await app.chat.wait(cid)
        finally:
            await app.stop()
    [request] = plugin.backend.requests
    tool = [m for m in request.messages if m.role == "tool"][0]
    assert not any(m.media for m in request.messages)
    assert "image image/png" in tool.content and "does not take image" in tool.content
    assert PNG not in json.dumps([m.model_dump() for m in request.messages])


async def test_a_views_sampling_request_keeps_its_image(paths: Paths) -> None:
    """sampling/createMessage from a view with an image block: the model gets the image, not just the text."""
    with FakeOpenAIServer() as srv:
        srv.enqueue([[Text("red")]])
        app = await make_app(paths, "ollama", srv.base_url)
        try:
            app.config.consent.sampling = "allow"
            view = await app.view_host.open_view("moka-demo", "open_playground")
            assert view is not None
            d = app.view_host.dispatcher
            await d.handle(view.id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
                "protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}, "appCapabilities": {}}})
            await d.handle(view.id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
            reply = await d.handle(view.id, {"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage", "params": {
                "maxTokens": 20, "messages": [{"role": "user", "content": [
                    {"type": "text", "text": "Describe this image"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]}]}})
        finally:
            await app.stop()
    assert reply is not None and reply["result"]["content"]["text"] == "red", reply
    user = srv.requests[0]["messages"][-1]
    assert openai_images(user) == [f"data:image/png;base64,{PNG}"] and "Describe this image" in user["content"][0]["text"]
