"""The benchmark's own helpers that decide what a figure means (no timings are asserted here)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import appbridge_ref, cli_start, procs, streaming
from bench.__main__ import FULL_ONLY, SUITES


def test_roles_come_from_the_command_line() -> None:
    """A renderer, a utility and the demo server are told apart by their real argv."""
    sleep = "import time; time.sleep(30)"
    kids = [subprocess.Popen([sys.executable, "-c", sleep, *args]) for args in (
        ["--type=renderer"], ["--type=utility", "--utility-sub-type=network.mojom.NetworkService"], ["demo-server"])]
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(
                Path(f"/proc/{k.pid}/cmdline").read_bytes().count(b"\0") > 2 for k in kids):
            time.sleep(0.01)
        roles = [procs.role(k.pid, root=-1) for k in kids]
        assert roles == ["renderer", "utility NetworkService", "demo server"]
        assert procs.role(kids[0].pid, root=kids[0].pid).startswith("app")
        tree = procs.tree([kids[0].pid])
        by = procs.by_role(tree, root=-1)
        assert by["renderer"]["processes"] == 1 and by["renderer"]["pss_mib"] > 0
    finally:
        for k in kids:
            k.kill()
            k.wait()


def test_the_appbridge_reference_says_how_to_build_its_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without the bundle the suite is skipped, naming the set-up command; with it, it runs."""
    monkeypatch.setattr(appbridge_ref, "BUNDLE", tmp_path / "dist" / "host.js")
    monkeypatch.setattr(appbridge_ref, "BENCH", tmp_path / "bench")
    why = appbridge_ref.missing_bundle()
    assert why is not None and "scripts/setup.sh" in why and "host.js" in why
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "host.js").write_text("", encoding="utf-8")
    assert appbridge_ref.missing_bundle() is None


def test_streaming_tokens_are_numbered_and_found_on_the_wire() -> None:
    """Every chunk of a turn carries its own token, and the wire pattern finds each once."""
    steps = streaming.turn(12, 0.0)
    wire = b"".join(f'data: {{"content": "{s.text}"}}\n\n'.encode() for s in steps)
    assert [m.group(1).decode() for m in streaming.TOKEN.finditer(wire)] == [f"{i:03d}" for i in range(12)]


def test_heavy_suites_stay_out_of_the_quick_run() -> None:
    """memory_parts is a registered suite, run only with --full or --only."""
    assert FULL_ONLY <= set(SUITES)


def test_cli_runs_are_split_the_same_way_for_moka_and_the_bare_client() -> None:
    """Moka's inspector events and the bare client's stamps give start, session and exit that add up to the wall."""
    events = [{"time": 100.5, "method": "status/connecting"}, {"time": 100.6, "method": "status/ready"},
              {"time": 100.7, "method": "view/created", "view": "v1"}, {"time": 100.8, "view": "v1"},
              {"time": 100.9, "method": "ui/resource-teardown", "view": "v1"},
              {"time": 100.95, "view": "v1"}, {"time": 101.0, "method": "view/closed", "view": "v1"},
              {"time": 101.1, "method": "status/ready"}, {"time": 101.2, "method": "status/stopped"}]
    stamps = cli_start.stamps_of(events, spawned=100.0)
    assert stamps["ready"] == 600 and stamps["stopped"] == 1200
    assert stamps["views"] == [{"created": 700, "last": 800, "teardown": 900, "closed": 1000}]
    moka = cli_start.phases(cli_start.Run(1500.0, stamps))
    bare = cli_start.phases(cli_start.Run(900.0, {"running": 30, "imported": 400, "closed": 700}))
    assert moka == {"start": 500, "session": 700, "exit": 300}
    assert bare == {"start": 400, "session": 300, "exit": 200}


def test_import_times_name_what_only_moka_imports() -> None:
    """-X importtime lines become self times; what the bare client also imports is not Moka's extra."""
    text = ("import time: self [us] | cumulative | imported package\n"
            "import time:      2000 |       2000 |   mcp_types\n"
            "import time:      3000 |       3000 |   moka_shell.core.app\n"
            "import time:      1000 |       1000 | pydantic\nsome other line\n")
    mine = cli_start.self_times(text)
    assert mine == {"mcp_types": 2.0, "moka_shell.core.app": 3.0, "pydantic": 1.0}
    summary = cli_start.import_summary([mine], [{"mcp_types": 1.0}])
    assert summary["only_moka_ms"] == 4 and summary["only_moka_by_package_ms"] == {"moka_shell.core.app": 3.0,
                                                                                 "pydantic": 1.0}
