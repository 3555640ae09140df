"""`moka dev`'s command line: what it runs and watches, its mistakes said plainly, and a real run.

The argument cases go through ``moka``'s own entry point (exit codes and messages as a person
sees them) and through ``dev_target``, the function the command uses; the last test runs
`moka dev server.py` as a child process and edits the script while it runs.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from moka_shell.cli.dev import dev_target
from moka_shell.cli.main import build_parser, main
from moka_shell.config import MokaConfig
from serve_driver import Serve
from support import SERVERS


def run(tmp_path: Path, capsys: Any, *args: str) -> tuple[int, str]:
    code = main(["--config", str(tmp_path / "config.json"), "--data-dir", str(tmp_path / "data"), "dev", *args])
    return code, capsys.readouterr().err


def target(*argv: str, config: dict[str, Any] | None = None) -> Any:
    args_list = ["dev", *argv]
    command: list[str] = []
    if "--" in args_list:
        cut = args_list.index("--")
        args_list, command = args_list[:cut], args_list[cut + 1:]
    args = build_parser().parse_args(args_list)
    args.argv = command
    return dev_target(args, MokaConfig.model_validate({"mcpServers": config or {}}))


def test_mistakes_are_said_with_what_to_do(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"mcpServers": {"weather": {"command": "x"}}}))
    (tmp_path / "notes.txt").write_text("not a server")
    (tmp_path / "app").mkdir()
    code, err = run(tmp_path, capsys)
    assert code == 2 and "name the server to run" in err and "moka dev server.py" in err
    code, err = run(tmp_path, capsys, "server.py", "--", "python", "server.py")
    assert code == 2 and "not both" in err
    code, err = run(tmp_path, capsys, "wether")
    assert code == 1 and "wether" in err and "weather" in err  # the configured names are listed
    code, err = run(tmp_path, capsys, "missing.py")
    assert code == 2 and "no such file: missing.py" in err
    code, err = run(tmp_path, capsys, "app")
    assert code == 2 and "is a folder" in err
    code, err = run(tmp_path, capsys, "notes.txt")
    assert code == 2 and "does not know how to run 'notes.txt'" in err and "--" in err
    code, err = run(tmp_path, capsys, "--watch", "nowhere", "--", "python", "x.py")
    assert code == 2 and "--watch" in err and "nowhere" in err
    assert json.loads((tmp_path / "config.json").read_text()) == {"mcpServers": {"weather": {"command": "x"}}}


def test_what_each_form_runs_and_watches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "server.py").write_text("")
    (app / "server.mjs").write_text("")
    monkeypatch.chdir(tmp_path)

    t = target("app/server.py")  # a script: Moka's Python runs it; its folder is watched
    assert (t.name, t.config.command, t.config.args, t.roots) == ("server", sys.executable, [str(app / "server.py")], [app])
    t = target("app/server.mjs", "--name", "weather")
    assert t.name == "weather" and t.config.args == [str(app / "server.mjs")] and t.config.command.endswith("node")

    t = target("--cwd", str(app), "--", "uv", "run", "server.py")  # a command: its folder; named after its script
    assert (t.name, t.config.command, t.config.args, t.config.cwd, t.roots) == (
        "server", "uv", ["run", "server.py"], str(app), [app])
    t = target("--", "npx", "-y", "some-server")
    assert (t.name, t.roots) == ("npx", [tmp_path])
    t = target("--watch", "app", "--", "npx", "-y", "some-server")
    assert t.roots == [app]

    # A configured server: its script's folder (the first argument that is a file), else where it runs.
    t = target("weather", config={"weather": {"command": "python", "args": [str(app / "server.py")]}})
    assert (t.name, t.config.command, t.roots) == ("weather", "python", [app])
    t = target("weather", config={"weather": {"command": "python", "args": ["server.py"], "cwd": str(app)}})
    assert t.roots == [app]
    with pytest.raises(Exception, match="over HTTP"):
        target("remote", config={"remote": {"url": "http://127.0.0.1:9/mcp"}})


def test_moka_dev_runs_a_script_and_restarts_it_on_a_save(tmp_path: Path) -> None:
    app = tmp_path / "my-app"
    app.mkdir()
    script = app / "server.py"
    shutil.copy(SERVERS / "dev_app_server.py", script)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"mcpServers": {}}))
    dev = Serve(config, tmp_path / "data", command="dev", extra_args=[str(script)])
    try:
        url = dev.wait_url()
        assert url.endswith("#runner?server=server"), url
        deadline = time.monotonic() + 30
        while not any(line.startswith("Watching ") for line in dev.lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(line.startswith(f"Watching 1 file(s) in {app}:") for line in dev.lines), dev.lines

        def server() -> dict[str, Any]:
            return next(s for s in dev.rpc("servers.list")["result"] if s["name"] == "server")

        deadline = time.monotonic() + 60
        while server()["status"] != "ready" and time.monotonic() < deadline:
            time.sleep(0.1)
        first = server()
        assert first["status"] == "ready", first
        script.write_text(script.read_text().replace("version one", "version two"))
        deadline = time.monotonic() + 60
        while not (server()["generation"] > first["generation"] and server()["status"] == "ready") \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert server()["generation"] > first["generation"] and server()["status"] == "ready", server()
        # The dev server is the run's own: the person's config is not changed, and its data is apart.
        assert json.loads(config.read_text()) == {"mcpServers": {}}
        assert (tmp_path / "data" / "dev").is_dir()
    finally:
        assert dev.terminate() == 0, (dev.lines, dev.errors)
