"""docs/plugins.md works as written: its files are the real ones, and the plugin installs and runs."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import os
import re
import site
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pluggy
import pytest

from moka_shell import hookspecs
from moka_shell.core.chat.backends import AgentRequest, ChatMessage, Done, ModelTool, TextDelta, ToolCallEnd

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "plugins.md"
PLUGIN = ROOT / "plugins" / "moka-parrot"
MARKED_BLOCK = re.compile(r"^<!-- file: (?P<path>\S+) -->\n```[\w-]*\n(?P<body>.*?)^```$", re.MULTILINE | re.DOTALL)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_every_file_shown_in_the_doc_is_the_real_file() -> None:
    doc = DOC.read_text(encoding="utf-8")
    blocks = list(MARKED_BLOCK.finditer(doc))
    paths = {b["path"] for b in blocks}
    assert {"plugins/moka-parrot/pyproject.toml", "plugins/moka-parrot/src/moka_parrot/__init__.py"} <= paths
    # every marker must be followed by its block, or the check above would miss it silently
    assert doc.count("<!-- file: ") == len(blocks)
    for block in blocks:
        assert block["body"] == (ROOT / block["path"]).read_text(encoding="utf-8"), block["path"]


def test_the_hello_backend_the_doc_opens_with_registers_and_answers() -> None:
    import types

    from moka_shell.testing.plugins import registered, reply

    doc = DOC.read_text(encoding="utf-8")
    block = re.search(r"<!-- hello-backend -->\n```python\n(.*?)^```$", doc, re.MULTILINE | re.DOTALL)
    assert block is not None and len([line for line in block[1].splitlines() if line.strip()]) <= 10
    module = types.ModuleType("moka_hello_doc")
    exec(compile(block[1], str(DOC), "exec"), module.__dict__)
    backends = registered(module, "backends")
    assert reply(backends["hello"], "hi") == "Hello! You said: hi"


def test_doc_has_the_theme_and_display_mode_sections() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert "## Writing a theme" in doc and "## Writing a display mode" in doc
    assert "<!-- file: plugins/moka-theme-matcha/src/moka_theme_matcha/__init__.py -->" in doc


def _installed_here() -> bool:
    """True if moka-parrot is installed, editable, from this checkout."""
    try:
        dist = importlib.metadata.distribution("moka-parrot")
    except importlib.metadata.PackageNotFoundError:
        return False
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    return bool(direct.get("url") == PLUGIN.as_uri() and direct.get("dir_info", {}).get("editable"))


@pytest.fixture(scope="module")
def parrot_installed() -> None:
    """Install plugins/moka-parrot as the doc says, once, without touching the network."""
    if not _installed_here():
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "-e", str(PLUGIN)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    # This interpreter started before the install: read the new .pth file now.
    site.addsitedir(sysconfig.get_paths()["purelib"])
    importlib.invalidate_caches()
    assert _installed_here()


def _load_entry_point() -> Any:
    eps = [ep for ep in importlib.metadata.entry_points(group="moka") if ep.name == "parrot"]
    assert len(eps) == 1, eps
    module = eps[0].load()
    assert Path(module.__file__).resolve().is_relative_to(PLUGIN), module.__file__
    return module


@pytest.mark.anyio
async def test_installed_plugin_registers_and_streams(parrot_installed: None) -> None:
    module = _load_entry_point()
    pm = pluggy.PluginManager("moka")
    pm.add_hookspecs(hookspecs)
    pm.register(module, name="parrot")
    backends: list[Any] = []
    pm.hook.register_agent_backends(register=backends.append)
    (parrot,) = backends
    assert parrot.backend_id == "parrot" and not parrot.needs_key
    parrot.delay = 0

    request = AgentRequest(model=parrot.default_model, messages=[ChatMessage(role="user", content="polly wants")],
                           options={"uppercase": True})
    events = [e async for e in parrot.stream(request)]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "POLLY WANTS"
    assert events[-1] == Done(stop_reason="end_turn")

    tool = ModelTool(name="demo__roll", input_schema={"type": "object"})
    request = AgentRequest(model="parrot-1", tools=[tool],
                           messages=[ChatMessage(role="user", content='/tool demo__roll {"sides": 20}')])
    events = [e async for e in parrot.stream(request)]
    assert [e for e in events if isinstance(e, ToolCallEnd)][0].arguments == {"sides": 20}


def test_moka_plugins_lists_it(parrot_installed: None) -> None:
    env = {**os.environ, "MOKA_LOAD_PLUGINS": "moka-parrot",
           "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "moka_shell", "plugins", "--json"], capture_output=True,
                          text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    plugins = {p["name"]: p for p in json.loads(done.stdout)}
    assert plugins["parrot"]["error"] is None
    assert plugins["parrot"]["distribution"] == "moka-parrot"
    assert "register_agent_backends" in plugins["parrot"]["hooks"]


def test_the_plugins_own_tests_pass(parrot_installed: None) -> None:
    # The doc shows them as the way to test a plugin; they run outside this suite's testpaths.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(PLUGIN / "tests")],
                          capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
