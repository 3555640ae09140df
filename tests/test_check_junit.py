"""`moka check --junit`: the XML follows Jenkins' xunit-plugin junit-10.xsd, checked here by hand.

No XML-schema library is pinned in this project, so the schema's structure is written out below
(required and optional attributes, which children each element may hold, the SUREFIRE_TIME
pattern) and every document is walked against it.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from moka_shell.shells.check.junit import junit_xml
from moka_shell.shells.check.report import CheckReport, ViewReport


_TIME = r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?"
_SCHEMA: dict[str, tuple[set[str], set[str], set[str]]] = {
    # element: (required attributes, optional attributes, allowed children)
    "testsuites": (set(), {"name", "time", "tests", "failures", "errors"}, {"testsuite"}),
    "testsuite": ({"name", "tests", "failures", "errors"},
                  {"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"},
                  {"testsuite", "properties", "testcase", "system-out", "system-err"}),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, set(), set()),
    "testcase": ({"name"}, {"time", "classname", "group"},
                 {"skipped", "error", "failure", "system-out", "system-err"}),
    "failure": (set(), {"type", "message"}, set()),
    "error": (set(), {"type", "message"}, set()),
    "skipped": (set(), {"type", "message"}, set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}


def validate_junit(el: ET.Element) -> None:
    """Raise AssertionError where the element breaks the junit-10.xsd structure."""


    required, optional, children = _SCHEMA[el.tag]
    assert required <= set(el.attrib), (el.tag, "missing", required - set(el.attrib))
    assert set(el.attrib) <= required | optional, (el.tag, "unknown", set(el.attrib) - required - optional)
    if "time" in el.attrib:
        assert re.fullmatch(_TIME, el.attrib["time"]), (el.tag, el.attrib["time"])
    for child in el:
        assert child.tag in children, (el.tag, "may not hold", child.tag)
        validate_junit(child)




def test_the_schema_check_can_fail() -> None:
    """The hand-written schema check rejects what junit-10.xsd rejects."""
    with pytest.raises(AssertionError):
        validate_junit(ET.fromstring('<testsuites><testsuite name="x" tests="1"/></testsuites>'))
    with pytest.raises(AssertionError):
        validate_junit(ET.fromstring('<testsuites><testsuite name="x" tests="1" failures="0" errors="0">'
                                     '<testcase/></testsuite></testsuites>'))
    with pytest.raises(AssertionError):
        validate_junit(ET.fromstring('<testsuites><testsuite name="x" tests="1" failures="0" errors="0" '
                                     'time="1 s"/></testsuites>'))




def test_a_report_with_every_outcome_is_valid_junit() -> None:
    """Pass, warn, fail and a metadata error: one case each, the failure typed by its class."""
    report = CheckReport(server="srv", engine="chromium", profiles=[{"name": "moka"}, {"name": "vscode"}])
    good = ViewReport(tool="good", arguments={}, resource_uri="ui://x/good", timings_ms={"result_sent": 812.5})
    warn = ViewReport(tool="good", arguments={}, resource_uri="ui://x/good", profile="vscode", warnings=["w"],
                      findings=[{"class": "request-refused", "severity": "warning", "message": "w", "fix": "f"}])
    bad = ViewReport(tool="blank", arguments={}, resource_uri="ui://x/blank", ok=False, failure="blank view <&>",
                     findings=[{"class": "blank-view", "severity": "failure", "message": "blank view <&>",
                                "fix": "size it"}])
    report.views = [good, warn, bad]
    report.add_problem("other", "_meta.ui.resourceUri must be a ui:// URI, got 'x'")
    root = ET.fromstring(junit_xml(report))
    validate_junit(root)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "4" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {"good [moka]", "good [vscode]", "blank [moka]", "metadata"}
    failure = cases["blank [moka]"].find("failure")
    assert failure is not None and failure.get("type") == "blank-view" and failure.get("message") == "blank view <&>"
    assert "fix: size it" in (failure.text or "")
    assert cases["good [moka]"].get("time") == "0.812"
    assert "request-refused" in (cases["good [vscode]"].findtext("system-out") or "")
    assert cases["metadata"].find("error").get("type") == "metadata"  # type: ignore[union-attr]
