"""Running the official MCP conformance suite (client mode, pinned in tests/npm) against Moka.

Each scenario runs as the suite's own ``client --scenario NAME`` command, with
tests/conformance/moka_client.py as the client command. The suite judges a scenario passed when
none of its checks failed or warned, the client did not time out, and it exited 0: its exit code.
What each check said is read from the ``checks.json`` it writes.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SUITE_DIR = HERE / "npm" / "node_modules" / "@modelcontextprotocol" / "conformance"
SUITE = SUITE_DIR / "dist" / "index.js"
NODE20 = HERE / "conformance" / "node20.mjs"
CLIENT = HERE / "conformance" / "moka_client.py"
EXPECTED = HERE / "conformance" / "expected.json"
# Per scenario, for the client command: Moka's CLI starts a process per command (on a loaded
# machine several seconds each), and a sign-in runs four. Generous, as it is only a bound.
CLIENT_TIMEOUT_MS = 300_000


def suite_version() -> str:
    """The installed suite's version."""
    return str(json.loads((SUITE_DIR / "package.json").read_text())["version"])


def _node(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["node", "--import", NODE20.as_uri(), str(SUITE), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=HERE.parent)


def client_scenarios() -> list[str]:
    """The suite's client scenarios, in the order it lists them."""
    out = _node("list", timeout=60).stdout
    client_part = out.split("Client scenarios", 1)[1]
    return [line.split()[1] for line in client_part.splitlines() if line.strip().startswith("- ")]


@dataclass
class ScenarioRun:
    """One scenario's outcome, as the suite judged it."""

    name: str
    passed: bool
    checks: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""

    def problems(self) -> list[str]:
        """The checks that failed or warned, in the suite's words."""
        return [f"{c.get('id')}: {c.get('status')} {c.get('errorMessage') or c.get('description') or ''}".strip()
                for c in self.checks if c.get("status") in ("FAILURE", "WARNING")]


def run_scenario(name: str, out_dir: Path) -> ScenarioRun:
    """Run one client scenario against Moka; results land in ``out_dir``."""
    command = shlex.join([sys.executable, str(CLIENT)])
    done = _node("client", "--command", command, "--scenario", name, "--timeout", str(CLIENT_TIMEOUT_MS),
                 "-o", str(out_dir), timeout=CLIENT_TIMEOUT_MS / 1000 + 120)
    found = sorted(out_dir.rglob("checks.json"))
    checks = json.loads(found[-1].read_text()) if found else []
    return ScenarioRun(name, done.returncode == 0, checks, done.stdout + done.stderr)


def expected() -> dict[str, Any]:
    """tests/conformance/expected.json: the suite's version and, per scenario, whether Moka passes and why not."""
    return json.loads(EXPECTED.read_text())  # type: ignore[no-any-return]
