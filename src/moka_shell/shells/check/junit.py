"""``moka check --junit FILE``: JUnit XML, one test case per tool × profile.

The shape follows the JUnit XSD that Jenkins' xunit plugin validates against (junit-10.xsd):
``testsuites`` › ``testsuite`` (name, package, id, timestamp, hostname, tests, failures, errors,
skipped, time) › ``properties``, ``testcase``\\* (name, classname, time; a ``failure`` with message
and type when it failed), ``system-out``, ``system-err``.
"""

from __future__ import annotations

import datetime
import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path

from moka_shell.shells.check.report import CheckReport, ViewReport, baseline_line


def _seconds(v: ViewReport) -> str:
    times = [t for t in v.timings_ms.values() if isinstance(t, (int, float))]
    return f"{(max(times) / 1000 if times else 0.0):.3f}"


def _case(suite: ET.Element, server: str, v: ViewReport) -> None:
    case = ET.SubElement(suite, "testcase", name=f"{v.tool} [{v.profile}]",
                         classname=f"moka.check.{server}.{v.profile}", time=_seconds(v))
    failures = [f for f in v.findings if f.get("severity") == "failure"]
    if not v.ok:
        first = failures[0] if failures else {"class": "view-failed", "message": v.failure or "failed", "fix": ""}
        node = ET.SubElement(case, "failure", message=str(first["message"])[:500], type=str(first["class"]))
        node.text = "\n".join(f"[{f['class']}] {f['message']}\n  fix: {f['fix']}" for f in failures or [first])
    out = [f"{f.get('severity') == 'info' and 'note' or 'warning'} [{f['class']}]: {f['message']}"
           for f in v.findings if f.get("severity") in ("warning", "info")]
    out += [f"screenshot ({k}): {p}" for k, p in v.screenshots.items()]
    out += [baseline_line(k, b) for k, b in v.baseline.items()]  # each diff image, also when another failure came first
    if out:
        ET.SubElement(case, "system-out").text = "\n".join(out)


def junit_xml(report: CheckReport) -> str:
    """The report as a JUnit XML document."""
    root = ET.Element("testsuites")
    failed = sum(1 for v in report.views if not v.ok)
    total = sum(float(_seconds(v)) for v in report.views)
    suite = ET.SubElement(root, "testsuite", name=f"moka check {report.server}", package="moka.check", id="0",
                          timestamp=datetime.datetime.now().replace(microsecond=0).isoformat(),
                          hostname=socket.gethostname() or "localhost", tests=str(len(report.views)),
                          failures=str(failed), errors=str(1 if report.metadata else 0), skipped="0",
                          time=f"{total:.3f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("engine", report.engine), ("server", report.server),
                        ("profiles", ",".join(p["name"] for p in report.profiles)),
                        ("settleSeconds", str(report.settle)), ("tool", report.tool or ""),
                        ("nothingToCheck", report.nothing_to_check or "")):
        ET.SubElement(props, "property", name=name, value=value)
    for v in report.views:
        _case(suite, report.server, v)
    if report.metadata:
        # Metadata problems are not any one view's: a case of their own, as an error.
        case = ET.SubElement(suite, "testcase", name="metadata", classname=f"moka.check.{report.server}", time="0")
        node = ET.SubElement(case, "error", message=f"{len(report.metadata)} metadata problem(s)", type="metadata")
        node.text = "\n".join(f"{m['tool']}: {m['problem']}\n  fix: {m['fix']}" for m in report.metadata)
        suite.set("tests", str(len(report.views) + 1))
    ET.SubElement(suite, "system-out").text = json.dumps(
        {"matrix": report.matrix(), "metadataWarnings": report.metadata_warnings,
         "engineLacks": report.engine_lacks}, indent=1)
    ET.SubElement(suite, "system-err").text = ""
    for key in ("tests", "failures", "errors", "time"):
        root.set(key, suite.get(key, "0"))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(report: CheckReport, path: str) -> None:
    """Write the JUnit XML file (its folder is created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(junit_xml(report), encoding="utf-8")
