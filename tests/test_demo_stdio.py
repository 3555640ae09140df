"""moka-demo's standard-library stdio mode against its SDK mode, both as real subprocesses.

The stdio mode is what every Moka starts (`moka demo-server`); `--sdk` runs the same catalog on
the `mcp` SDK's MCPServer. Each exchange is sent to both and the replies compared.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client import advertise

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
MODERN = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}}
UI = advertise("io.modelcontextprotocol/ui", {"mimeTypes": ["text/html;profile=mcp-app"]})
DEADLINE = 30


def _env() -> dict[str, str]:
    paths = [str(SRC), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}


def _expects_reply(line: str) -> bool:
    try:
        message = json.loads(line)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" in message and message.get("id") is not None


def _exchange(lines: list[str], *mode: str) -> list[dict[str, Any]]:
    """Send each line to a fresh `python -m moka_shell.demo [mode]`, a request's reply awaited before the
    next line (the SDK's server drops replies still pending at EOF); then close stdin. Replies by id."""
    process = subprocess.Popen([sys.executable, "-m", "moka_shell.demo", *mode], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert process.stdin is not None and process.stdout is not None
    out: list[bytes] = []
    try:
        for line in lines:
            process.stdin.write(line.encode())
            process.stdin.flush()
            if _expects_reply(line):
                out.append(process.stdout.readline())
        process.stdin.close()
        out.extend(process.stdout.readlines())
        assert process.wait(timeout=DEADLINE) == 0, process.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    finally:
        process.kill()
        process.wait()
    replies = [json.loads(line) for line in out if line.strip()]
    return sorted(replies, key=lambda reply: str(reply.get("id")))


def _request(request_id: int, method: str, params: dict[str, Any] | None = None, modern: bool = False) -> str:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None or modern:
        body["params"] = {**(params or {}), **({"_meta": ENVELOPE} if modern else {})}
    return json.dumps(body) + "\n"


def _calls(modern: bool) -> list[str]:
    return [
        _request(10, "tools/list", modern=modern),
        _request(11, "resources/list", modern=modern),
        _request(12, "resources/templates/list", modern=modern),
        _request(13, "resources/read", {"uri": "ui://moka-demo/dice"}, modern),
        _request(14, "resources/read", {"uri": "ui://moka-demo/playground"}, modern),
        _request(15, "resources/read", {"uri": "moka-demo://readme"}, modern),
        _request(16, "resources/read", {"uri": "ui://moka-demo/none"}, modern),
        _request(17, "tools/call", {"name": "roll_dice", "arguments": {"sides": 6, "count": 3}}, modern),
        _request(18, "tools/call", {"name": "roll_dice", "arguments": {"sides": 1}}, modern),
        _request(19, "tools/call", {"name": "roll_dice", "arguments": {"count": 21.0}}, modern),
        _request(20, "tools/call", {"name": "open_playground", "arguments": {}}, modern),
        _request(21, "tools/call", {"name": "summarize_rolls", "arguments": {}}, modern),
        _request(22, "tools/call", {"name": "no_such_tool", "arguments": {}}, modern),
        _request(23, "tools/call", {"name": "reroll_dice", "arguments": {"sides": "8", "count": True}}, modern),
        _request(24, "tools/call", {"name": "roll_dice", "arguments": {"sides": "abc"}}, modern),
        _request(25, "no/such/method", {}, modern),
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":17}}\n',
    ]


def _stable(reply: dict[str, Any]) -> dict[str, Any]:
    """The reply with the dice faces (random) and the SDK's own validation wording taken out."""
    text = json.dumps(reply)
    text = re.sub(r'"rolls": \[[0-9, ]*\]', '"rolls": "R"', text)
    text = re.sub(r'"total": [0-9]+', '"total": "T"', text)
    text = re.sub(r"Rolled (\d+d\d+): [0-9, ]+ \(total \d+\)", r"Rolled \1: R", text)
    text = re.sub(r"Highest total: \d+", "Highest total: T", text)
    text = re.sub(r"(validation errors? for \w+Arguments)[^\"]*", r"\1", text)
    return dict(json.loads(text))


def _capabilities_shape(reply: dict[str, Any]) -> dict[str, Any]:
    # The SDK promises list-change notifications in 2026-07-28; this server never changes its lists
    # and says so. What a host acts on, the extensions and which features exist, must match.
    result = json.loads(json.dumps(reply["result"]))
    for feature in ("prompts", "resources", "tools"):
        result["capabilities"][feature] = sorted(result["capabilities"][feature])
    return dict(result)


@pytest.mark.parametrize("era", ["handshake", "modern"])
def test_stdio_mode_answers_what_the_sdk_answers(era: str) -> None:
    modern = era == "modern"
    opening = ([_request(1, "server/discover", {}, True)] if modern else
               [_request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "t", "version": "1"}}),
                '{"jsonrpc":"2.0","method":"notifications/initialized"}\n', _request(2, "ping")])
    lines = opening + _calls(modern)
    plain, sdk = _exchange(lines), _exchange(lines, "--sdk")
    assert [reply["id"] for reply in plain] == [reply["id"] for reply in sdk]
    assert len(plain) == len(opening) - (0 if modern else 1) + 16
    assert _capabilities_shape(plain[0]) == _capabilities_shape(sdk[0])
    for mine, theirs in zip(plain[1:], sdk[1:], strict=True):
        assert _stable(mine) == _stable(theirs), mine.get("id")
    by_id = {reply["id"]: reply for reply in plain}
    assert by_id[18]["result"]["isError"] is True
    assert by_id[18]["result"]["content"][0]["text"].endswith("sides must be a whole number from 2 to 100 (got 1)")
    assert by_id[24]["result"]["isError"] is True and "sides" in by_id[24]["result"]["content"][0]["text"]
    assert by_id[25]["error"]["code"] == -32601
    assert len(by_id[13]["result"]["contents"][0]["text"]) > 10_000  # the whole dice view document


def test_versions_are_negotiated_as_the_sdk_does() -> None:
    lines = [_request(1, "initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "t", "version": "1"}})
             for version in ("2025-06-18",)]
    old_wrong = [_request(1, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}})]
    bad_modern = [json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}})
        + "\n", _request(2, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": "t", "version": "1"}})]
    mixed = [_request(1, "tools/list", modern=True), _request(2, "initialize", {"protocolVersion": MODERN}),
             _request(3, "ping")]
    for case in (lines, old_wrong, bad_modern, mixed):
        assert _exchange(case) == _exchange(case, "--sdk")
    assert _exchange(lines)[0]["result"]["protocolVersion"] == "2025-06-18"
    assert _exchange(old_wrong)[0]["result"]["protocolVersion"] == "2025-11-25"
    assert _exchange(bad_modern)[0]["error"]["code"] == -32022


def test_malformed_lines_get_json_rpc_errors_and_eof_exits_cleanly() -> None:
    replies = _exchange(["{not json\n", "[1, 2]\n", "\n", '{"jsonrpc":"2.0","result":{},"id":7}\n',
                         _request(3, "ping")])
    assert [reply.get("error", {}).get("code") for reply in replies] == [None, -32700, -32600]
    assert replies[0] == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_stdio_mode_imports_neither_the_sdk_nor_pydantic() -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "moka_shell", "demo-server"],
                          input=_request(1, "ping").encode(), capture_output=True, env=_env(),
                          timeout=DEADLINE, check=False)
    modules = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.decode().splitlines() if "|" in line}
    assert json.loads(done.stdout) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert "moka_shell.demo.stdio_server" in modules
    assert not {name for name in modules if name.split(".")[0] in ("mcp", "mcp_types", "pydantic", "anyio")}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_sdk_client_uses_the_stdio_mode(mode: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "moka_shell", "demo-server"], env=_env())

    async def session() -> tuple[str | None, Any, Any, Any]:
        with anyio.fail_after(DEADLINE):
            async with Client(params, extensions=[UI], mode=mode) as client:  # type: ignore[arg-type]
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                [content] = (await client.read_resource("ui://moka-demo/dice")).contents
                result = await client.call_tool("roll_dice", {"sides": 20, "count": 2})
                caps = client.server_capabilities
                return client.protocol_version, tools, (content, caps), result

    version, tools, (content, caps), result = anyio.run(session)
    assert version == (MODERN if mode == "auto" else "2025-11-25")
    if mode == "auto":
        assert caps is not None and caps.extensions == {"io.modelcontextprotocol/ui": {}}
    assert tools["roll_dice"].meta["ui"]["resourceUri"] == "ui://moka-demo/dice"
    assert tools["roll_dice"].output_schema["title"] == "DiceRoll"
    assert content.mime_type == "text/html;profile=mcp-app" and content.meta["ui"]["prefersBorder"] is True
    assert not result.is_error and result.structured_content["sides"] == 20
    assert len(result.structured_content["rolls"]) == 2
