"""The repository's GitHub Action (action.yml) runs scripts/check_action.sh; this runs that same script
against the demo server with the wheel built from the checkout, in a person's venv, so it is known to work."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from support import node, npm_server
from wheel_support import ROOT, built_dist, user_venv, venv_env

pytestmark = pytest.mark.slow


def test_the_action_yml_is_a_composite_action_whose_step_runs_the_script() -> None:
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    assert "\t" not in text  # YAML forbids tabs for indentation
    assert re.search(r"^runs:\n  using: composite\n  steps:\n", text, re.MULTILINE), text
    assert 'run: bash "$GITHUB_ACTION_PATH/scripts/check_action.sh"' in text
    script = (ROOT / "scripts" / "check_action.sh").read_text(encoding="utf-8")
    # Every input the action declares reaches the script as the variable the script reads.
    for var in re.findall(r"^        (MOKA_\w+): \$\{\{ inputs\.\w+ \}\}$", text, re.MULTILINE):
        assert f"{var}" in script, var
    inputs = re.findall(r"^  ([\w-]+):\n    description:", text, re.MULTILINE)
    assert "baseline" in inputs and "MOKA_BASELINE: ${{ inputs.baseline }}" in text
    assert len(re.findall(r"^        MOKA_\w+:", text, re.MULTILINE)) == len(inputs) == 9


def test_the_action_script_installs_the_wheel_and_checks_the_demo_server_and_an_app(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    if not shutil.which("chromium"):
        pytest.skip("chromium is not installed")
    dist = built_dist(tmp_path_factory)
    venv = user_venv(tmp_path_factory.mktemp("action") / "venv", dist["wheel"], more=["playwright", "pillow"])
    env = venv_env(venv, MOKA_SERVER="moka-demo", MOKA_WHEEL=str(dist["wheel"]), MOKA_PYTHON=str(venv / "bin" / "python"),
                   MOKA_PIP_ARGS="--no-index", MOKA_INSTALL_BROWSER="0", MOKA_PROFILES="moka,claude",
                   MOKA_ENGINE="chromium", MOKA_OUT=str(tmp_path / "out"), RUNNER_TEMP=str(tmp_path),
                   MOKA_BASELINE=str(tmp_path / "baseline"), MOKA_EXTRA_ARGS="--update-baseline",
                   MOKA_CONFIG=str(tmp_path / "config.json"), PYTHON_KEYRING_BACKEND="keyring.backends.null.Keyring")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "check_action.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "moka check: exit 0" in done.stdout
    cases = ET.parse(tmp_path / "out" / "moka.xml").getroot().iter("testcase")
    names = {c.get("name") for c in cases}
    assert len(names) >= 4, names  # 2 views x 2 profiles
    html = (tmp_path / "out" / "moka.html").read_text(encoding="utf-8")
    assert "moka-demo" in html and "data:image/png" in html
    assert list((tmp_path / "out" / "shots").glob("*-dark.png"))
    # The baseline input reaches `moka check --baseline`: with --update-baseline it stores every view's PNGs.
    assert len(list((tmp_path / "baseline").glob("moka-demo-*-light.png"))) == 4, done.stdout[-3000:]
    # An official example app, named in a config file of the author's (MOKA_CONFIG_FILE), as a repository
    # of an app would run it.
    config = tmp_path / "author.json"
    config.write_text(json.dumps({"mcpServers": {"vanilla": {"command": node(), "args": [
        npm_server("mcp-server-basic-vanillajs"), "--stdio"]}}}), encoding="utf-8")
    app = subprocess.run(["bash", str(ROOT / "scripts" / "check_action.sh")], cwd=tmp_path, timeout=600,
                         env={**env, "MOKA_SERVER": "vanilla", "MOKA_CONFIG_FILE": str(config), "MOKA_PROFILES": "moka",
                              "MOKA_OUT": str(tmp_path / "out-app"), "MOKA_BASELINE": str(tmp_path / "baseline-app")},
                         capture_output=True, text=True)
    assert app.returncode == 0 and "moka check: exit 0" in app.stdout, app.stdout[-3000:] + app.stderr[-3000:]
    assert len(list((tmp_path / "baseline-app").glob("vanilla-*-light.png"))) == 1
    assert "vanilla" in (tmp_path / "out-app" / "moka.html").read_text(encoding="utf-8")
    # A failing check fails the step: an unknown server is the CLI's usage error, passed through.
    bad = subprocess.run(["bash", str(ROOT / "scripts" / "check_action.sh")], cwd=tmp_path,
                         env={**env, "MOKA_SERVER": "no-such-server"}, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "moka check: exit" in bad.stdout
