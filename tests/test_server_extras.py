"""Prompts, resources, completions and logs for the person, through the real Bridge (issue 15 items 5 and 6).

Real parts: ``@modelcontextprotocol/server-everything`` (npm, pinned) and the hand-written paged server
``tests/servers/raw_server.py``, as subprocesses of a real MokaApp with its config file.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from support import npm_server, server_script, until
from moka_shell.bridge import Bridge
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder, start_app

pytestmark = pytest.mark.anyio


@pytest.fixture
async def app(paths: Paths) -> AsyncIterator[MokaApp]:
    """A running MokaApp with server-everything ('every') and the paged raw server ('raw')."""
    raw = server_script("raw_server.py")
    servers = {"every": {"command": npm_server("mcp-server-everything"), "args": ["stdio"]},
               "raw": {"command": raw[0], "args": raw[1:]}}
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(json.dumps({"mcpServers": servers}))
    app = await start_app(paths, ready_within=60)
    try:
        for name in servers:
            assert app.servers.get(name).status == "ready", app.servers.get(name).error
        yield app
    finally:
        await app.stop()


@pytest.fixture
def bridge(app: MokaApp) -> Bridge:
    """The real Bridge of that app."""
    return Bridge(app)


async def call(bridge: Bridge, method: str, **params: Any) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert reply is not None and "error" not in reply, reply
    return reply["result"]


async def error_of(bridge: Bridge, method: str, **params: Any) -> dict[str, Any]:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert reply is not None and "error" in reply, reply
    return reply["error"]  # type: ignore[no-any-return]


async def test_prompts_with_arguments_and_completions(bridge: Bridge) -> None:
    """server-everything's prompts are listed with their arguments; prompts/get fills them; completion narrows."""
    prompts = await call(bridge, "servers.prompts", server="every")
    by_name = {p["name"]: p for p in prompts}
    assert {"simple-prompt", "args-prompt", "completable-prompt"} <= set(by_name)
    team = by_name["completable-prompt"]
    assert team["title"] == "Team Management" and [a["name"] for a in team["arguments"]] == ["department", "name"]
    got = await call(bridge, "servers.prompt", server="every", name="completable-prompt",
                     arguments={"department": "Sales", "name": "Eve"})
    assert got["messages"][0]["role"] == "user"
    assert got["messages"][0]["content"]["text"] == "Please promote Eve to the head of the Sales team."
    ref = {"type": "ref/prompt", "name": "completable-prompt"}
    first = await call(bridge, "servers.complete", server="every", ref=ref, argument={"name": "department", "value": "S"})
    assert first["values"] == ["Sales", "Support"]
    second = await call(bridge, "servers.complete", server="every", ref=ref, argument={"name": "name", "value": ""},
                        context={"arguments": {"department": "Engineering"}})
    assert second["values"] == ["Alice", "Bob", "Charlie"]


async def test_resources_templates_read_and_template_completion(bridge: Bridge) -> None:
    """Resources and templates listed, a resource read, a template variable completed."""
    found = await call(bridge, "servers.resources", server="every")
    assert found["resources"] and all(r["server"] == "every" and r["uri"] for r in found["resources"])
    templates = {t["uriTemplate"]: t for t in found["templates"]}
    text_tpl = "demo://resource/dynamic/text/{resourceId}"
    assert text_tpl in templates and templates[text_tpl]["variables"] == ["resourceId"]
    read = await call(bridge, "servers.readResource", server="every", uri="demo://resource/dynamic/text/7")
    assert read["contents"][0]["uri"] == "demo://resource/dynamic/text/7" and "text" in read["contents"][0]
    done = await call(bridge, "servers.complete", server="every", ref={"type": "ref/resource", "uri": text_tpl},
                      argument={"name": "resourceId", "value": "1"})
    assert done["values"] and all(v.startswith("1") for v in done["values"])


async def test_every_page_of_prompts_resources_and_templates(bridge: Bridge) -> None:
    """The raw server pages everything two at a time: all of it arrives."""
    prompts = await call(bridge, "servers.prompts", server="raw")
    assert [p["name"] for p in prompts] == ["prompt_0", "prompt_1", "prompt_2"]
    found = await call(bridge, "servers.resources", server="raw")
    assert [r["uri"] for r in found["resources"]] == ["raw://item/0", "raw://item/1", "raw://item/2", "ui://raw/view"]
    assert [t["variables"] for t in found["templates"]] == [["id"], ["book", "page"], ["path"]]
    tools = await call(bridge, "tools.list", server="raw")
    assert "beta_on_page_two" in {t["name"] for t in tools}


async def test_log_level_is_sent_saved_and_log_lines_shown(bridge: Bridge, paths: Paths) -> None:
    """servers.setLogLevel: logging/setLevel reaches the server, the config keeps it, its log line shows."""
    info = await call(bridge, "servers.setLogLevel", server="raw", level="debug")
    assert info["logLevel"] == "debug" and info["capabilities"]["logging"] is True
    assert json.loads(paths.config_file.read_text())["mcpServers"]["raw"]["logLevel"] == "debug"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        logs = await call(bridge, "servers.logs", server="raw")
        if any(line["text"] == "level is now debug" for line in logs):
            break
        await asyncio.sleep(0.05)
    line = next(line for line in logs if line["text"] == "level is now debug")
    assert line["level"] == "notice" and line["logger"] == "raw" and line["time"]
    listed = next(s for s in await call(bridge, "servers.list") if s["name"] == "raw")
    assert any(entry["text"] == "level is now debug" for entry in listed["logs"])
    bad = await error_of(bridge, "servers.setLogLevel", server="raw", level="loud")
    assert bad["code"] == -32602 and "unknown log level" in bad["message"]


async def test_a_server_without_prompts_and_bad_parameters(bridge: Bridge) -> None:
    """Unknown server and a bad ref are the caller's errors, said plainly."""
    err = await error_of(bridge, "servers.prompts", server="nope")
    assert "nope" in err["message"]
    err = await error_of(bridge, "servers.complete", server="every", ref={"type": "ref/tool"},
                         argument={"name": "x", "value": ""})
    assert err["code"] == -32602 and "ref/prompt" in err["message"]
    err = await error_of(bridge, "servers.prompt", server="every", name="no-such-prompt")
    assert err["code"] == -32000 and "prompts/get no-such-prompt" in err["message"]


async def test_a_tool_that_requires_tasks_is_not_offered_to_the_model(app: MokaApp, bridge: Bridge) -> None:
    """server-everything's simulate-research-query needs task augmentation: listed, marked, never offered."""
    tools = {t["name"]: t for t in await call(bridge, "tools.list", server="every")}
    assert tools["simulate-research-query"]["taskSupport"] == "required"
    assert "taskSupport" not in tools["echo"]
    entries = app.servers.get("every").tools
    assert not entries["simulate-research-query"].model_visible and entries["echo"].model_visible


async def test_roots_the_person_chose_reach_the_server_and_changes_are_announced(paths: Paths, tmp_path: Any) -> None:
    """server-everything's get-roots-list shows the chosen folders; servers.setRoots announces a change;
    a server with no roots configured is not told Moka has roots (its tool is then not offered)."""
    first, second = tmp_path / "project-a", tmp_path / "project-b"
    first.mkdir()
    second.mkdir()
    every = {"command": npm_server("mcp-server-everything"), "args": ["stdio"]}
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(json.dumps({"mcpServers": {"rooted": {**every, "roots": [str(first)]}, "plain": every}}))
    app = await start_app(paths, ready_within=60)
    try:
        bridge = Bridge(app)
        rooted = app.servers.get("rooted")
        assert "get-roots-list" in rooted.tools and "get-roots-list" not in app.servers.get("plain").tools
        text = (await rooted.call_tool("get-roots-list", {}))["content"][0]["text"]
        assert first.as_uri() in text and second.as_uri() not in text
        info = await call(bridge, "servers.setRoots", server="rooted", roots=[str(first), str(second)])
        assert info["roots"] == [str(first), str(second)]
        assert json.loads(paths.config_file.read_text())["mcpServers"]["rooted"]["roots"] == [str(first), str(second)]
        deadline = time.monotonic() + 20
        while second.as_uri() not in text and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # the server re-asks roots/list after the list_changed notification
            text = (await rooted.call_tool("get-roots-list", {}))["content"][0]["text"]
        assert second.as_uri() in text
        bad = await error_of(bridge, "servers.setRoots", server="rooted", roots=["relative/dir"])
        assert bad["code"] == -32602 and "absolute" in bad["message"]
        missing = await error_of(bridge, "servers.setRoots", server="rooted", roots=[str(tmp_path / "nope")])
        assert "not a folder that exists" in missing["message"]
    finally:
        await app.stop()


async def test_a_followed_resource_reports_its_updates(app: MokaApp, bridge: Bridge) -> None:
    """servers.subscribe: server-everything's updates arrive as resource.updated events; unsubscribe stops them."""
    events = EventRecorder("resource.updated")
    app.subscribe(events)
    uri = (await call(bridge, "servers.resources", server="every"))["resources"][0]["uri"]
    assert (await call(bridge, "servers.subscribe", server="every", uri=uri))["subscribed"] == [uri]
    await app.servers.get("every").call_tool("toggle-subscriber-updates", {})  # it sends updates at once, then every 5 s
    await until(lambda: events, "a resource.updated event")
    assert events.data()[0] == {"server": "every", "uri": uri}
    assert (await call(bridge, "servers.unsubscribe", server="every", uri=uri))["subscribed"] == []
    err = await error_of(bridge, "servers.subscribe", server="raw", uri="raw://item/1")
    assert err["code"] == -32000 and "does not offer resource subscriptions" in err["message"]
