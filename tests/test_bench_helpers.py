"""The benchmark's own helpers that decide what a figure means (no timings are asserted here)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import appbridge_ref, procs, streaming
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
