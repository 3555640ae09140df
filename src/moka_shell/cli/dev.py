"""``moka dev SERVER`` and ``moka dev -- COMMAND ARGS…``: what to run, what to watch, then run it live.

SERVER is a configured server's name or the path of a server script (``.py`` runs with Moka's
Python, ``.js``/``.mjs``/``.cjs`` with node, an executable file as itself). What is watched: the
script's folder; for a command, the folder it runs in; ``--watch`` names others instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from moka_shell.errors import UnknownServerError, UsageError

if TYPE_CHECKING:  # the config models (pydantic) load when the command runs, not with the parser
    from moka_shell.config import MokaConfig, ServerConfig

NODE_SUFFIXES = (".js", ".mjs", ".cjs")
EXAMPLE = "moka dev server.py   or   moka dev -- uv run server.py"


@dataclass(frozen=True)
class DevTarget:
    """The one server a dev run starts, and the folders (or files) whose changes restart it."""

    name: str
    config: ServerConfig
    roots: list[Path]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``moka dev``'s arguments."""
    d = sub.add_parser("dev", help="run one server with live reload: every save restarts it and re-renders its views",
                       usage="moka dev SERVER [options]\n       moka dev [options] -- COMMAND ARGS...",
                       description="Opens Moka in browser mode on the Tool runner with one server: a configured "
                                   "server's name, or the path of its script (.py runs with Moka's Python, .js with "
                                   "node), or the command after '--'. Saving a file in the script's folder (or, for "
                                   "a command, the folder it runs in) restarts the server, reads its UI resources "
                                   "again and re-renders the open views with their last input and result.")
    d.add_argument("server", nargs="?", metavar="SERVER", help="a configured server's name, or a server script")
    d.add_argument("--name", help="the server's name in Moka (default: the script's name)")
    d.add_argument("--watch", action="append", default=[], metavar="PATH",
                   help="watch this folder or file instead (repeatable)")
    d.add_argument("--cwd", help="the folder the command runs in (default: here)")
    d.add_argument("--port", type=int, default=0, help="host port (default: a random free port)")
    d.add_argument("--open", action="store_true", help="open the URL in the default browser")
    d.set_defaults(func=run, argv=[])


def _script_command(script: Path) -> list[str]:
    if script.suffix == ".py":
        return [sys.executable, str(script)]
    if script.suffix in NODE_SUFFIXES:
        return [shutil.which("node") or "node", str(script)]
    if os.access(script, os.X_OK):
        return [str(script)]
    raise UsageError(f"Moka does not know how to run {script.name!r} (not .py, .js or an executable file)",
                     hint=f"give the command after '--', e.g. moka dev -- python {script}")


def _roots(watch: list[str], default: list[Path]) -> list[Path]:
    roots = [Path(w).expanduser().resolve() for w in watch] or default
    for root in roots:
        if not root.exists():
            raise UsageError(f"--watch {root}: no such file or folder")
    return roots


def _configured(name: str, cfg: ServerConfig, watch: list[str]) -> DevTarget:
    """A configured server: its script's folder (the first argument that is a file), else its cwd."""
    if cfg.url:
        if not watch:
            raise UsageError(f"{name!r} is reached over HTTP ({cfg.url}); Moka cannot restart it",
                             hint="run its command with `moka dev -- COMMAND`, or name --watch and restart it yourself")
    cwd = Path(cfg.cwd).expanduser() if cfg.cwd else Path.cwd()
    files = [p for a in cfg.args if (p := (cwd / a).expanduser()).is_file()]
    default = [files[0].resolve().parent] if files else [cwd.resolve()]
    return DevTarget(name, cfg, _roots(watch, default))


def dev_target(args: argparse.Namespace, config: MokaConfig) -> DevTarget:
    """What ``moka dev`` runs and watches, from its arguments (UsageError says what is wrong)."""
    from moka_shell.config import ServerConfig

    command, target = list(args.argv), args.server
    if command and target:
        raise UsageError("give a SERVER or a command after '--', not both", hint=EXAMPLE)
    if command:
        cwd = Path(args.cwd).expanduser().resolve() if args.cwd else Path.cwd()
        if not cwd.is_dir():
            raise UsageError(f"--cwd {cwd}: no such folder")
        script = next((p for a in command[1:] if (p := cwd / a).is_file()), None)
        name = args.name or (script.stem if script else Path(command[0]).name)
        data: dict[str, object] = {"command": command[0], "args": command[1:]}
        if args.cwd:
            data["cwd"] = str(cwd)
        return DevTarget(name, ServerConfig.model_validate(data), _roots(args.watch, [cwd]))
    if not target:
        raise UsageError("name the server to run: a configured server, a script, or a command after '--'",
                         hint=EXAMPLE)
    path = Path(target).expanduser()
    if target in config.mcp_servers and not path.is_file():
        return _configured(target, config.mcp_servers[target], args.watch)
    if path.is_dir():
        raise UsageError(f"{target} is a folder; give the server's script in it, or a command after '--'",
                         hint=EXAMPLE)
    if not path.is_file():
        if "/" in target or os.sep in target or path.suffix:
            raise UsageError(f"no such file: {target}", hint=EXAMPLE)
        raise UnknownServerError(target, sorted(config.mcp_servers))
    script = path.resolve()
    argv = _script_command(script)
    cfg = ServerConfig.model_validate({"command": argv[0], "args": argv[1:]})
    return DevTarget(args.name or script.stem, cfg, _roots(args.watch, [script.parent]))


def dev_config(config: MokaConfig, target: DevTarget) -> MokaConfig:
    """The person's settings (theme, approvals…) with the one dev server: nothing is written back."""
    return config.model_copy(update={"mcp_servers": {target.name: target.config}})


def run(args: argparse.Namespace) -> int:
    """``moka dev``: the server in browser mode, reloaded live."""
    from moka_shell.cli.run import paths_of
    from moka_shell.config import ConfigFile
    from moka_shell.paths import Paths
    from moka_shell.shells.dev import run_dev

    paths = paths_of(args)
    config = ConfigFile(paths.config_file).config
    target = dev_target(args, config)
    # A data folder of its own: a dev run keeps its conversations and Inspector log apart and
    # runs beside the person's Moka (one Moka per data folder).
    dev_paths = Paths(paths.config_file, paths.data_dir / "dev")
    return run_dev(dev_paths, dev_config(config, target), target.name, target.roots, port=args.port,
                   open_browser=args.open)
