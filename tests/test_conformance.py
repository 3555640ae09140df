"""The official MCP conformance suite in client mode, with Moka's CLI as the client (findings:
truth-and-conformance "MCP client").

The suite is pinned in tests/npm; tests/conformance/moka_client.py drives `moka` as a script would.
tests/conformance/expected.json says, per scenario, whether Moka passes and, where it does not,
which of the suite's checks fail and why: a scenario that starts passing or fails differently
fails here, so the file (and docs/conformance.md, written from it) stays true.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance_support import SUITE, client_scenarios, expected, run_scenario, suite_version
from support import node

pytestmark = [pytest.mark.npm, pytest.mark.slow]
EXPECTED = expected()


@pytest.fixture(autouse=True)
def _suite_installed() -> None:
    node()
    if not SUITE.exists():
        pytest.skip("the MCP conformance suite is not installed (run MOKA_SETUP_TEST=1 scripts/setup.sh)")


def test_expected_json_describes_the_pinned_suite() -> None:
    """Every client scenario of the pinned version, and nothing else, has an expectation."""
    assert suite_version() == EXPECTED["version"]
    assert client_scenarios() == list(EXPECTED["scenarios"])


@pytest.mark.parametrize("name", list(EXPECTED["scenarios"]))
def test_scenario(name: str, tmp_path: Path) -> None:
    """Moka passes the scenario, or fails exactly the checks expected.json names."""
    want = EXPECTED["scenarios"][name]
    run = run_scenario(name, tmp_path)
    failing = sorted({p.split(":")[0] for p in run.problems()})
    said = f"{name}: {run.problems()}\n{run.output[-6000:]}"
    assert run.passed == want["passes"], said
    assert failing == want.get("failing", []), said
