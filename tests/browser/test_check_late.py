"""`moka check` watches a view after its result until it is quiet, and names what went wrong.

The views of tests/servers/late_failures_server.py fail only after their result arrived; each
must fail with its own class, the control must pass, and `--tool good` must pass on a server
whose other tools are broken.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from support import SERVERS
from test_check import moka
from test_check_junit import validate_junit

LATE = {"late": {"command": sys.executable, "args": [str(SERVERS / "late_failures_server.py")]}}


def classes(view: dict[str, Any], severity: str = "failure") -> list[str]:
    return [f["class"] for f in view["findings"] if f["severity"] == severity]


@pytest.fixture(scope="module")
def late_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("late")
    proc = moka(tmp, LATE, "check", "late", "--json", "--timeout", "10", "--junit", str(tmp / "out" / "check.xml"))
    return proc.returncode, json.loads(proc.stdout), tmp / "out" / "check.xml"


def test_each_late_failure_has_its_class(late_report: tuple[int, dict[str, Any], Path]) -> None:
    """Thrown 200 ms after the result, blocked by the CSP after the result, never sized: each its class."""
    code, report, _ = late_report
    assert code == 1 and not report["ok"]
    views = {v["tool"]: v for v in report["views"]}
    assert views["good"]["ok"] and classes(views["good"]) == [] and classes(views["good"], "warning") == []
    assert views["good"]["size"]["requested"]["height"] > 0

    throws = views["throws_late"]
    assert not throws["ok"] and classes(throws) == ["thrown-error"]
    finding = throws["findings"][0]
    assert "thrown 200 ms after the result" in finding["message"] and "stack" in finding["detail"]
    assert finding["fix"]
    # It threw after tool-result: the timeline has the result first, then the error report.
    events = [e["event"] for e in throws["timeline"]]
    assert events.index("host → view ui/notifications/tool-result") < events.index("view → host notifications/message")

    csp = views["csp_late"]
    assert not csp["ok"] and classes(csp) == ["csp-blocked"]
    detail = csp["findings"][0]["detail"]
    assert detail["directive"] == "connect-src" and detail["blockedURI"].startswith("https://undeclared.example")
    assert detail["allowWith"] == {"connectDomains": ["https://undeclared.example"]}
    assert "connectDomains" in csp["findings"][0]["fix"]

    blank = views["never_sized"]
    assert not blank["ok"] and classes(blank) == ["blank-view"]
    assert blank["size"]["requested"] is None and blank["size"]["rendered"]["text"] == 0


def test_storage_use_is_named(late_report: tuple[int, dict[str, Any], Path]) -> None:
    _, report, _ = late_report
    view = next(v for v in report["views"] if v["tool"] == "uses_indexeddb")
    assert not view["ok"] and classes(view) == ["storage"]
    assert "IndexedDB" in view["findings"][0]["message"]


def test_a_missing_host_context_field_is_named(tmp_path: Path) -> None:
    """A view that reads containerDimensions unchecked passes in Moka and fails where the host leaves it out."""
    proc = moka(tmp_path, LATE, "check", "late", "--tool", "reads_context", "--profile", "moka,minimal",
                "--json", "--timeout", "10")
    report = json.loads(proc.stdout)
    assert proc.returncode == 1
    views = {v["profile"]: v for v in report["views"]}
    assert views["moka"]["ok"]
    assert classes(views["minimal"]) == ["missing-host-context"]
    detail = views["minimal"]["findings"][0]["detail"]
    assert detail["read"] == "maxHeight" and "containerDimensions" in detail["omitted"]
    assert report["matrix"] == {"reads_context": {"moka": "PASS", "minimal": "FAIL"}}


def test_consent_is_a_denial_that_the_report_records(late_report: tuple[int, dict[str, Any], Path]) -> None:
    """moka check never allows what a person would be asked: it records the request and answers no."""
    _, report, _ = late_report
    view = next(v for v in report["views"] if v["tool"] == "asks_person")
    assert view["ok"] and classes(view, "warning") == ["would-ask-person"]
    assert view["consent"][0]["action"] == "open_link"
    # The detail names the host the browser would open (core/links.py), as a person's question does.
    assert view["consent"][0]["detail"] == {"url": "https://example.com/docs", "host": "example.com",
                                            "international": False}
    link = next(r for r in view["requests"] if r["method"] == "ui/open-link")
    assert link["answer"] == "result isError"  # the denial the view received


def test_metadata_problems_count_without_tool(late_report: tuple[int, dict[str, Any], Path]) -> None:
    _, report, _ = late_report
    assert {m["class"] for m in report["metadataProblems"]} == {"bad-uri", "csp-on-tool"}
    assert report["metadataWarnings"] == []


def test_tool_good_passes_with_the_others_as_warnings(tmp_path: Path) -> None:
    """--tool good: only good decides the exit code; the server's other problems are warnings."""
    proc = moka(tmp_path, LATE, "check", "late", "--tool", "good", "--timeout", "10")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASS  good" in proc.stdout and "metadata warnings (they do not count)" in proc.stdout
    assert "bad_uri: _meta.ui.resourceUri must be a ui:// URI" in proc.stdout
    bad = moka(tmp_path, LATE, "check", "late", "--tool", "csp_on_tool", "--timeout", "10")
    assert bad.returncode == 1 and "csp_on_tool: _meta.ui.csp belongs on the ui:// resource" in bad.stdout


def test_junit_validates_and_says_why(late_report: tuple[int, dict[str, Any], Path]) -> None:
    _, report, path = late_report
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    validate_junit(root)
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert len(cases) == len(report["views"]) + 1  # + the metadata case
    assert cases["good [moka]"].find("failure") is None
    failure = cases["throws_late [moka]"].find("failure")
    assert failure is not None and failure.get("type") == "thrown-error"
    assert "thrown 200 ms after the result" in (failure.get("message") or "")
    assert cases["never_sized [moka]"].find("failure").get("type") == "blank-view"  # type: ignore[union-attr]
    assert int(suite.get("failures", "0")) == sum(1 for v in report["views"] if not v["ok"])
    metadata = cases["metadata"].find("error")
    assert metadata is not None and "bad_uri" in (metadata.text or "")


@pytest.mark.gui
def test_the_webview_engine_watches_too_and_says_what_it_lacks(tmp_path: Path) -> None:
    """--engine webview: the late throw still fails; Qt takes the screenshots; blankness by pixels; the probe's lack named."""
    proc = moka(tmp_path, LATE, "check", "late", "--engine", "webview", "--json", "--timeout", "20",
                "--screenshot", str(tmp_path / "shots"), "--junit", str(tmp_path / "w.xml"), "--profile", "moka,vscode")
    report = json.loads(proc.stdout)
    assert proc.returncode == 1 and report["engine"] == "webview", proc.stderr[-3000:]
    views = {(v["tool"], v["profile"]): v for v in report["views"]}
    assert classes(views[("throws_late", "vscode")]) == ["thrown-error"]
    assert classes(views[("csp_late", "moka")]) == ["csp-blocked"]
    good = views[("good", "moka")]
    assert good["ok"] and set(good["screenshots"]) == {"light", "dark"}
    for path in good["screenshots"].values():
        assert Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # It paints nothing: the grab of its frame is one colour, so it fails as in Chromium (C3 by pixels).
    blank = views[("never_sized", "moka")]
    assert not blank["ok"] and classes(blank) == ["blank-view"] and blank["size"]["painted"]["colours"] == 1
    lacks = " ".join(report["engineLacks"])
    assert "screenshots" not in lacks and "look inside the view's frame" in lacks
    validate_junit(ET.parse(tmp_path / "w.xml").getroot())
