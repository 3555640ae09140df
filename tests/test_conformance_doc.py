"""docs/conformance.md is what scripts/conformance_doc.py writes from the tests' own data (issue 29 item 6),
and every test it names exists."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("conformance_doc", ROOT / "scripts" / "conformance_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_page_is_current() -> None:
    """Edit the JSON files (or let the conformance test tell you to), then run the script."""
    script = _script()
    assert (ROOT / "docs" / "conformance.md").read_text() == script.render(), \
        "docs/conformance.md is out of date: run python scripts/conformance_doc.py"


def test_every_named_test_exists_and_every_failure_says_why() -> None:
    """A clause points only at tests that exist; a scenario Moka fails says why."""
    script = _script()
    assert script.missing_tests(json.loads(script.CLAUSES.read_text())) == []
    scenarios = json.loads(script.EXPECTED.read_text())["scenarios"]
    assert all(s.get("why") for s in scenarios.values() if not s["passes"])
