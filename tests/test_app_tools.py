"""App-registered tools (draft spec), headless: the core offers a live view's tools to the model,
runs a call on the view, applies the same approval policy, and withdraws them when it goes.

The test plays the view through the dispatcher (as the page would relay it); the chat runs
against the fake OpenAI server and the demo MCP server in this process.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from moka_shell.core.chat.tool_names import ToolNames
from moka_shell.core.mcp.catalog import ToolEntry
from moka_shell.core.views.app_tools import MAX_APP_TOOLS, AppTool, checked_tools
from moka_shell.paths import Paths
from moka_shell.testing.fake_openai import FakeOpenAIServer, Text, ToolCall
from support import until
from test_chat import make_app

pytestmark = pytest.mark.anyio

VIEW_TOOLS = [
    {"name": "count-dice", "description": "How many dice the view shows", "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}},
    {"name": "clear-dice", "description": "Remove every die", "inputSchema": {"type": "object"}},
]


class PlayedView:
    """Answers what Moka asks the view: its tools, and calls of them."""

    def __init__(self, app: Any, events: list[tuple[str, Any]], view_id: str) -> None:
        self.app, self.events, self.view_id = app, events, view_id
        self.calls: list[dict[str, Any]] = []
        self._seen = 0

    async def handshake(self) -> None:
        d = self.app.view_host.dispatcher
        await d.handle(self.view_id, {"jsonrpc": "2.0", "id": 0, "method": "ui/initialize", "params": {
            "protocolVersion": "2026-01-26", "appInfo": {"name": "dice", "version": "1"},
            "appCapabilities": {"tools": {"listChanged": True}}}})
        await d.handle(self.view_id, {"jsonrpc": "2.0", "method": "ui/notifications/initialized"})

    async def serve(self) -> None:
        while True:
            posts = [d["message"] for e, d in self.events if e == "view.post" and d["viewId"] == self.view_id]
            for msg in posts[self._seen:]:
                if msg.get("method") == "tools/list":
                    await self._answer(msg, {"tools": VIEW_TOOLS})
                elif msg.get("method") == "tools/call":
                    self.calls.append(msg["params"])
                    await self._answer(msg, {"content": [{"type": "text", "text": "the view shows 3 dice"}]})
            self._seen = len(posts)
            await asyncio.sleep(0.01)

    async def _answer(self, msg: dict[str, Any], result: dict[str, Any]) -> None:
        await self.app.view_host.dispatcher.handle(self.view_id, {"jsonrpc": "2.0", "id": msg["id"], "result": result})


def names_offered(request: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in request.get("tools", [])}


async def test_a_views_tools_are_offered_run_on_it_asked_for_like_any_tool_and_withdrawn(paths: Paths) -> None:
    with FakeOpenAIServer() as srv:
        srv.tool_then_reply("roll_dice", {"count": 3}, "Rolled.")
        app, events = await make_app(paths, srv.base_url)
        server_task = None
        try:
            cid = app.chat.start_turn(None, "roll")
            view_id = (await until(lambda: [d for e, d in events if e == "view.created"], "the view"))[0]["viewId"]
            view = PlayedView(app, events, view_id)
            server_task = asyncio.get_running_loop().create_task(view.serve())
            await view.handshake()
            await app.chat.wait(cid)
            live = app.view_host.views[view_id]
            await until(lambda: len(live.app_tools) == 2, "the view's tools listed")
            assert not {n for n in names_offered(srv.requests[0]) if n.startswith("app__")}

            # Read-only: runs unasked (approval mode read-only), on the view.
            srv.enqueue([[ToolCall("app__count-dice", {})], [Text("Three dice.")]])
            app.chat.start_turn(cid, "how many dice?")
            await app.chat.wait(cid)
            assert {"app__count-dice", "app__clear-dice", "roll_dice"} <= names_offered(srv.requests[2])
            assert view.calls == [{"name": "count-dice", "arguments": {}}]
            call = app.store.messages(cid)[-2]["toolCalls"][0]
            assert call["status"] == "done" and call["tool"] == "count-dice"
            assert call["app"] == {"viewId": view_id, "title": live.tool.title or live.tool.name}
            assert [m for m in srv.requests[3]["messages"] if m["role"] == "tool"][-1]["content"] == \
                "the view shows 3 dice"

            # Not read-only: the person is asked, as for a server's tool; they say no.
            srv.enqueue([[ToolCall("app__clear-dice", {})], [Text("Could not.")]])
            app.chat.start_turn(cid, "clear them")
            waiting = await until(lambda: app.chat.approvals.pending(), "the approval question")
            assert waiting[0]["app"]["viewId"] == view_id and waiting[0]["approval"]["reason"] == \
                "the tool does not say what it does"
            app.chat.approvals.answer(waiting[0]["id"], "deny")
            await app.chat.wait(cid)
            refused = app.store.messages(cid)[-2]["toolCalls"][0]
            assert refused["status"] == "denied" and len(view.calls) == 1

            # The view goes: its tools are withdrawn, and a call that still names one is an error.
            await app.view_host.close(live)
            srv.enqueue([[ToolCall("app__count-dice", {})], [Text("Gone.")]])
            app.chat.start_turn(cid, "and now?")
            await app.chat.wait(cid)
            assert not {n for n in names_offered(srv.requests[6]) if n.startswith("app__")}
            gone = app.store.messages(cid)[-2]["toolCalls"][0]
            assert gone["status"] == "error" and "unknown tool 'app__count-dice'" in gone["error"]
            assert len(view.calls) == 1
        finally:
            if server_task is not None:
                server_task.cancel()
            await app.stop()


def entry(server: str, name: str) -> ToolEntry:
    return ToolEntry(server=server, name=name, title=None, description=f"{name} of {server}",
                     input_schema={"type": "object"}, meta={}, resource_uri=None, visibility=["model", "app"])


def app_tool(view_id: str, server: str, name: str) -> AppTool:
    return AppTool(view_id=view_id, server=server, name=name, title=None, description="", input_schema={},
                   annotations=None, app_title="Dice")


def test_app_tool_names_never_pass_for_a_servers() -> None:
    names = ToolNames([entry("dice", "roll"), entry("odd", "app__roll")],
                      [app_tool("v1", "dice", "roll"), app_tool("v2", "cards", "deal"), app_tool("v3", "more", "deal")])
    assert set(names.by_name) == {"roll", "odd__app__roll", "app__roll", "app__cards__deal", "app__more__deal"}
    assert isinstance(names.resolve("app__roll"), AppTool) and isinstance(names.resolve("roll"), ToolEntry)
    described = {t.name: t.description for t in names.model_tools()}
    assert 'the "Dice" app view from server dice' in described["app__roll"]
    assert described["app__roll"].count("\n") == 2 and described["roll"] == "roll of dice"
    assert all(t.input_schema == {"type": "object", "properties": {}} for t in names.model_tools()
               if t.name.startswith("app__"))


def test_what_a_view_lists_is_checked_and_bounded() -> None:
    kept, problems = checked_tools({"tools": [{"name": "a"}, {"name": "a"}, {"title": "no name"}, "x",
                                              *({"name": f"t{i}"} for i in range(MAX_APP_TOOLS + 5))]})
    assert [t["name"] for t in kept][:2] == ["a", "t0"] and len(kept) == MAX_APP_TOOLS
    assert any("listed twice" in p for p in problems) and any("over 50 tools" in p for p in problems)
    assert sum("usable name" in p for p in problems) == 2
    assert checked_tools({"nope": 1}) == ([], ["its tools/list answer has no 'tools' list"])
