"""Reliability of the inspector (findings R2.6, R1.13, R5.3, R5.6, R1.7, R3.11): a log that can't be
written never raises, memory and disk stay under their caps, and `moka inspect` survives any file."""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from moka_shell.inspector import MAX_MESSAGE, EventFilter, Inspector, read_log, read_tail
from moka_shell.inspector_log import LogWriter, log_files

TODAY = dt.date.today().strftime("%Y-%m-%d")


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs (a disk that can fill up); skipped where mounting is not allowed."""
    mnt = tmp_path / "small-disk"
    mnt.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"can't mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_directory_where_the_log_should_be_is_reported_once_and_logging_resumes(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Writes fail (IsADirectoryError): record() never raises, the drop is counted and said once."""
    folder = tmp_path / "inspector"
    blocker = folder / f"events-{TODAY}.jsonl"
    blocker.mkdir(parents=True)
    insp = Inspector(folder, log_retry_after=0)
    with caplog.at_level(logging.WARNING, logger="moka.inspector"):
        for i in range(20):
            insp.record("mcp.rpc", {"id": i, "method": "tools/call"}, server="a")
    assert insp.problem is not None and "can't be written" in insp.problem
    assert insp.status()["dropped"] == 20 and insp.status()["writing"] is False
    assert sum("can't be written" in r.getMessage() for r in caplog.records) == 1
    assert len(insp.query(limit=100)) == 20  # the ring still has every event
    assert insp.page().to_json()["logProblem"] == insp.problem

    blocker.rmdir()
    insp.record("mcp.rpc", {"id": "after"}, server="a")
    insp.close()
    assert insp.problem is None and insp.status()["writing"] is True
    assert [e["message"]["id"] for e in read_log(folder)] == ["after"]


def test_a_full_disk_never_breaks_recording_and_writing_resumes_when_space_returns(tmpfs: Path) -> None:
    """On a 2 MB tmpfs filled up: ENOSPC is counted; after freeing space new events reach the file."""
    insp = Inspector(tmpfs / "inspector", log_retry_after=0)
    insp.record("server", {"hello": 1})
    insp.close()
    filler = tmpfs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"x" * 65536)
    except OSError:  # ENOSPC: the disk is full
        pass
    finally:
        os.close(fd)
    for i in range(300):  # far more than the page cache buffer, so flushes really hit ENOSPC
        insp.record("mcp.rpc", {"id": i, "pad": "y" * 2000}, server="demo")
    insp.close()
    assert insp.problem is not None and "No space left" in insp.problem
    assert insp.status()["dropped"] > 0

    filler.unlink()
    insp.record("mcp.rpc", {"id": "back"}, server="demo")
    insp.close()
    assert insp.problem is None
    assert list(read_log(tmpfs / "inspector"))[-1]["message"]["id"] == "back"


def test_the_ring_is_capped_by_bytes_and_stays_consecutive(tmp_path: Path) -> None:
    """100 events of 100 KB in a 1 MB ring: the newest that fit stay, cursors still work (R5.3)."""
    insp = Inspector(None, ring_bytes=1024 * 1024)
    for i in range(100):
        insp.record("mcp.rpc", {"id": i, "blob": "z" * 100_000})
    page = insp.page(limit=1000)
    kept = [e["seq"] for e in page.events]
    assert 5 <= len(kept) <= 11 and kept == list(range(101 - len(kept), 101))
    assert sum(len(json.dumps(e)) for e in page.events) <= 1024 * 1024
    assert insp.page(limit=2, before=kept[-1]).events[-1]["seq"] == kept[-2]


def test_a_huge_message_is_stored_as_a_preview_with_its_size(tmp_path: Path) -> None:
    """A 5 MB tool result is kept as {moka/truncated, size, preview} in the ring and on disk (R1.13)."""
    folder = tmp_path / "inspector"
    insp = Inspector(folder)
    big = {"jsonrpc": "2.0", "id": 7, "result": {"content": [{"type": "text", "text": "w" * 5_000_000}]}}
    insp.record("mcp.rpc", big, direction="in", server="big")
    insp.close()
    stored = insp.query()[0]["message"]
    assert stored["moka/truncated"] is True and stored["size"] > 5_000_000
    assert stored["preview"].startswith('{"jsonrpc": "2.0", "id": 7')
    assert sum(p.stat().st_size for p in log_files(folder)) < MAX_MESSAGE
    assert next(read_log(folder))["message"] == stored


def test_the_log_rotates_by_size_and_deletes_the_oldest_past_the_cap(tmp_path: Path) -> None:
    """6 MB of events under a 1 MB cap: several parts, at most the cap plus one part on disk (R1.7, R5.6)."""
    folder = tmp_path / "inspector"
    insp = Inspector(folder, max_log_bytes=1024 * 1024)
    for i in range(3000):
        insp.record("server", {"stderr": f"{i} " + "s" * 2000}, server="loud", method="stderr")
    insp.close()
    files = log_files(folder)
    total = sum(p.stat().st_size for p in files)
    assert len(files) >= 5 and all(p.name.startswith(f"events-{TODAY}") for p in files)
    assert total <= 1024 * 1024 + 110 * 1024
    seqs = [e["seq"] for e in read_log(folder)]
    assert seqs[-1] == 3000 and seqs[0] > 1 and seqs == list(range(seqs[0], 3001))  # oldest went first


def test_days_get_their_own_files_and_read_back_in_order(tmp_path: Path) -> None:
    """The writer starts a new file on a new day; readers go by day, then part."""
    writer = LogWriter(tmp_path)
    for day, n in (("2026-01-01", 1), ("2026-01-01", 2), ("2026-01-02", 3)):
        writer.write(day, json.dumps({"seq": n, "time": 1.0, "channel": "agent", "message": {}}))
    writer.close()
    assert [p.name for p in log_files(tmp_path)] == ["events-2026-01-01.jsonl", "events-2026-01-02.jsonl"]
    assert [e["seq"] for e in read_log(tmp_path)] == [1, 2, 3]


def _event(seq: int, **extra: object) -> bytes:
    return json.dumps({"seq": seq, "time": 1700000000.0 + seq, "channel": "mcp.rpc", "server": "s",
                       "method": "tools/call", "message": {"n": seq}, **extra}).encode() + b"\n"


def test_odd_lines_and_a_directory_named_like_a_log_are_skipped_by_moka_inspect(tmp_path: Path) -> None:
    """Invalid UTF-8, a non-object, a wrong `time` type, a directory: rc 0 and only good events (R3.11)."""
    folder = tmp_path / "data" / "inspector"
    folder.mkdir(parents=True)
    (folder / "events-2026-01-01.jsonl").write_bytes(
        _event(1) + b"\xff\xfe not utf-8 \xc3\x28\n" + b"[1, 2, 3]\n" + _event(2, time="yesterday")
        + _event(3, server=5) + b'{"seq": 4, "time": 1.0, "message": "caf\xe9"}\n' + _event(5) + b'{"seq": 6, "ti')
    (folder / "events-2026-01-02.jsonl").mkdir()
    (folder / "events-2026-01-03.jsonl").write_bytes(_event(7))
    cmd = [sys.executable, "-m", "moka_shell", "--config", str(tmp_path / "config.json"),
           "--data-dir", str(tmp_path / "data"), "inspect", "--json", "--limit", "50"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONUTF8": "1"})
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert [json.loads(line)["seq"] for line in done.stdout.splitlines()] == [1, 4, 5, 7]
    text = subprocess.run(cmd[:-3] + ["--limit", "2"], capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and len(text.stdout.splitlines()) == 2, text.stderr


def test_reading_the_tail_of_a_big_log_takes_bounded_memory(tmp_path: Path) -> None:
    """The newest events of a 30 MB log come from its end, without loading the rest (R5.6)."""
    folder = tmp_path / "inspector"
    folder.mkdir()
    with (folder / "events-2026-01-01.jsonl").open("wb") as fh:
        for seq in range(1, 60_001):
            fh.write(_event(seq, pad="p" * 400))
    (folder / "events-2026-01-02.jsonl").write_bytes(_event(60_001, server="other"))
    tracemalloc.start()
    try:
        newest = read_tail(folder, EventFilter().matches, 5)
        only_s = read_tail(folder, EventFilter(server="s").matches, 3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [e["seq"] for e in newest] == [59_997, 59_998, 59_999, 60_000, 60_001]
    assert [e["seq"] for e in only_s] == [59_998, 59_999, 60_000]
    assert peak < 2 * 1024 * 1024, peak


def test_the_log_cap_is_a_setting_and_a_failing_log_is_an_app_problem(tmp_path: Path) -> None:
    """`inspector.maxLogMB` in config.json sets the disk cap; a log that can't be written shows in app.info."""
    import asyncio

    from moka_shell.bridge import Bridge
    from moka_shell.config import ConfigFile
    from moka_shell.core.app import MokaApp
    from moka_shell.paths import Paths

    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {}, "inspector": {"maxLogMB": 12}}))
    (tmp_path / "inspector").write_text("a file where the log folder should be")
    paths = Paths(tmp_path / "config.json", tmp_path)
    assert ConfigFile(paths.config_file).config.inspector.max_log_mb == 12
    app = MokaApp(paths)
    assert app.inspector._log is not None and app.inspector._log.max_bytes == 12 * 2**20
    app.inspector.record("server", {"line": "hello"}, server="x")
    info = asyncio.run(Bridge(app).handle({"id": 1, "method": "app.info"}))
    assert info is not None
    assert any("inspector's log can't be written" in p for p in info["result"]["problems"])
    app.inspector.close()


def test_recording_never_raises_whatever_the_message_holds(tmp_path: Path) -> None:
    """Odd values (a __str__ that raises, ids of every type, deep nesting, bytes) are stored, never raised."""

    class Hostile:
        def __str__(self) -> str:
            raise RuntimeError("no string for you")

    deep: dict[str, object] = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]  # type: ignore[assignment]
    odd = [{"id": Hostile(), "method": "tools/call"}, {"id": [1], "result": {}}, {"id": {"a": 1}, "method": 5},
           {"id": float("nan"), "method": "x"}, {"id": 10**40, "error": {}}, deep, {"blob": b"\xff\x00"},
           {"params": Hostile()}, [Hostile()], "plain text", None]
    insp = Inspector(tmp_path / "inspector")
    for i, message in enumerate(odd):
        insp.record("mcp.rpc", message, direction="in" if i % 2 else "out", server="odd")
    insp.close()
    assert len(insp.query(limit=100)) == len(odd)
    assert len(list(read_log(tmp_path / "inspector"))) == len(odd)


HOSTILE_VALUES: list[object] = [1e20, -1e20, 1e400, -1e400, float("nan"), 2**70, -(2**70), 0, -1, 1e-300, True,
                                None, "", "yesterday", "\x1b[31m\u202e", [1, [2, [3]]], {"a": {"b": None}},
                                "x" * 10_000]


def test_moka_inspect_survives_any_value_in_any_field(tmp_path: Path) -> None:
    """Every field of an event, including `time`, holding any JSON value: rc 0, no traceback, in both
    output forms (R3.11: `"time": 1e20` was an OverflowError traceback in plain `moka inspect`)."""
    folder = tmp_path / "data" / "inspector"
    folder.mkdir(parents=True)
    fields = ["seq", "time", "channel", "direction", "server", "view", "method", "message", "extra"]
    lines = []
    for field in fields:
        for value in HOSTILE_VALUES:
            ev: dict[str, object] = {"seq": 1, "time": 1700000000.0, "channel": "mcp.rpc", "server": "s",
                                     "method": "tools/call", "message": {"n": 1}}
            ev[field] = value
            lines.append(json.dumps(ev))  # 1e400 and NaN are written as Infinity and NaN, as Python reads them
    lines.append('{"seq": 2, "time": 1e400, "message": ' + "[" * 500 + "]" * 500 + "}")
    (folder / "events-2026-01-01.jsonl").write_text("\n".join(lines) + "\n")
    base = [sys.executable, "-m", "moka_shell", "--config", str(tmp_path / "config.json"),
            "--data-dir", str(tmp_path / "data"), "inspect", "--limit", "1000"]
    shown = {}
    for form in ([], ["--json"]):
        done = subprocess.run(base + form, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PYTHONUTF8": "1"})
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        shown[bool(form)] = done.stdout.splitlines()
    assert len(shown[True]) == len(shown[False]) > len(fields)
    assert any(line.startswith("--:--:--.--- ") for line in shown[False])  # a time no clock can show


def test_moka_inspect_names_a_file_where_the_data_dir_should_be(tmp_path: Path) -> None:
    """A data dir that is a file is said as such, rc 1, not "no events yet" (R3.4's nit)."""
    data = tmp_path / "data"
    data.write_text("not a folder")
    done = subprocess.run([sys.executable, "-m", "moka_shell", "--config", str(tmp_path / "config.json"),
                           "--data-dir", str(data), "inspect"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{data} is a file, not a folder" in done.stderr and "no events yet" not in done.stderr
