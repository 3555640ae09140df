"""The Inspector pairs each JSON-RPC response with its request: reply_to, the method and the time taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from moka_shell.config import ServerConfig
from moka_shell.core.mcp.servers import ServerManager
from moka_shell.inspector import EventFilter, Inspector
from moka_shell.inspector_pairs import Exchanges
from moka_shell.plugins import PluginHost


def rpc(rid: object, method: str | None = None, **body: object) -> dict[str, object]:
    message: dict[str, object] = {"jsonrpc": "2.0", "id": rid}
    if method:
        message["method"] = method
    message.update(body)
    return message


def test_a_response_names_its_request_and_is_found_by_method(tmp_path: Path) -> None:
    insp = Inspector(tmp_path / "insp")
    try:
        req = insp.record("mcp.rpc", rpc(1, "tools/call", params={"name": "x"}), direction="out", server="a")
        # The server asks the client something with the same id, in the other direction.
        ask = insp.record("mcp.rpc", rpc(1, "sampling/createMessage"), direction="in", server="a")
        answer = insp.record("mcp.rpc", rpc(1, result={"ok": True}), direction="out", server="a")
        res = insp.record("mcp.rpc", rpc(1, result={"content": []}), direction="in", server="a")
        assert res["reply_to"] == req["seq"] and res["request_method"] == "tools/call" and res["ms"] >= 0
        assert "method" not in res  # a response is not a request: counting requests by method stays right
        assert answer["reply_to"] == ask["seq"] and answer["request_method"] == "sampling/createMessage"
        assert "reply_to" not in req and "reply_to" not in ask
        found = insp.query(EventFilter(method="tools/call"))
        assert [e["seq"] for e in found] == [req["seq"], res["seq"]]
        assert EventFilter(method="tools/call").matches(res)  # the live filter agrees with the ring
    finally:
        insp.close()


def test_ids_are_matched_by_type_server_and_view(tmp_path: Path) -> None:
    insp = Inspector(tmp_path / "insp")
    try:
        insp.record("ui.rpc", rpc(7, "ui/initialize"), direction="in", server="a", view="v1")
        other_view = insp.record("ui.rpc", rpc(7, result={}), direction="out", server="a", view="v2")
        string_id = insp.record("ui.rpc", rpc("7", result={}), direction="out", server="a", view="v1")
        mine = insp.record("ui.rpc", rpc(7, result={}), direction="out", server="a", view="v1")
        again = insp.record("ui.rpc", rpc(7, result={}), direction="out", server="a", view="v1")
        assert "reply_to" not in other_view and "reply_to" not in string_id and "reply_to" not in again
        assert mine["request_method"] == "ui/initialize"
        notification = insp.record("ui.rpc", {"jsonrpc": "2.0", "method": "ui/notifications/size-changed"}, direction="in")
        assert "reply_to" not in notification
    finally:
        insp.close()


def test_unanswered_requests_are_bounded() -> None:
    pairs = Exchanges(capacity=100)
    for i in range(1000):
        pairs.note("mcp.rpc", "out", "a", None, rpc(i, "ping"), i, 0.0)
    assert len(pairs) == 100
    assert pairs.note("mcp.rpc", "in", "a", None, rpc(5, result={}), 2000, 1.0) is None  # forgotten
    hit = pairs.note("mcp.rpc", "in", "a", None, rpc(999, result={}), 2001, 1.5)
    assert hit == {"reply_to": 999, "method": "ping", "ms": 1500.0}


@pytest.mark.anyio
async def test_a_real_servers_calls_are_paired_with_their_durations(tmp_path: Path) -> None:
    insp = Inspector(tmp_path / "insp")
    host = PluginHost(load_entrypoints=False)
    mgr = ServerManager(host.collect("register_transports", "transport_id"), insp)
    mgr.load({"moka-demo": ServerConfig(command="moka", args=["demo-server"])})
    mgr.start_all()
    try:
        await mgr.wait_ready(timeout=30)
        await mgr.get("moka-demo").call_tool("roll_dice", {"count": 2, "sides": 6})
        events = insp.query(EventFilter(channel="mcp.rpc", method="tools/call"))
        requests = [e for e in events if "reply_to" not in e]
        responses = [e for e in events if "reply_to" in e]
        assert len(requests) == len(responses) == 1
        assert responses[0]["reply_to"] == requests[0]["seq"] and responses[0]["ms"] > 0
        listed = insp.query(EventFilter(channel="mcp.rpc", method="tools/list"))
        assert any("reply_to" in e for e in listed)
    finally:
        await mgr.stop_all()
        insp.close()
