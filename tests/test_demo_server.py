"""Tests for the bundled moka-demo MCP server and the deliberately broken Apps server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from support import free_port, wait_listening

from moka_shell.demo import server as demo
from moka_shell.demo.dice import HISTORY_LIMIT

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BROKEN_SERVER = ROOT / "tests" / "servers" / "broken_apps_server.py"
APP_MIME = "text/html;profile=mcp-app"
DEADLINE = 20

DICE_IDS = ["reroll", "history", "dice-total", "dice-values", "dice-label", "dice-tray", "status", "history-list"]
PLAYGROUND_IDS = [
    "btn-reroll", "btn-history", "btn-model-only", "btn-read", "btn-list", "btn-message", "message-text",
    "btn-context", "btn-log", "btn-link", "btn-download", "btn-inline", "btn-fullscreen", "btn-pip",
    "btn-grow", "btn-shrink", "btn-ping", "btn-teardown", "btn-fetch", "fetch-url", "log", "current-mode",
    "ctx-theme", "ctx-display-mode", "ctx-available-modes", "ctx-container", "ctx-locale", "ctx-time-zone",
    "ctx-style-vars",
]


@pytest.fixture
def anyio_backend() -> str:
    """Run the async tests on asyncio only."""
    return "asyncio"


def _ui(meta: dict[str, Any] | None) -> dict[str, Any]:
    return (meta or {}).get("ui") or {}


def _env() -> dict[str, str]:
    paths = [str(SRC), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in paths if p)}


async def _tools(client: Client) -> dict[str, Any]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


# ---------- in memory ----------


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tools_carry_ui_meta(mode: str) -> None:
    async with Client(demo.build_server(), mode=mode) as client:
        tools = await _tools(client)
    assert set(tools) == {"roll_dice", "open_playground", "reroll_dice", "dice_history", "summarize_rolls"}
    assert _ui(tools["roll_dice"].meta) == {"resourceUri": "ui://moka-demo/dice"}
    assert tools["roll_dice"].meta["ui/resourceUri"] == "ui://moka-demo/dice"
    assert _ui(tools["open_playground"].meta) == {"resourceUri": "ui://moka-demo/playground"}
    for name in ("reroll_dice", "dice_history"):
        assert _ui(tools[name].meta) == {"visibility": ["app"]}, name
    assert _ui(tools["summarize_rolls"].meta) == {"visibility": ["model"]}
    schema = tools["roll_dice"].input_schema["properties"]
    assert (schema["sides"]["minimum"], schema["sides"]["maximum"], schema["sides"]["default"]) == (2, 100, 6)
    assert (schema["count"]["minimum"], schema["count"]["maximum"], schema["count"]["default"]) == (1, 20, 1)


async def test_roll_dice_results_stay_in_range() -> None:
    async with Client(demo.build_server()) as client:
        for sides, count in [(2, 1), (6, 3), (20, 20), (100, 7)]:
            result = await client.call_tool("roll_dice", {"sides": sides, "count": count})
            data = result.structured_content
            assert not result.is_error
            assert data is not None and data["sides"] == sides and data["count"] == count
            assert len(data["rolls"]) == count and all(1 <= r <= sides for r in data["rolls"])
            assert data["total"] == sum(data["rolls"])
            text = result.content[0].text  # type: ignore[union-attr]
            values = ", ".join(map(str, data["rolls"]))
            assert text == f"Rolled {count}d{sides}: {values} (total {data['total']})"
        default = await client.call_tool("roll_dice", {})
        assert default.structured_content is not None
        assert (default.structured_content["sides"], default.structured_content["count"]) == (6, 1)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"sides": 1}, "sides must be a whole number from 2 to 100 (got 1)"),
        ({"sides": 101}, "sides must be a whole number from 2 to 100 (got 101)"),
        ({"count": 0}, "count must be a whole number from 1 to 20 (got 0)"),
        ({"count": 21}, "count must be a whole number from 1 to 20 (got 21)"),
    ],
)
async def test_roll_dice_rejects_out_of_range(arguments: dict[str, int], message: str) -> None:
    async with Client(demo.build_server()) as client:
        result = await client.call_tool("roll_dice", arguments)
    assert result.is_error
    assert message in result.content[0].text  # type: ignore[union-attr]


async def test_dice_resource_is_an_app_with_border_and_csp() -> None:
    expected = {"prefersBorder": True, "csp": {"connectDomains": ["https://api.example.com"]}}
    async with Client(demo.build_server()) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        read = await client.read_resource("ui://moka-demo/dice")
    assert listed["ui://moka-demo/dice"].mime_type == APP_MIME
    assert _ui(listed["ui://moka-demo/dice"].meta) == expected
    [content] = read.contents
    assert content.mime_type == APP_MIME
    assert _ui(content.meta) == expected


@pytest.mark.parametrize(("uri", "ids"), [("ui://moka-demo/dice", DICE_IDS), ("ui://moka-demo/playground", PLAYGROUND_IDS)])
async def test_views_are_single_self_contained_documents(uri: str, ids: list[str]) -> None:
    async with Client(demo.build_server()) as client:
        [content] = (await client.read_resource(uri)).contents
    html = content.text  # type: ignore[union-attr]
    assert content.mime_type == APP_MIME
    assert html.lstrip().lower().startswith("<!doctype html>")
    assert "@inline" not in html, "every shared file must be inlined"
    assert "window.McpAppClient" in html and '"ui/initialize"' in html
    assert not re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=|@import", html), "no external script or style"
    assert 'data-state="waiting"' in html
    for element_id in ids:
        assert f'id="{element_id}"' in html, element_id


async def test_app_only_tools_record_and_return_history() -> None:
    async with Client(demo.build_server()) as client:
        empty = await client.call_tool("dice_history", {})
        assert empty.structured_content == {"entries": []}
        await client.call_tool("roll_dice", {"sides": 6, "count": 2})
        for _ in range(HISTORY_LIMIT + 2):
            rerolled = await client.call_tool("reroll_dice", {"sides": 8, "count": 3})
            assert rerolled.structured_content is not None and len(rerolled.structured_content["rolls"]) == 3
        history = await client.call_tool("dice_history", {})
        summary = await client.call_tool("summarize_rolls", {})
    assert history.structured_content is not None
    entries = history.structured_content["entries"]
    assert len(entries) == HISTORY_LIMIT
    assert all(entry["source"] == "app" and entry["sides"] == 8 for entry in entries)
    assert entries[-1]["rolls"] == rerolled.structured_content["rolls"]
    assert "20 roll(s) so far" in summary.content[0].text  # type: ignore[union-attr]


async def test_readme_resource_is_readable() -> None:
    async with Client(demo.build_server()) as client:
        [content] = (await client.read_resource(demo.README_URI)).contents
    assert content.mime_type == "text/markdown"
    assert content.text.startswith("# moka-demo")  # type: ignore[union-attr]


def test_main_rejects_a_bad_port() -> None:
    with pytest.raises(SystemExit) as exit_info:
        demo.main(["--http", "70000"])
    assert exit_info.value.code == 2


# ---------- subprocesses ----------


async def test_stdio_subprocess_serves_the_demo() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "moka_shell.demo"], env=_env())
    with anyio.fail_after(DEADLINE):
        async with Client(params) as client:
            tools = await _tools(client)
            result = await client.call_tool("roll_dice", {"sides": 12, "count": 4})
    assert "roll_dice" in tools
    assert result.structured_content is not None and len(result.structured_content["rolls"]) == 4


@pytest.fixture
def http_server() -> Iterator[int]:
    """Start `python -m moka_shell.demo --http PORT` and yield the port."""
    port = free_port()
    command = [sys.executable, "-m", "moka_shell.demo", "--http", str(port)]
    process = subprocess.Popen(
        command, env={**os.environ, **_env()}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        wait_listening(port, process)
        yield port
    finally:
        process.kill()
        process.wait(timeout=10)


async def test_http_subprocess_serves_the_demo(http_server: int) -> None:
    with anyio.fail_after(DEADLINE):
        async with Client(f"http://127.0.0.1:{http_server}/mcp") as client:
            tools = await _tools(client)
            [content] = (await client.read_resource("ui://moka-demo/dice")).contents
            result = await client.call_tool("roll_dice", {"sides": 6, "count": 2})
    assert _ui(tools["roll_dice"].meta)["resourceUri"] == "ui://moka-demo/dice"
    assert content.mime_type == APP_MIME and _ui(content.meta)["prefersBorder"] is True
    assert result.structured_content is not None and result.structured_content["count"] == 2


async def test_broken_server_starts_and_lists_its_tools() -> None:
    params = StdioServerParameters(command=sys.executable, args=[str(BROKEN_SERVER)], env=_env())
    with anyio.fail_after(DEADLINE):
        async with Client(params) as client:
            tools = await _tools(client)
            resources = {str(r.uri): r.mime_type for r in (await client.list_resources()).resources}
    assert set(tools) == {
        "ok", "wrong_mime", "bad_uri", "csp_on_tool", "no_handshake", "throws", "csp_violation",
        "missing_resource", "read_error", "app_only_helper", "bad_visibility", "unreachable",
    }
    assert _ui(tools["bad_uri"].meta)["resourceUri"] == "https://not-ui/x"
    assert "csp" in _ui(tools["csp_on_tool"].meta)
    assert resources["ui://broken-apps/wrong-mime"] == "text/html"
    assert resources["ui://broken-apps/ok"] == APP_MIME
    assert _ui(tools["missing_resource"].meta)["resourceUri"] not in resources
    assert _ui(tools["bad_visibility"].meta)["visibility"] == ["nobody"]
