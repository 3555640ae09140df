"""Programs Moka starts get arguments that cannot be read as their options (security finding G8, and the rest).

notify-send and osascript are checked in tests/test_desktop_actions.py with the real notify-send;
here pip, which `moka plugins install` runs, and a guard that names every module starting a program.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from moka_shell.errors import PluginInstallError
from moka_shell.plugin_install.pip_env import install_args, pip_install

SRC = Path(__file__).resolve().parents[1] / "src" / "moka_shell"
# Each module that starts a program, and why what it passes cannot be taken for an option. A new one
# fails this test until it is reviewed and added (docs/security.md "Programs Moka starts").
REVIEWED = {
    "shells/desktop/actions.py": "notify-send and osascript: the server's title and body after '--'",
    "plugin_install/pip_env.py": "pip: the person's requests after '--' or as -e's value, --index-url=URL",
    "testing/xvfb.py": "Xvfb: only Moka's own fixed arguments",
    "core/mcp/stdio_launch.py": "an MCP server: the command and arguments the person configured, as given",
}


def test_a_request_that_looks_like_an_option_is_a_requirement_pip_refuses() -> None:
    """`moka plugins install -- --help` made pip print its help and exit 0: an option it followed, not a requirement."""
    with pytest.raises(PluginInstallError, match="pip install failed"):
        pip_install(["--help"], editable=False, upgrade=False, index_url=None)


def test_the_arguments_pip_gets() -> None:
    """Requests after '--' (or as the value of -e), the index joined to its option."""
    assert install_args(["--target=/tmp/x", "moka-hello"], editable=False, upgrade=True, index_url="-i") == [
        "install", "--upgrade", "--index-url=-i", "--", "--target=/tmp/x", "moka-hello"]
    assert install_args(["./-odd", "src"], editable=True, upgrade=False, index_url=None) == [
        "install", "-e", "./-odd", "-e", "src"]


def starts_programs(tree: ast.AST) -> bool:
    """Does this module import subprocess, or use os.system/popen/exec*/spawn*, asyncio's or anyio's processes?"""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "subprocess" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "subprocess":
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            owner, attr = node.value.id, node.attr
            if owner == "os" and (attr in ("system", "popen") or attr.startswith(("exec", "spawn", "posix_spawn"))):
                return True
            if owner == "asyncio" and attr.startswith("create_subprocess"):
                return True
            if owner == "anyio" and attr in ("open_process", "run_process"):
                return True
    return False


def test_every_module_that_starts_a_program_was_reviewed() -> None:
    """Programs are started only in the reviewed modules."""
    found = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py") if starts_programs(ast.parse(p.read_text("utf-8")))}
    assert found == set(REVIEWED), f"review how these pass arguments, then list them: {sorted(found ^ set(REVIEWED))}"
