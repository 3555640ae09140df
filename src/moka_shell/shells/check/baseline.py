"""``moka check --baseline DIR``: each view's screenshots against the ones stored in DIR, with a diff image.

A baseline is the PNG ``--screenshot`` takes (``SERVER-TOOL-PROFILE-SCHEME.png``), kept in DIR.
A pixel counts as changed when one of its channels moved by more than ``PIXEL_THRESHOLD``; a
screenshot changed when more than ``tolerance`` percent of its pixels did, or when its size did.
A change fails the view (so its tool × profile cell) and writes one image: the baseline, the
screenshot now, and the changed pixels in red over a faded copy of it.
"""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from moka_shell.shells.check.findings import Finding

if TYPE_CHECKING:
    from PIL.Image import Image

    from moka_shell.shells.check.engines import Engine
    from moka_shell.shells.check.report import ViewReport

# Chromium's software rendering gives the same pixels run after run; this only absorbs the odd
# anti-aliasing step of a GPU or another build without hiding a real colour change.
PIXEL_THRESHOLD = 16
# Default percent of pixels that may change (BackstopJS's default too): a die's face (0.25 % of the
# demo's dice view) is a change; a clock's seconds (about 0.1 % of the official vanillajs example)
# sit on the line, so a view showing the time needs a tolerance of its own.
TOLERANCE = 0.1
SCHEMES = ("light", "dark")
# A screenshot is kept once the next one, taken this long after, has the same bytes; a view whose
# pixels still move after STEADY_WITHIN seconds is compared as it was last (and warned about).
STEADY_PAUSE, STEADY_WITHIN = 0.1, 3.0
_GAP, _HEAD = 8, 18  # the diff image's gutter between panels and its label row, in px


def stem(server: str, tool: str, profile: str) -> str:
    """The file name shared by a view's screenshots and baselines, without ``-SCHEME.png``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{server}-{tool}-{profile}")


@dataclass(frozen=True)
class Baselines:
    """Where baselines live and how they are judged (--baseline, --update-baseline, --baseline-tolerance)."""

    folder: str
    update: bool = False
    tolerance: float = TOLERANCE  # percent of a screenshot's pixels
    diff_folder: str | None = None  # where diff images go; DIR/diff when None

    def path(self, name: str, scheme: str) -> Path:
        """The stored baseline of one view in one scheme."""
        return Path(self.folder) / f"{name}-{scheme}.png"

    @property
    def diff_dir(self) -> Path:
        """Where diff images go: the --screenshot folder, else DIR/diff."""
        return Path(self.diff_folder or Path(self.folder) / "diff")

    def diff_path(self, name: str, scheme: str) -> Path:
        """Where the diff image of one view in one scheme is written when it changed."""
        return self.diff_dir / f"{name}-{scheme}.diff.png"


def steady_screenshot(engine: Engine, path: str) -> tuple[bool, bool]:
    """A screenshot taken again until two in a row agree: (taken, steady)."""
    # What Playwright's screenshot cannot stop moves between two: animation a script drives frame by
    # frame (a chart library's, a counter), which sends no message and so outlasts the settle time.
    if not engine.screenshot(path):
        return False, False
    last = Path(path).read_bytes()
    deadline = time.monotonic() + STEADY_WITHIN
    while time.monotonic() < deadline:
        engine.pause(STEADY_PAUSE)
        if not engine.screenshot(path):
            return False, False
        now = Path(path).read_bytes()
        if now == last:
            return True, True
        last = now
    return True, False


@dataclass
class Comparison:
    """How far a screenshot is from its baseline."""

    changed: int  # pixels
    total: int
    before: tuple[int, int]  # the baseline's width and height
    now: tuple[int, int]

    @property
    def percent(self) -> float:
        """Changed pixels, as a percentage of the larger of the two images."""
        return 100.0 * self.changed / max(self.total, 1)


def compare(baseline: Path, screenshot: Path) -> tuple[Comparison, Image, Image, Image]:
    """Count the changed pixels; returns the comparison, both images and the mask of changes."""
    from PIL import Image, ImageChops

    with Image.open(baseline) as a, Image.open(screenshot) as b:
        before, now = a.convert("RGB"), b.convert("RGB")
    width, height = max(before.width, now.width), max(before.height, now.height)
    # Both on the same canvas: what only one of them covers is changed, whatever its colour.
    pa, pb = Image.new("RGB", (width, height)), Image.new("RGB", (width, height))
    pa.paste(before, (0, 0))
    pb.paste(now, (0, 0))
    r, g, bl = ImageChops.difference(pa, pb).split()
    mask = ImageChops.lighter(ImageChops.lighter(r, g), bl).point(lambda v: 255 if v > PIXEL_THRESHOLD else 0)
    common = (min(before.width, now.width), min(before.height, now.height))
    outside = Image.new("L", (width, height), 255)
    outside.paste(0, (0, 0, *common))
    mask = ImageChops.lighter(mask, outside)
    changed = mask.histogram()[255]
    return Comparison(changed, width * height, before.size, now.size), before, now, mask


def write_diff(before: Image, now: Image, mask: Image, path: Path) -> None:
    """One PNG: the baseline, the screenshot now, and the changed pixels in red over a faded copy."""
    from PIL import Image, ImageDraw

    width, height = mask.size
    faded = Image.blend(Image.new("RGB", now.size, "white"), now.convert("L").convert("RGB"), 0.3)
    marked = Image.new("RGB", (width, height), "white")
    marked.paste(faded, (0, 0))
    marked.paste((230, 0, 60), (0, 0), mask)
    panels = [("baseline", before), ("now", now), ("changed pixels", marked)]
    out = Image.new("RGB", (3 * width + 2 * _GAP, height + _HEAD), (128, 128, 128))
    draw = ImageDraw.Draw(out)
    for i, (label, image) in enumerate(panels):
        x = i * (width + _GAP)
        out.paste(image, (x, _HEAD))
        draw.text((x + 4, 3), label, fill="white")
    path.parent.mkdir(parents=True, exist_ok=True)
    out.save(path)


def _add(vr: ViewReport, finding: Finding) -> None:
    vr.findings.append(finding.to_json())
    if finding.severity == "failure":
        vr.fail(finding.message)
        vr.problems.append(finding.message)
    else:
        vr.warnings.append(finding.message)


def judge(vr: ViewReport, name: str, baselines: Baselines, unsteady: set[str]) -> None:
    """Compare each of a view's screenshots with its baseline (or store it, with update); a change fails the view."""
    for scheme in SCHEMES:
        stored, diff = baselines.path(name, scheme), baselines.diff_path(name, scheme)
        shot = vr.screenshots.get(scheme)
        entry: dict[str, Any] = {"baseline": str(stored)}
        vr.baseline[scheme] = entry
        if not shot:
            # The engine took none (WebKitGTK), or the theme switch failed: nothing to hold against DIR.
            entry["status"] = "not-compared"
            _add(vr, Finding("baseline-not-compared", f"the {scheme} screenshot was not compared with its baseline: "
                             "this engine took none", "warning", detail={"scheme": scheme}))
            continue
        diff.unlink(missing_ok=True)  # a diff left from an earlier run would name a change that is gone
        if scheme in unsteady:
            entry["steady"] = False
            _add(vr, Finding("baseline-unsteady", f"the {scheme} screenshot still changed {STEADY_WITHIN:g} s after "
                             "the view settled (an animation a script drives?); it was compared as it was last",
                             "warning", detail={"scheme": scheme}))
        if baselines.update:
            stored.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, stored)
            entry["status"] = "written"
            continue
        if not stored.is_file():
            entry["status"] = "missing"
            _add(vr, Finding("baseline-missing", f"no {scheme} baseline to compare with: {stored} does not exist",
                             detail={"scheme": scheme, "baseline": str(stored)}))
            continue
        result, before, now, mask = compare(stored, Path(shot))
        entry.update(changedPixels=result.changed, changedPercent=round(result.percent, 4),
                     size={"baseline": list(result.before), "now": list(result.now)})
        resized = result.before != result.now
        if not resized and result.percent <= baselines.tolerance:
            entry["status"] = "same"
            continue
        write_diff(before, now, mask, diff)
        entry.update(status="changed", diff=str(diff))
        size = (f"; its size changed from {result.before[0]} × {result.before[1]} to "
                f"{result.now[0]} × {result.now[1]} px" if resized else "")
        _add(vr, Finding("visual-change", f"the {scheme} screenshot changed: {result.percent:.2f} % of its pixels "
                         f"differ from {stored} (tolerance {baselines.tolerance:g} %){size}; diff image: {diff}",
                         detail={"scheme": scheme, **entry}))

