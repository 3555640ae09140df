"""`moka check --html`'s page, from a report built by hand: self-contained, escaped, every part there."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from pathlib import Path

from moka_shell.shells.check.html_report import html_report
from moka_shell.shells.check.report import CheckReport, ViewReport

HOSTILE = "<img src=x onerror=alert(1)>"
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")


def report(tmp_path: Path) -> CheckReport:
    shot = tmp_path / "light.png"
    shot.write_bytes(PNG)
    bad = ViewReport(tool=HOSTILE, arguments={"q": HOSTILE}, resource_uri="ui://x/" + HOSTILE, ok=False,
                     failure="the CSP blocked https://api.example.com/data (connect-src)",
                     findings=[{"class": "csp-blocked", "severity": "failure",
                                "message": "the CSP blocked https://api.example.com/data (connect-src)",
                                "fix": "Declare it.", "detail": {"allowWith": {"connectDomains": ["https://api.example.com"]}}},
                               {"class": "thrown-error", "severity": "warning", "message": HOSTILE, "fix": "Catch it.",
                                "detail": {"stack": "Error: " + HOSTILE + "\n    at view:1:2"}},
                               {"class": "asks-permission", "severity": "info", "message": "would ask for camera",
                                "fix": "Nothing to fix."}],
                     errors=[{"t": 12.0, "kind": "console", "message": "console says " + HOSTILE}],
                     timings_ms={"initialize": 40.0, "initialized": 52.0},
                     timeline=[{"t": 40.0, "event": "view → host ui/initialize"}],
                     size={"requested": {"width": 700, "height": 300}, "changes": 2,
                           "rendered": {"frame": {"width": 794, "height": 300}}},
                     screenshots={"light": str(shot), "dark": str(tmp_path / "gone.png")})
    good = ViewReport(tool="good", arguments={}, resource_uri="ui://x/good", profile="vscode")
    r = CheckReport(server="srv", engine="chromium", profiles=[{"name": "moka"}, {"name": "vscode"}], views=[bad, good])
    r.add_problem("broken", "_meta.ui.resourceUri must be a ui:// URI")
    return r


def test_the_page_is_self_contained_and_escapes_what_servers_wrote(tmp_path: Path) -> None:
    page = html_report(report(tmp_path))
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    # Nothing loads from anywhere: no src/href/url() but data: and in-page anchors, and a CSP that says so.
    assert not re.search(r"""(?:src|href)=["'](?!data:|#)""", page)
    assert "url(http" not in page and "@import" not in page
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    policy = html.unescape(found.group(1)) if found else ""
    assert "default-src 'none'" in policy and "img-src data:" in policy
    script = re.search(r"<script>(.*?)</script>", page, re.S)
    assert script is not None
    digest = base64.b64encode(hashlib.sha256(script.group(1).encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy  # the one script is the one the policy allows


def test_the_page_holds_every_part_of_the_report(tmp_path: Path) -> None:
    page = html_report(report(tmp_path))
    assert "moka check <code>srv</code>" in page and "FAILED" in page and "exit code 1" in page
    assert page.count("data:image/png;base64,") == 1 and "(not embedded)" in page  # the missing file is named
    for text in ("Declare it.", "Catch it.", "Nothing to fix.", "connectDomains", "https://api.example.com",
                 "console says", "700 × 300 px (2 size-changed)", "794 × 300 px", "ui/initialize",
                 "_meta.ui.resourceUri must be a ui:// URI", "Tools × profiles", 'id="theme-toggle"'):
        assert text in page, text
    assert 'data-severity="failure"' in page and 'data-severity="warning"' in page and 'data-severity="info"' in page
    assert page.count('class="card view-report') == 2 and 'href="#view-good-vscode"' in page

