"""The inspector: recording, paged queries with cursors, filters and search, chunked export, bridge."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from moka_shell.bridge import Bridge
from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.errors import BridgeError
from moka_shell.inspector import EventFilter, Inspector, json_needle, read_log
from moka_shell.paths import Paths
from moka_shell.testing import start_app


def fill(insp: Inspector, count: int, start: int = 0) -> None:
    """``count`` events over two servers, three channels and ten views; a few carry words to find."""
    for i in range(start, start + count):
        channel = ("mcp.rpc", "ui.rpc", "agent")[i % 3]
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": "tools/call" if i % 2 else "ui/initialize",
                                   "params": {"name": "ping", "arguments": {"i": i}}}
        if i % 250 == 7:
            message["params"]["arguments"]["note"] = f"The Needle {i}"
        insp.record(channel, message, direction="in" if i % 2 else "out", server=("alpha", "beta")[i % 2],
                    view=f"view-{i % 10}")


@pytest.fixture
def insp(tmp_path: Path) -> Inspector:
    inspector = Inspector(tmp_path / "inspector")
    yield inspector
    inspector.close()


def seqs(events: list[dict[str, Any]]) -> list[int]:
    return [e["seq"] for e in events]


def test_the_ring_and_the_file_hold_the_same_events(insp: Inspector, tmp_path: Path) -> None:
    """Each event is one JSONL line, equal to what a query returns, message last, secrets redacted."""
    fill(insp, 50)
    insp.record("agent", {"headers": {"Authorization": "Bearer abcdefghijklmnop"}, "note": "café"}, server="alpha")
    insp.close()
    on_disk = list(read_log(tmp_path / "inspector"))
    assert on_disk == insp.query(limit=1000)
    assert list(on_disk[-1]) == ["seq", "time", "channel", "direction", "server", "message"]
    assert on_disk[-1]["message"]["headers"]["Authorization"] == "[redacted]"
    lines = next((tmp_path / "inspector").glob("events-*.jsonl")).read_text(encoding="utf-8").splitlines()
    assert lines == [json.dumps(e) for e in on_disk]


def test_newest_page_then_older_pages_by_cursor(insp: Inspector) -> None:
    """Pages walk back from the newest with `before`, oldest first in each, with no gap or repeat."""
    fill(insp, 1000)
    page = insp.page(limit=300)
    assert seqs(page.events) == list(range(701, 1001))
    assert (page.matched, page.total, page.newest, page.before) == (1000, 1000, 1000, 701)
    seen = seqs(page.events)
    while page.before is not None:
        page = insp.page(limit=300, before=page.before)
        seen = seqs(page.events) + seen
    assert seen == list(range(1, 1001))
    assert len(page.events) == 100  # the last page holds what was left


def test_query_keeps_its_old_contract(insp: Inspector) -> None:
    """query(): the newest `limit` matching events, oldest first, as dicts."""
    fill(insp, 100)
    assert seqs(insp.query(limit=5)) == [96, 97, 98, 99, 100]
    assert seqs(insp.query(EventFilter(channel="ui"), limit=3)) == [92, 95, 98]
    assert insp.query(limit=0) == []
    assert Inspector(None).query() == []


def test_filters_page_with_counts_and_a_cursor(insp: Inspector) -> None:
    """Channel prefix, server, view and method filters; `matched` counts every match in the ring."""
    fill(insp, 600)
    flt = EventFilter(channel="mcp", server="beta", view="view-3", method="tools/")
    expected = [i + 1 for i in range(600) if i % 3 == 0 and i % 2 == 1 and i % 10 == 3]
    first = insp.page(flt, limit=7)
    assert first.matched == len(expected) == 20
    assert seqs(first.events) == expected[-7:]
    assert first.before == expected[-7]
    second = insp.page(flt, limit=7, before=first.before)
    assert seqs(second.events) == expected[-14:-7]
    assert second.matched == 20  # the count is of the whole ring, whichever page
    rest = insp.page(flt, limit=100, before=second.before)
    assert seqs(rest.events) == expected[:-14] and rest.before is None
    assert insp.page(EventFilter(server="gamma")).events == []


def test_text_search_finds_old_events_in_messages_only(insp: Inspector) -> None:
    """Case-insensitive, anywhere in the ring, in the message (not the channel or server names)."""
    fill(insp, 2000)
    page = insp.page(EventFilter(text="the needle"), limit=3)
    assert page.matched == 8
    assert [e["message"]["params"]["arguments"]["note"] for e in page.events] == [
        "The Needle 1257", "The Needle 1507", "The Needle 1757"]
    assert seqs(insp.page(EventFilter(text='needle 7"'), limit=10).events) == [8]
    assert insp.page(EventFilter(text="alpha")).matched == 0  # the server's name is not in any message
    assert insp.page(EventFilter(text='"name": "ping"')).matched == 2000  # JSON as Python writes it


def test_text_search_reaches_non_ascii_and_skips_redacted_secrets(insp: Inspector) -> None:
    """"café" is stored as an escape in the JSON; a redacted secret can never be found."""
    fill(insp, 10)
    insp.record("agent", {"note": "Un Café crème", "api_key": "sk-very-secret"})
    insp.record("agent", {"note": "emoji 🐝 here"})
    assert seqs(insp.page(EventFilter(text="café CRÈME")).events) == [11]
    assert seqs(insp.page(EventFilter(text="🐝")).events) == [12]
    assert insp.page(EventFilter(text="very-secret")).matched == 0
    assert json_needle("Café") == "caf\\u00e9"


def test_dict_filter_and_ring_filter_agree(insp: Inspector) -> None:
    """EventFilter.matches (used on files by `moka inspect`) selects what a ring query selects."""
    fill(insp, 500)
    insp.record("agent", {"note": "Café"}, method="agent/done")
    every = insp.query(limit=10_000)
    for flt in (EventFilter(channel="ui"), EventFilter(server="alpha", method="initialize"),
                EventFilter(view="view-7"), EventFilter(text="needle"), EventFilter(text="CAFÉ"),
                EventFilter(channel="agent", text='"id": 4')):
        assert seqs(insp.query(flt, limit=10_000)) == [e["seq"] for e in every if flt.matches(e)], flt


def test_after_hides_what_a_cleared_screen_dropped(insp: Inspector) -> None:
    """`after` is a floor: counts and pages only see newer events."""
    fill(insp, 100)
    page = insp.page(limit=10, after=95)
    assert seqs(page.events) == [96, 97, 98, 99, 100]
    assert (page.matched, page.total, page.before) == (5, 100, None)
    assert insp.page(limit=10, after=100).events == []
    assert insp.page(limit=10, after=10**9).matched == 0


def test_a_full_ring_drops_the_oldest_and_cursors_still_work(tmp_path: Path) -> None:
    """With the ring full, seqs keep counting; cursors older than the ring give nothing more."""
    insp = Inspector(tmp_path / "i", capacity=100)
    fill(insp, 250)
    page = insp.page(limit=40)
    assert (page.total, page.capacity, page.newest) == (100, 100, 250)
    assert seqs(page.events) == list(range(211, 251))
    older = insp.page(limit=40, before=page.before)
    oldest = insp.page(limit=40, before=older.before)
    assert seqs(oldest.events) == list(range(151, 171)) and oldest.before is None
    assert insp.page(limit=40, before=120).events == []
    assert seqs(insp.page(limit=5, after=40).events) == list(range(246, 251))
    insp.close()
    assert len(list(read_log(tmp_path / "i"))) == 250  # the file keeps everything


def test_export_comes_in_chunks_that_add_up(insp: Inspector) -> None:
    """Chunks follow `next` → `after`, oldest first, and join into every matching line once."""
    fill(insp, 1234)
    for flt, expected in ((EventFilter(), list(range(1, 1235))),
                          (EventFilter(server="alpha"), list(range(1, 1235, 2))),
                          (EventFilter(text="needle"), [i + 1 for i in range(1234) if i % 250 == 7])):
        parts, after = [], None
        while True:
            chunk = insp.export(flt, after=after, limit=100)
            assert chunk.count == len(chunk.content.splitlines()) <= 100
            parts.append(chunk.content)
            if chunk.next is None:
                break
            after = chunk.next
        events = [json.loads(line) for line in "".join(parts).splitlines()]
        assert seqs(events) == expected
    assert insp.export(EventFilter(server="nobody")).count == 0


def test_pages_from_a_thread_while_events_are_recorded(insp: Inspector) -> None:
    """A query on another thread sees a consistent snapshot while recording goes on."""
    fill(insp, 5000)
    problems: list[str] = []
    done = threading.Event()

    def reader() -> None:
        while not done.is_set():
            page = insp.page(limit=500)
            got = seqs(page.events)
            if got != list(range(got[0], got[0] + len(got))) or got[-1] > page.newest:
                problems.append(f"not a run of seqs: {got[:3]}…{got[-3:]}")
            insp.page(EventFilter(text="needle"), limit=50)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        fill(insp, 5000, start=5000)
    finally:
        done.set()
        thread.join(30)
    assert not problems
    assert seqs(insp.query(limit=3)) == [9998, 9999, 10000]


def test_listeners_get_the_event_and_its_json_line(insp: Inspector) -> None:
    """subscribe() gets the dict; subscribe_json() the very line written to the file."""
    events: list[dict[str, Any]] = []
    lines: list[str] = []
    stop = insp.subscribe(events.append)
    insp.subscribe_json(lines.append)
    fill(insp, 3)
    stop()
    fill(insp, 1, start=3)
    assert seqs(events) == [1, 2, 3]
    assert [json.loads(line) for line in lines] == insp.query(limit=10)
    assert insp.servers == {"alpha", "beta"}


@pytest.mark.anyio
async def test_bridge_pages_queries_and_exports(paths: Paths) -> None:
    """inspector.page/query/export through the real Bridge, answered from a worker thread."""
    app = await start_app(paths, config=MokaConfig(), mode="headless", store=False)
    try:
        fill(app.inspector, 10_500)
        bridge = Bridge(app)

        async def call(method: str, **params: Any) -> Any:
            reply = await bridge.handle({"id": 1, "method": method, "params": params})
            assert reply is not None and "result" in reply, reply
            json.dumps(reply)  # what the carriers do with it
            return reply["result"]

        page = await call("inspector.page", limit=1000)
        assert len(page["events"]) == 1000 and page["before"] == page["events"][0]["seq"]
        assert page["matched"] >= 10_500 and {"alpha", "beta"} <= set(page["servers"])
        older = await call("inspector.page", limit=1000, before=page["before"], server="alpha")
        assert all(e["server"] == "alpha" and e["seq"] < page["before"] for e in older["events"])
        found = await call("inspector.page", text="needle 2757")
        assert [e["message"]["params"]["arguments"]["note"] for e in found["events"]] == ["The Needle 2757"]
        assert len(await call("inspector.query", limit=50_000)) == 10_000  # the old cap stays
        newest_two = await call("inspector.query", text="needle", limit=2)
        assert [e["message"]["params"]["arguments"]["note"] for e in newest_two] == ["The Needle 10007",
                                                                                   "The Needle 10257"]
        chunks = [await call("inspector.export", view="view-3", limit=400)]
        while chunks[-1]["next"] is not None:
            chunks.append(await call("inspector.export", view="view-3", limit=400, after=chunks[-1]["next"]))
        exported = [json.loads(line) for c in chunks for line in c["content"].splitlines()]
        assert len(chunks) == 3 and sum(c["count"] for c in chunks) == len(exported) == 1050
        assert exported == app.inspector.query(EventFilter(view="view-3"), limit=10_000)
        assert chunks[0]["filename"].startswith("moka-inspector-") and chunks[0]["filename"].endswith(".jsonl")
        bad = await bridge.handle({"id": 2, "method": "inspector.page", "params": {"before": "soon"}})
        assert bad is not None and bad["error"]["code"] == BridgeError.INVALID_PARAMS

        # The loop keeps turning while a search runs on its worker thread.
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await call("inspector.page", text="nothing like this")
        turned = ticks  # on the loop itself, the search would have finished before the ticker's first turn
        task.cancel()
        assert turned >= 1
    finally:
        await app.stop()


@pytest.mark.anyio
async def test_a_cursor_that_is_not_a_number_is_a_clear_params_error(tmp_path: Path) -> None:
    """Bad input from a client gets -32602 naming the field, not an internal error."""
    app = MokaApp(Paths(tmp_path / "config.json", tmp_path), config=MokaConfig(), mode="headless")
    reply = await Bridge(app).handle({"id": 1, "method": "inspector.page", "params": {"before": "soon"}})
    assert reply is not None and reply["error"]["code"] == -32602
    assert "'before'" in reply["error"]["message"] and "soon" in reply["error"]["message"]


def test_the_ring_keeps_as_many_events_as_the_setting_says(tmp_path: Path) -> None:
    """`inspector.ringEvents` caps what Moka holds in memory; the log on disk keeps everything."""
    config = MokaConfig.model_validate({"mcpServers": {}, "inspector": {"ringEvents": 1000}})
    app = MokaApp(Paths(tmp_path / "config.json", tmp_path / "data"), config=config)
    for i in range(2500):
        app.inspector.record("mcp", {"i": i}, method="x")
    page = app.inspector.page(limit=5)
    assert page.total == 1000 and page.capacity == 1000
    assert [e["message"]["i"] for e in page.events] == [2495, 2496, 2497, 2498, 2499]
    app.inspector.close()
    assert len(list(read_log(tmp_path / "data" / "inspector"))) == 2500
    with pytest.raises(ValueError):
        MokaConfig.model_validate({"inspector": {"ringEvents": 10}})  # fewer would hide a single burst


def test_the_last_event_of_a_burst_reaches_the_file_without_another_event(tmp_path: Path) -> None:
    """Writes are flushed at most every 0.2 s; the last lines of a burst must not wait for a next event.

    `moka inspect --follow` and anyone reading the file (a test waiting for a view to be created) read
    it from another process: an event followed by silence was kept in the buffer until the next one.
    """
    from support import until_sync

    from moka_shell.inspector_log import LogWriter, log_files

    writer = LogWriter(tmp_path)
    try:
        writer.write("2026-12-07", '{"n": "first"}')  # flushed: nothing was for 0.2 s
        writer.write("2026-12-07", '{"n": "last of the burst"}')  # within 0.2 s: buffered
        until_sync(lambda: any("last of the burst" in f.read_text() for f in log_files(tmp_path)),
                   "the burst's last line in the file", timeout=30)
    finally:
        writer.close()
