"""The desktop window must not wait for the MCP SDK: `moka`'s start imports it on the core thread only."""

from __future__ import annotations

import subprocess
import sys


def imports_after(code: str) -> set[str]:
    script = f"import sys\n{code}\nprint(' '.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    return set(out.stdout.split())


def test_the_cli_and_the_desktop_shell_load_without_the_sdk() -> None:
    loaded = imports_after("from moka_shell.cli.main import build_parser\nbuild_parser()\n"
                           "import moka_shell.shells.desktop, moka_shell.shells.core_thread")
    assert "mcp" not in loaded and "moka_shell.core.app" not in loaded, sorted(m for m in loaded if "mcp" in m)


def test_the_sign_in_timeout_is_defined_once_in_spirit() -> None:
    from moka_shell.cli import servers_auth
    from moka_shell.core.mcp import oauth

    assert servers_auth.SIGN_IN_TIMEOUT == oauth.SIGN_IN_TIMEOUT
