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
                           "import moka_shell.shells.desktop.run, moka_shell.shells.core_thread")
    assert "mcp" not in loaded and "moka_shell.core.app" not in loaded, sorted(m for m in loaded if "mcp" in m)


def test_building_the_parser_loads_no_command_no_plugin_machinery_and_no_config_models() -> None:
    # `moka` with no command parses its arguments before the window opens: the commands' modules,
    # the plugin machinery (pluggy), the pydantic config models and the inspector load on the core
    # thread or when a command runs, not with the parser on the way to the window.
    loaded = imports_after("from moka_shell.cli.main import build_parser\nbuild_parser().parse_args([])\n"
                           "import moka_shell.cli.run, moka_shell.shells.desktop.run")
    heavy = {"pydantic", "pluggy", "moka_shell.config", "moka_shell.cli.commands", "moka_shell.inspector"}
    assert not heavy & loaded, sorted(heavy & loaded)


def test_a_command_still_runs_through_its_lazily_loaded_module(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "config.json"
    config.write_text('{"mcpServers": {}}', encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "moka_shell", "--config", str(config), "--data-dir", str(tmp_path / "d"),
                          "servers", "list", "--json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_sign_in_timeout_is_defined_once_in_spirit() -> None:
    from moka_shell.cli import servers_auth
    from moka_shell.core.mcp.oauth import provider as oauth

    assert servers_auth.SIGN_IN_TIMEOUT == oauth.SIGN_IN_TIMEOUT


def test_the_core_and_its_web_server_load_no_json_schema_validator() -> None:
    # jsonschema is needed only when a server asks the person for input (elicitation); the core's
    # start, which the desktop's "interactive" waits for, does not pay for it.
    loaded = imports_after("import moka_shell.core.app, moka_shell.web.server")
    assert "jsonschema" not in loaded


def test_runs_that_keep_no_conversations_load_no_chat_engine() -> None:
    # `moka tools`, `call` and `check` never chat: the chat engine and its store load only where a
    # run keeps conversations (MokaApp.start(store=True)); docs/performance.md §19.
    loaded = imports_after("import moka_shell.core.app, moka_shell.cli.commands, moka_shell.shells.check.run")
    assert not {"moka_shell.core.chat.engine", "moka_shell.core.chat.store"} & loaded


def test_the_core_answers_the_page_before_the_sdk_is_imported() -> None:
    # The desktop's "interactive" is the page's app.hello answered by the core; the MCP SDK (about
    # half the core's imports) loads on a worker thread for the servers' connections, after that
    # (docs/performance.md §13). The core, its web server, the page's bridge and the built-in
    # plugins (transports included) load without it, and the core opens and answers hello.
    loaded = imports_after(
        "import asyncio, tempfile\n"
        "from pathlib import Path\n"
        "from moka_shell.paths import resolve_paths\n"
        "from moka_shell.core.app import MokaApp\n"
        "from moka_shell.web.server import WebServer\n"
        "async def main():\n"
        "    d = Path(tempfile.mkdtemp())\n"
        "    (d / 'c.json').write_text('{\"mcpServers\": {\"s\": {\"command\": \"true\"}}}')\n"
        "    app = MokaApp(resolve_paths(str(d / 'c.json'), str(d / 'data')), mode='desktop')\n"
        "    web = WebServer(None)\n"
        "    app.open(endpoints=web.endpoints)\n"
        "    web.attach(app)\n"
        "    reply = await web.bridge.handle({'id': 1, 'method': 'app.hello', 'params': {}})\n"
        "    listed = await web.bridge.handle({'id': 2, 'method': 'servers.list', 'params': {}})\n"
        "    assert 'result' in reply, reply\n"
        "    assert [(s['name'], s['status']) for s in listed['result']] == [('s', 'connecting')], listed\n"
        "    await app.stop()\n"
        "    await web.stop()\n"
        "asyncio.run(main())")
    assert not {"mcp", "mcp_types"} & loaded, sorted(m for m in loaded if m.startswith(("mcp", "moka_shell.core.mcp")))


def test_tools_and_call_load_no_view_host(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # `moka tools` and `moka call` show no view: the view host and its dispatcher, CSP and storage
    # modules (~20 ms of a ~0.55 s command) load only when something uses them; docs/performance.md §19.
    import os

    env = {**os.environ, "MOKA_CONFIG": str(tmp_path / "config.json"), "MOKA_DATA_DIR": str(tmp_path / "data")}
    for command in (["tools", "moka-demo"], ["call", "moka-demo", "roll_dice", '{"count": 1}']):
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "moka_shell", *command], capture_output=True,
                             text=True, env=env, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        loaded = {line.rpartition("|")[2].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
        assert "moka_shell.core.app" in loaded  # the import list was read
        assert not {"moka_shell.core.views.host", "moka_shell.core.views.dispatcher"} & loaded, command


def test_the_desktop_path_to_its_window_imports_no_asyncio_and_no_pydantic() -> None:
    # Everything the GUI thread imports before the window is shown delays it (docs/performance.md §13):
    # asyncio (~12 ms here) is the core loop's, made on the core's own thread, and pydantic_core
    # (~10 ms; core/links.py reads URLs with it) is needed only once a link is opened.
    loaded = imports_after("from moka_shell.cli.main import build_parser\nbuild_parser().parse_args([])\n"
                           "import moka_shell.cli.run, moka_shell.shells.desktop.run\n"
                           "from moka_shell.shells.core_thread import CoreThread\n"
                           "from pathlib import Path\nfrom moka_shell.paths import Paths\n"
                           "CoreThread(Paths(Path('config.json'), Path('data')), mode='desktop', early_page=True)")
    assert not {"asyncio", "pydantic_core", "pydantic"} & loaded, sorted({"asyncio", "pydantic_core", "pydantic"} & loaded)


def test_moka_with_no_arguments_opens_the_desktop_without_building_the_parser() -> None:
    # `moka` alone (a desktop icon, the README's first command) is the desktop: building the whole
    # parser and importing the commands' modules took ~25 ms before the window (docs/performance.md §13).
    from moka_shell.cli.main import build_parser, parse

    fast, full = vars(parse([])), vars(build_parser().parse_args([]))
    assert fast.keys() == full.keys()
    assert {k: v for k, v in fast.items() if k != "func"} == {k: v for k, v in full.items() if k != "func"}
    assert fast["func"].__name__ == full["func"].__name__ == "desktop"
    loaded = imports_after("from moka_shell.cli.main import parse\nparse([])")
    commands = {"moka_shell.cli.dev", "moka_shell.cli.plugins", "moka_shell.cli.replay", "moka_shell.cli.servers_auth"}
    assert not commands & loaded, sorted(commands & loaded)
