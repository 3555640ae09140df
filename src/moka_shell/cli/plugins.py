"""``moka plugins``: list the plugins, install and uninstall them, and start a new one."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from moka_shell.cli.run import paths_of


def add_parser(sub: Any) -> None:
    """``moka plugins [list|install|uninstall|new]`` (no action: list)."""
    from moka_shell.cli.main import _Parser  # main is loaded: it is what calls this

    pl = sub.add_parser("plugins", help="list, install, uninstall or start plugins (no action: list them)",
                        description="Plugins add model backends, transports, themes and display modes. "
                                    "In a venv or pipx install they go into Moka's own environment; in "
                                    "the packaged apps into a per-user plugin folder (pure Python only).")
    pl.add_argument("--json", action="store_true", help="list as JSON")
    pl.set_defaults(func=listing)
    act = pl.add_subparsers(dest="plugins_command", metavar="ACTION", parser_class=_Parser)
    ls = act.add_parser("list", help="every plugin: name, version, built-in or installed, hooks, errors")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=listing)
    ins = act.add_parser("install", help="install plugins: NAME[==VERSION], a folder, or a .whl file",
                         usage="moka plugins install [-e] [-U] [--index-url URL] [--no-index] NAME|PATH|WHEEL ...")
    ins.add_argument("requests", nargs="+", metavar="NAME|PATH|WHEEL")
    ins.add_argument("-e", "--editable", action="store_true", help="editable install of a source folder (venv installs)")
    ins.add_argument("-U", "--upgrade", action="store_true", help="upgrade to the newest version")
    ins.add_argument("--index-url", metavar="URL", help="package index (default: $PIP_INDEX_URL, then PyPI)")
    ins.add_argument("--no-index", action="store_true", help="use only the given wheel files (packaged apps)")
    ins.set_defaults(func=install)
    un = act.add_parser("uninstall", help="uninstall plugins, by distribution or plugin name")
    un.add_argument("names", nargs="+", metavar="NAME")
    un.set_defaults(func=uninstall)
    new = act.add_parser("new", help="write a new plugin package to start from: backend, theme or display-mode")
    new.add_argument("kind", choices=["backend", "theme", "display-mode"])
    new.add_argument("name", help="the plugin's short name, e.g. hello (the package is moka-hello)")
    new.add_argument("--dir", default=".", help="where to create the package's folder (default: here)")
    new.set_defaults(func=new_plugin)


def listing(args: argparse.Namespace) -> int:
    """List every plugin: name, version, built-in or installed, hooks, and any error."""
    from moka_shell.core.instance_lock import read_holder
    from moka_shell.plugin_install.kind import install_kind
    from moka_shell.plugins import REGISTRIES, PluginHost

    paths = paths_of(args)
    host = PluginHost(plugin_folder=paths.plugin_folder)
    # Calling the registration hooks is what reveals a plugin that raises.
    for name in REGISTRIES:
        host.registry(name)
    # A plugin that blocked in the running Moka (start-up, consent …) is named there, not here.
    blocked = read_holder(paths.data_dir).get("blockedPlugins")
    for pname, why in (blocked.items() if isinstance(blocked, dict) else []):
        host.mark_blocked(str(pname), f"in the running Moka: {why}")
    infos = host.list()
    if args.json:
        print(json.dumps([i.__dict__ for i in infos], indent=2, default=str))
        return 0
    for i in infos:
        kind = "built-in" if i.builtin else "folder" if i.in_folder else "installed"
        print(f"{i.name:<28} {i.version:<10} {kind:<10} {', '.join(i.hooks) or '-'}")
        if i.error:
            print(f"    error: {i.error} (skipped)")
    where = f"the plugin folder {paths.plugin_folder}" if install_kind() == "folder" else \
        f"this environment ({sys.prefix})"
    print(f"`moka plugins install NAME|PATH|WHEEL` installs into {where}", file=sys.stderr)
    return 0


def install(args: argparse.Namespace) -> int:
    """Install plugins into Moka's environment, or into the plugin folder of a packaged app."""
    from moka_shell.errors import UsageError
    from moka_shell.plugin_install.kind import install_kind

    if install_kind() == "environment":
        from moka_shell.plugin_install.pip_env import pip_install

        if args.no_index:
            raise UsageError("--no-index is for the packaged apps; pass pip's own options through pip")
        for name in pip_install(args.requests, editable=args.editable, upgrade=args.upgrade,
                                index_url=args.index_url):
            print(f"moka plugins: warning: {name} has no entry point in the group 'moka', so Moka loads "
                  "nothing from it (docs/plugins.md)", file=sys.stderr)
        return _report_loading(args)
    if args.editable:
        raise UsageError("the Moka app can't take an editable plugin: develop in a venv with Moka installed "
                         "(docs/plugins.md, \"Developing in a separate venv\"), or install the built wheel")
    return _install_into_folder(args)


def _install_into_folder(args: argparse.Namespace) -> int:
    from moka_shell.plugin_install import folder
    from moka_shell.plugin_install.index import index_url
    from moka_shell.plugin_install.resolve import Planner, carried

    root = paths_of(args).plugin_folder
    have = {k: d.version for k, d in folder.distributions(root).items()}
    with tempfile.TemporaryDirectory(prefix="moka-plugins-") as tmp:
        planner = Planner(carried=carried(), installed=have, downloads=Path(tmp),
                          index=None if args.no_index else index_url(args.index_url), upgrade=args.upgrade)
        plan = planner.run(args.requests).ordered()
        folder.install(root, plan)
    for wheel, requested in plan:
        print(f"installed {wheel.name} {wheel.version}" + ("" if requested else " (needed by a plugin)")
              + f" into {root / wheel.key}")
    if not plan:
        print("nothing to install: every requirement is already met")
    return _report_loading(args)


def _report_loading(args: argparse.Namespace) -> int:
    """Load the plugins as the next start will, and name any that fail (they stay installed)."""
    from moka_shell.plugins import PluginHost

    host = PluginHost(plugin_folder=paths_of(args).plugin_folder)
    broken = [i for i in host.list() if i.error and not i.builtin]
    for info in broken:
        print(f"moka plugins: warning: {info.name} is installed but can't be used: {info.error}", file=sys.stderr)
    if not broken:
        print("Moka loads it at its next start (`moka plugins` lists it)")
    return 1 if broken else 0


def uninstall(args: argparse.Namespace) -> int:
    """Uninstall plugins from wherever ``install`` puts them."""
    from moka_shell.plugin_install.kind import install_kind

    if install_kind() == "environment":
        from moka_shell.plugin_install.pip_env import pip_uninstall

        for name in args.names:
            print(f"uninstalled {pip_uninstall(name)}")
        return 0
    from moka_shell.plugin_install import folder
    from moka_shell.plugin_install.wheel import normalize
    from moka_shell.plugins import PluginHost

    root = paths_of(args).plugin_folder
    # A plugin's own name (`parrot`) means the distribution that provides it (`moka-parrot`).
    by_plugin = {i.name: i.distribution for i in PluginHost(plugin_folder=root).list() if i.in_folder and i.distribution}
    for name in args.names:
        for dist in folder.uninstall(root, normalize(by_plugin.get(name) or name)):
            print(f"uninstalled {dist.name} {dist.version}" + ("" if dist.requested else " (no longer needed)"))
    return 0


def new_plugin(args: argparse.Namespace) -> int:
    """Write a new plugin package from the template for its kind."""
    from moka_shell.plugin_install.template import write_package

    folder = write_package(args.kind, args.name, Path(args.dir))
    print(f"wrote {folder}/ — next:\n"
          f"  pip install -e {folder}        # into the environment Moka runs in (docs/plugins.md)\n"
          f"  pytest {folder}/tests\n"
          f"  moka plugins")
    return 0
