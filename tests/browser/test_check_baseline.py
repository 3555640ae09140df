"""`moka check --baseline DIR`: each view's light and dark screenshots against the ones stored in DIR.

`--update-baseline` writes them; the same view renders the same pixels run after run (its CSS
animations and transitions settled); a view whose painted output changed fails, naming its diff
image in the text, the JSON, the JUnit and the HTML report, and the exit code agrees with the matrix.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from browser_support import npm_stdio
from support import SERVERS

DEMO = {"command": "moka", "args": ["demo-server"]}


def card(look: str) -> dict[str, Any]:
    """The fixture server whose view paints the look BASELINE_LOOK names (tests/servers/baseline_server.py)."""
    return {"command": sys.executable, "args": [str(SERVERS / "baseline_server.py")], "env": {"BASELINE_LOOK": look}}


def check(folder: Path, servers: dict[str, Any], *args: str, text: bool = False) -> tuple[int, Any]:
    """`moka check ARGS` (with --json unless `text`): its exit code and its report (or its text)."""
    if not (os.environ.get("MOKA_CHROMIUM") or shutil.which("chromium")):
        pytest.skip("chromium is not installed")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"mcpServers": servers}))
    env = {**os.environ, "MOKA_CONFIG": str(folder / "config.json"), "MOKA_DATA_DIR": str(folder / "data")}
    proc = subprocess.run([sys.executable, "-m", "moka_shell", "check", "--engine", "chromium", *args,
                           *([] if text else ["--json"])], capture_output=True, text=True, env=env, timeout=240)
    if text:
        return proc.returncode, proc.stdout + proc.stderr
    assert proc.stdout.strip().startswith("{"), proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    cells = [s for row in report["matrix"].values() for s in row.values()]
    # The exit code always agrees with the matrix: 1 exactly when some cell is FAIL.
    assert (proc.returncode == 1) == ("FAIL" in cells), (proc.returncode, report["matrix"])
    return proc.returncode, report


@pytest.fixture(scope="module")
def card_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One sequence on the fixture view: write its baselines (teal), check it changed (orange) with
    JSON, JUnit and HTML, then as text, then check it back in teal."""
    root = tmp_path_factory.mktemp("card")
    base, out = root / "baseline", root / "out"
    runs: dict[str, Any] = {"base": base, "out": out}
    runs["update"] = check(root / "update", {"card": card("teal")}, "card", "--baseline", str(base),
                           "--update-baseline")
    runs["changed"] = check(root / "changed", {"card": card("orange")}, "card", "--baseline", str(base),
                            "--junit", str(out / "moka.xml"), "--html", str(out / "moka.html"))
    runs["diffs"] = sorted(p.name for p in (base / "diff").glob("*.png"))
    runs["text"] = check(root / "text", {"card": card("orange")}, "card", "--baseline", str(base), text=True)
    runs["same"] = check(root / "same", {"card": card("teal")}, "card", "--baseline", str(base))
    return runs


def test_update_baseline_writes_a_png_per_view_and_scheme(card_runs: dict[str, Any]) -> None:
    code, report = card_runs["update"]
    assert code == 0, report
    (view,) = report["views"]
    assert {k: v["status"] for k, v in view["baseline"].items()} == {"light": "written", "dark": "written"}
    assert sorted(p.name for p in card_runs["base"].glob("*.png")) == ["card-card-moka-dark.png",
                                                                      "card-card-moka-light.png"]
    assert report["baseline"]["update"] is True and report["baseline"]["tolerancePercent"] == 0.1


def test_an_animated_view_gives_the_same_pixels_run_after_run(card_runs: dict[str, Any]) -> None:
    """The card fades in over 3 s and pulses forever; settled, both screenshots match to the pixel,
    and the diffs of the changed run before are gone."""
    code, report = card_runs["same"]
    assert code == 0, report
    (view,) = report["views"]
    assert view["ok"], view
    for scheme in ("light", "dark"):
        assert view["baseline"][scheme]["status"] == "same", view["baseline"]
        assert view["baseline"][scheme]["changedPixels"] == 0, view["baseline"]
    assert not list((card_runs["base"] / "diff").glob("*.png"))


def test_a_changed_view_fails_naming_its_diff_in_json_junit_html_and_text(card_runs: dict[str, Any]) -> None:
    code, report = card_runs["changed"]
    assert code == 1 and report["matrix"] == {"card": {"moka": "FAIL"}}
    (view,) = report["views"]
    diff_dir = card_runs["base"] / "diff"
    assert card_runs["diffs"] == ["card-card-moka-dark.diff.png", "card-card-moka-light.diff.png"]
    changes = [f for f in view["findings"] if f["class"] == "visual-change"]
    assert len(changes) == 2 and all(f["severity"] == "failure" for f in changes)
    for scheme in ("light", "dark"):
        entry = view["baseline"][scheme]
        diff = str(diff_dir / f"card-card-moka-{scheme}.diff.png")
        assert entry["status"] == "changed" and entry["diff"] == diff and entry["changedPercent"] > 10, entry
        assert any(diff in f["message"] for f in changes)
    assert view["failure"].startswith("the light screenshot changed") and "diff image: " in view["failure"]
    # JUnit: the case fails as a visual change, its message naming the diff image.
    (case,) = ET.parse(card_runs["out"] / "moka.xml").getroot().iter("testcase")
    failure = case.find("failure")
    assert failure is not None and failure.get("type") == "visual-change"
    assert str(diff_dir / "card-card-moka-light.diff.png") in (failure.get("message") or "")
    assert str(diff_dir / "card-card-moka-dark.diff.png") in (failure.text or "")
    # HTML: the diff images embedded, named by their files.
    page = (card_runs["out"] / "moka.html").read_text(encoding="utf-8")
    assert page.count('class="shots baseline-diffs"') == 1 and "card-card-moka-dark.diff.png" in page
    # Text: the failure, the diff, the exit code.
    code, text = card_runs["text"]
    assert code == 1, text
    assert f"diff image: {diff_dir / 'card-card-moka-light.diff.png'}" in text
    assert "[visual-change] fix:" in text and "(exit code 1)" in text


def test_the_demo_matches_its_baseline_within_a_tolerance_for_its_random_die(tmp_path: Path) -> None:
    """roll_dice rolls at random: a die's face is about 0.25 % of its view, which --baseline-tolerance 1 covers."""
    base = tmp_path / "baseline"
    args = ("moka-demo", "--tool", "roll_dice", "--baseline", str(base))
    code, report = check(tmp_path / "update", {"moka-demo": DEMO}, *args, "--update-baseline")
    assert code == 0, report
    assert sorted(p.name for p in base.glob("*.png")) == ["moka-demo-roll_dice-moka-dark.png",
                                                         "moka-demo-roll_dice-moka-light.png"]
    code, report = check(tmp_path / "again", {"moka-demo": DEMO}, *args, "--baseline-tolerance", "1")
    assert code == 0, report
    (view,) = report["views"]
    assert {k: v["status"] for k, v in view["baseline"].items()} == {"light": "same", "dark": "same"}


def test_an_official_app_passes_against_its_own_fresh_baseline(tmp_path: Path) -> None:
    """basic-vanillajs shows the server's clock: its seconds change about 0.1 % of the view's pixels, which
    --baseline-tolerance 0.5 covers (docs/app-authors.md); everything else renders the same pixels."""
    servers = {"vanilla": npm_stdio("mcp-server-basic-vanillajs")}
    base = tmp_path / "baseline"
    code, report = check(tmp_path / "update", servers, "vanilla", "--baseline", str(base), "--update-baseline")
    assert code == 0, report
    assert sorted(p.name for p in base.glob("*.png")) == ["vanilla-get-time-moka-dark.png",
                                                         "vanilla-get-time-moka-light.png"]
    code, report = check(tmp_path / "again", servers, "vanilla", "--baseline", str(base), "--baseline-tolerance", "0.5")
    assert code == 0, report
    (view,) = report["views"]
    assert {k: v["status"] for k, v in view["baseline"].items()} == {"light": "same", "dark": "same"}
    assert all(v["changedPercent"] < 0.5 for v in view["baseline"].values()), view["baseline"]


def test_the_baseline_options_are_checked(tmp_path: Path) -> None:
    """--update-baseline and --baseline-tolerance need --baseline; the tolerance is a percentage."""
    for args, why in ((["--update-baseline"], "need --baseline DIR"),
                      (["--baseline", "b", "--baseline-tolerance", "101"], "percentage of pixels, from 0 to 100")):
        code, text = check(tmp_path, {"moka-demo": DEMO}, "moka-demo", *args, text=True)
        assert code == 2 and why in text, text


def png(path: Path, size: tuple[int, int], colour: tuple[int, int, int],
        spots: list[tuple[int, int, tuple[int, int, int]]] | None = None) -> Path:
    """A plain PNG with some pixels of other colours."""
    from PIL import Image

    image = Image.new("RGB", size, colour)
    for x, y, c in spots or []:
        image.putpixel((x, y), c)
    image.save(path)
    return path


def test_the_comparison_counts_changed_pixels_past_a_threshold_and_a_new_size(tmp_path: Path) -> None:
    """A channel must move by more than 16 of 255; pixels only one image covers are changed."""
    from moka_shell.shells.check.baseline import compare

    a = png(tmp_path / "a.png", (100, 100), (200, 200, 200))
    jitter = png(tmp_path / "j.png", (100, 100), (200, 200, 200), [(i, 5, (210, 190, 200)) for i in range(50)])
    spots = png(tmp_path / "s.png", (100, 100), (200, 200, 200), [(i, 5, (20, 200, 200)) for i in range(50)])
    taller = png(tmp_path / "t.png", (100, 110), (200, 200, 200))
    assert compare(a, jitter)[0].changed == 0
    result = compare(a, spots)[0]
    assert result.changed == 50 and result.percent == pytest.approx(0.5)
    result = compare(a, taller)[0]
    assert (result.changed, result.before, result.now) == (1000, (100, 100), (100, 110))


class FlickerEngine:
    """An engine whose screenshots differ the first `moving` times (or always), then hold still."""

    def __init__(self, moving: int | None) -> None:
        self.moving, self.shots = moving, 0

    def screenshot(self, path: str) -> bool:
        self.shots += 1
        still = self.moving is not None and self.shots > self.moving
        Path(path).write_bytes(b"still" if still else f"frame {self.shots}".encode())
        return True

    def pause(self, seconds: float) -> None:
        pass  # nothing to wait for: the next screenshot is the next frame


def test_a_screenshot_is_taken_again_until_two_in_a_row_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A view drawn by a script (a chart's animation) is kept once it holds still; one that never does is said so."""
    from moka_shell.shells.check import baseline

    engine = FlickerEngine(moving=3)
    assert baseline.steady_screenshot(engine, str(tmp_path / "a.png")) == (True, True)  # type: ignore[arg-type]
    assert engine.shots == 5 and (tmp_path / "a.png").read_bytes() == b"still"
    monkeypatch.setattr(baseline, "STEADY_WITHIN", 0.05)
    assert baseline.steady_screenshot(FlickerEngine(None), str(tmp_path / "b.png")) == (True, False)  # type: ignore[arg-type]


def test_an_unsteady_screenshot_is_a_warning_and_a_missing_baseline_a_failure(tmp_path: Path) -> None:
    from moka_shell.shells.check.baseline import Baselines, judge
    from moka_shell.shells.check.report import ViewReport

    shots = {s: str(png(tmp_path / f"{s}.png", (40, 40), (9, 9, 9))) for s in ("light", "dark")}
    vr = ViewReport(tool="t", arguments={}, resource_uri="ui://x/t", screenshots=shots)
    judge(vr, "s-t-moka", Baselines(str(tmp_path / "base"), update=True), {"dark"})
    assert vr.ok and vr.baseline["dark"] == {"baseline": str(tmp_path / "base" / "s-t-moka-dark.png"),
                                             "steady": False, "status": "written"}
    assert [f["class"] for f in vr.findings] == ["baseline-unsteady"] and vr.status == "WARN"
    vr = ViewReport(tool="t", arguments={}, resource_uri="ui://x/t", screenshots=shots)
    judge(vr, "other", Baselines(str(tmp_path / "base")), set())
    assert not vr.ok and [f["class"] for f in vr.findings] == ["baseline-missing", "baseline-missing"]
