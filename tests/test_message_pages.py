"""A conversation's messages a page at a time (issue 27, item 4): ``conversations.get`` gives the
newest page and whether older ones exist, ``conversations.messages`` the pages before or after a
sequence number. Real parts: the Bridge, the Store and SQLite."""

from __future__ import annotations

from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing import start_app

pytestmark = pytest.mark.anyio


async def call(bridge: Bridge, method: str, **params: Any) -> Any:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    if "error" in reply:
        raise AssertionError(reply["error"])
    return reply["result"]


async def refused(bridge: Bridge, method: str, **params: Any) -> str:
    reply = await bridge.handle({"id": 1, "method": method, "params": params})
    assert "error" in reply, reply
    assert reply["error"]["code"] == -32602, reply
    return str(reply["error"]["message"])


async def filled(paths: Paths, count: int) -> tuple[MokaApp, Bridge, str]:
    app = await start_app(paths, config=MokaConfig(mcpServers={}))
    store = app.store
    cid = store.create_conversation("long")
    store.db.execute("BEGIN")
    for i in range(count):
        msg = store.add_message(cid, "user" if i % 2 == 0 else "assistant", f"m{i}")
        if i % 10 == 1:
            store.add_call(cid, msg["id"], {"id": f"c{i}", "server": "s", "tool": "t", "modelName": "t",
                                            "arguments": {"i": i}, "status": "done"})
    store.db.execute("COMMIT")
    return app, Bridge(app), cid


async def test_get_gives_the_newest_page_and_says_older_ones_exist(paths: Paths) -> None:
    """500 messages: get gives the newest 200 by default (or ``limit``), oldest first, with seq, calls and hasOlder."""
    app, bridge, cid = await filled(paths, 500)
    try:
        conv = await call(bridge, "conversations.get", id=cid)
        small = await call(bridge, "conversations.get", id=cid, limit=60)
        whole = await call(bridge, "conversations.get", id=cid, limit=1000)
    finally:
        await app.stop()
    assert [m["content"] for m in conv["messages"]] == [f"m{i}" for i in range(300, 500)]
    assert [m["seq"] for m in conv["messages"]] == list(range(301, 501))
    assert conv["hasOlder"] is True
    assert [c["id"] for c in conv["messages"][1]["toolCalls"]] == ["c301"]  # calls come with their page
    assert [m["content"] for m in small["messages"]] == [f"m{i}" for i in range(440, 500)] and small["hasOlder"]
    assert len(whole["messages"]) == 500 and whole["hasOlder"] is False


async def test_pages_before_and_after_cover_the_conversation_once(paths: Paths) -> None:
    """Walking back with ``before`` from the newest page, then forward with ``after``, meets every message once."""
    app, bridge, cid = await filled(paths, 523)
    try:
        page = await call(bridge, "conversations.get", id=cid, limit=50)
        seen, more = [m["seq"] for m in page["messages"]], page["hasOlder"]
        while more:
            older = await call(bridge, "conversations.messages", id=cid, before=seen[0], limit=100)
            seen, more = [m["seq"] for m in older["messages"]] + seen, older["more"]
        forward, after, more = [], 0, True
        while more:
            newer = await call(bridge, "conversations.messages", id=cid, after=after, limit=100)
            forward += [m["seq"] for m in newer["messages"]]
            after, more = forward[-1], newer["more"]
        last = await call(bridge, "conversations.messages", id=cid, after=523)
    finally:
        await app.stop()
    assert seen == list(range(1, 524)) == forward
    assert last == {"messages": [], "more": False}


async def test_a_page_request_that_makes_no_sense_is_refused_saying_why(paths: Paths) -> None:
    """Neither or both of before/after, a limit out of 1–1000, an unknown conversation: -32602 with the reason."""
    app, bridge, cid = await filled(paths, 5)
    try:
        neither = await refused(bridge, "conversations.messages", id=cid)
        both = await refused(bridge, "conversations.messages", id=cid, before=3, after=1)
        big = await refused(bridge, "conversations.messages", id=cid, before=3, limit=5000)
        zero = await refused(bridge, "conversations.get", id=cid, limit=0)
        word = await refused(bridge, "conversations.messages", id=cid, before="soon")
        unknown = await refused(bridge, "conversations.messages", id="nope", before=3)
    finally:
        await app.stop()
    assert "one of 'before' or 'after'" in neither and "one of 'before' or 'after'" in both
    assert "1 to 1000" in big and "1 to 1000" in zero
    assert "whole number" in word
    assert "no conversation" in unknown


async def test_a_new_message_carries_its_seq(paths: Paths) -> None:
    """add_message returns the seq it got (the page orders live messages among stored ones by it)."""
    app, _, cid = await filled(paths, 3)
    try:
        msg = app.store.add_message(cid, "user", "fourth")
        stored = app.store.messages(cid)[-1]
    finally:
        await app.stop()
    assert msg["seq"] == stored["seq"] == 4
