"""Write docs/conformance.md from the project's own test data (``python scripts/conformance_doc.py``).

The MCP conformance suite's part comes from tests/conformance/expected.json, which
tests/test_conformance.py holds to what the pinned suite says of Moka on every run. The MCP Apps
part comes from tests/conformance/apps_clauses.json: each spec clause with the tests that cover
it (each must exist; the suite runs them), the public host runners' results as measured by hand,
and what fails by design and why. tests/test_conformance_doc.py checks the committed file is what
this script writes. ``--check`` exits 1 when it is not.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests" / "conformance" / "expected.json"
CLAUSES = ROOT / "tests" / "conformance" / "apps_clauses.json"
DOC = ROOT / "docs" / "conformance.md"


def missing_tests(clauses: dict[str, Any]) -> list[str]:
    """The named tests (``path::function``) that do not exist."""
    gone = []
    for clause in clauses["clauses"]:
        for test in clause["tests"]:
            path, _, name = test.partition("::")
            file = ROOT / path
            if not file.is_file() or not re.search(rf"^(async )?def {re.escape(name)}\(", file.read_text(), re.M):
                gone.append(test)
    return gone


def _suite_part(expected: dict[str, Any]) -> list[str]:
    scenarios = expected["scenarios"]
    passed = [n for n, s in scenarios.items() if s["passes"]]
    lines = [f"## The official MCP conformance suite, client mode ({expected['suite']} {expected['version']})", "",
             f"Moka passes **{len(passed)} of {len(scenarios)}** client scenarios. The suite starts a test server per "
             "scenario and runs `tests/conformance/moka_client.py`, which drives only Moka's own command line "
             "(`moka servers add|oauth|login`, `moka tools`, `moka call`) as a script would; "
             "`tests/test_conformance.py` runs every scenario and fails when one passes or fails otherwise than "
             "listed here.", "", "| scenario | Moka | why not |", "|---|---|---|"]
    for name, s in scenarios.items():
        why = "by design (see below)" if s.get("why", "").startswith("by design") else s.get("why", "")
        failing = f" (failing checks: {', '.join(s.get('failing', []))})" if s.get("failing") else ""
        lines.append(f"| `{name}` | {'passes' if s['passes'] else 'fails'} | {(why + failing).strip()} |")
    return lines


def _apps_part(clauses: dict[str, Any]) -> list[str]:
    lines = ["", f"## {clauses['spec']}: clause by clause", "",
             "Each clause and the tests of this project that check it (all run by `scripts/test.sh`).", "",
             "| clause | tests |", "|---|---|"]
    for c in clauses["clauses"]:
        lines.append(f"| {c['clause']} | {'<br>'.join(f'`{t}`' for t in c['tests'])} |")
    runners = clauses["host_runners"]
    lines += ["", "## The public MCP Apps host runners", "", f"Source: {runners['source']}.", "",
              f"Moka passes {runners['passes']}. Not passed:", ""]
    lines += [f"- **{r['what']}**: {r['seen']}." for r in runners["not_passed"]]
    return lines


def render() -> str:
    """The whole of docs/conformance.md."""
    expected = json.loads(EXPECTED.read_text())
    clauses = json.loads(CLAUSES.read_text())
    gone = missing_tests(clauses)
    if gone:
        raise SystemExit(f"apps_clauses.json names tests that do not exist: {', '.join(gone)}")
    lines = ["# What Moka passes", "",
             "Written by `scripts/conformance_doc.py` from `tests/conformance/expected.json` and "
             "`tests/conformance/apps_clauses.json`; do not edit by hand (`tests/test_conformance_doc.py` "
             "checks it is current).", ""]
    lines += _suite_part(expected) + _apps_part(clauses)
    lines += ["", "## Fails by design", ""]
    lines += [f"- **{d['what']}**: {d['why']}" for d in clauses["by_design"]]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Write the page, or with ``--check`` say whether the committed one is current."""
    text = render()
    if "--check" in argv:
        if DOC.read_text() != text:
            print("docs/conformance.md is out of date: run python scripts/conformance_doc.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
