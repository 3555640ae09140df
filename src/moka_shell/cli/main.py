"""The ``moka`` command: parse, dispatch, and turn errors into messages and exit codes.

Exit codes: 0 ok, 1 failure, 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from moka_shell.version import __version__
from moka_shell.errors import MokaError, UsageError
from moka_shell.terminal import guard_output

Command = Callable[[argparse.Namespace], int]

# Commands that only read and are done when they return: `entry` leaves without the interpreter's
# teardown (freeing every module, ~130 ms of a 0.8 s `moka tools`; docs/performance.md §19).
ONE_SHOT = frozenset({"tools", "call", "check", "inspect", "replay", "servers_list"})
_finished: dict[str, bool] = {"one_shot": False}


def _later(module: str, name: str) -> Command:
    """``moka_shell.cli.<module>.<name>``, imported when the command runs, not when the parser is built.

    Building the parser must stay cheap: ``moka`` with no command opens the desktop window, and
    the commands' modules (the pydantic config models, the inspector) would delay it.
    """

    def command(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(f"moka_shell.cli.{module}"), name)(args) or 0)

    command.__name__ = command.__qualname__ = name
    return command


def _answer_options(parser: argparse.ArgumentParser) -> None:
    """``--answers``, ``--answer`` and ``--answer-defaults``: answers to servers' questions, given up front."""
    g = parser.add_argument_group("answers to servers' questions (elicitation), for runs with nobody to ask",
                                  "each answer is used once, for the first question it fits; "
                                  "a question no answer fits is refused (the README says more)")
    g.add_argument("--answers", metavar="FILE", help="a JSON file of answers ('-' reads stdin)")
    g.add_argument("--answer", action="append", default=[], metavar="JSON",
                   help='one answer, e.g. \'{"message": "name", "content": {"name": "Ada"}}\' (repeatable)')
    g.add_argument("--answer-defaults", action="store_true",
                   help="accept a form no answer fits with its schema's defaults")


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of exiting, so messages stay ours."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        # The error printer already says "moka: "; name only the subcommand, if any.
        where = self.prog.partition(" ")[2]
        raise UsageError(f"{where}: {message}" if where else message, hint=f"see `{self.prog} --help`")


def parse(args_list: list[str]) -> argparse.Namespace:
    """The command line, read. ``moka`` alone opens the desktop: its defaults are given here without
    building the whole parser and importing the commands' modules, ~25 ms before the window
    (docs/performance.md §13; a test keeps them equal to the parser's)."""
    if not args_list:
        return argparse.Namespace(config=None, data_dir=None, command=None, func=_later("run", "desktop"))
    return build_parser().parse_args(args_list)


def build_parser() -> argparse.ArgumentParser:
    """The whole command-line surface (see the architecture's CLI contract)."""
    from moka_shell.cli import dev, plugins, replay, servers_auth

    p = _Parser(prog="moka", description="Moka: a desktop host for MCP Apps, with a chat for any model.")
    p.add_argument("--version", action="version", version=f"moka {__version__}")
    p.add_argument("--config", metavar="FILE", help="config file (default: platform config dir; env MOKA_CONFIG)")
    p.add_argument("--data-dir", metavar="DIR", help="data directory (default: platform data dir; env MOKA_DATA_DIR)")
    p.set_defaults(func=_later("run", "desktop"))
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    s = sub.add_parser("serve", help="browser mode on 127.0.0.1 with a per-run token")
    s.add_argument("--port", type=int, default=0, help="host port (default: a random free port)")
    s.add_argument("--open", action="store_true", help="open the URL in the default browser")
    s.set_defaults(func=_later("run", "serve"))
    dev.add_parser(sub)  # moka dev SERVER | -- COMMAND ARGS...

    srv = sub.add_parser("servers", help="list, add, remove or import MCP servers")
    ssub = srv.add_subparsers(dest="servers_command", metavar="ACTION", parser_class=_Parser, required=True)
    sl = ssub.add_parser("list", help="configured servers (with --check: connect and show status)")
    sl.add_argument("--json", action="store_true")
    sl.add_argument("--check", action="store_true", help="connect to each server and report its status")
    sl.set_defaults(func=_later("commands", "servers_list"))
    sa = ssub.add_parser("add", help="add a server: NAME [--env K=V] -- COMMAND ARGS..., or NAME --url URL",
                         usage="moka servers add NAME [--env K=V] [--cwd DIR] -- COMMAND ARGS...\n"
                               "       moka servers add NAME --url URL [--header K=V]",
                         epilog="--replace sets how the server starts or is reached (command and arguments, --url, "
                                "--env, --cwd, --header, --type; one not given is removed) and keeps its other "
                                "settings (disabled, timeout, useInstructions, allowUnsafeEval, logLevel, roots; "
                                "trustAnnotations only while the command and arguments or URL stay the same), as "
                                "the app's Edit does. To drop those too, remove the server and add it again.")
    sa.add_argument("name")
    sa.add_argument("--url", help="streamable HTTP endpoint")
    sa.add_argument("--header", action="append", default=[], metavar="K=V", help="HTTP header (repeatable)")
    sa.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable (repeatable)")
    sa.add_argument("--cwd")
    sa.add_argument("--type", help="a plugin transport id")
    sa.add_argument("--replace", action="store_true",
                    help="replace a server of the same name, keeping its other settings (see below)")
    sa.add_argument("--trust-annotations", action="store_true",
                    help="go by its tool annotations: tools it marks read-only run without asking (see `servers trust`)")
    sa.set_defaults(func=_later("commands", "servers_add"), argv=[])
    sr = ssub.add_parser("remove", help="remove a server")
    sr.add_argument("name")
    sr.set_defaults(func=_later("commands", "servers_remove"))
    st = ssub.add_parser("trust", help="go by a server's tool annotations (read-only tools run unasked), or stop",
                         description="Tool annotations (readOnlyHint…) are the server's own claims. Moka goes by them "
                                     "only for servers you trust (and its own demo server): then the tools a trusted "
                                     "server marks read-only run without asking in approval mode 'read-only'.")
    st.add_argument("name")
    st.add_argument("--off", action="store_true", help="stop trusting them: its read-only tools ask again")
    st.set_defaults(func=_later("commands", "servers_trust"))
    si = ssub.add_parser("import", help="import servers from a Claude Desktop, Cursor or VS Code config file")
    si.add_argument("path")
    si.set_defaults(func=_later("commands", "servers_import"))
    servers_auth.add_parsers(ssub)  # login, logout

    t = sub.add_parser("tools", help="list tools (visibility and UI resource shown)")
    t.add_argument("server", nargs="?")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=_later("commands", "tools"))

    c = sub.add_parser("call", help="call a tool and print its result")
    c.add_argument("server")
    c.add_argument("tool")
    c.add_argument("arguments", nargs="?", default="{}", help="JSON object of arguments")
    c.add_argument("--json", action="store_true")
    _answer_options(c)
    c.set_defaults(func=_later("commands", "call"))

    k = sub.add_parser("check", help="render a server's UI tools headless and report on each view")
    k.add_argument("server")
    k.add_argument("--tool", help="only this tool")
    k.add_argument("--args", default=None, help="JSON arguments for --tool")
    k.add_argument("--json", action="store_true")
    k.add_argument("--timeout", type=float, default=20.0, help="seconds per view (default 20)")
    k.add_argument("--settle", type=float, default=1.5, metavar="S",
                   help="seconds a view must stay quiet after its result (default 1.5, bounded by --timeout)")
    k.add_argument("--engine", choices=["auto", "chromium", "webview"], default="auto",
                   help="renderer: Chromium via Playwright, or the pywebview engine offscreen")
    k.add_argument("--profile", action="append", metavar="NAME",
                   help="render as this host advertises itself (claude, chatgpt, vscode, cursor, goose, "
                        "m365-copilot, minimal, moka; repeatable; 'all' prints a tool x profile matrix)")
    k.add_argument("--screenshot", metavar="DIR", help="save a PNG of each settled view, light and dark")
    k.add_argument("--baseline", metavar="DIR", help="compare each view's light and dark screenshots with the "
                                                     "ones stored in DIR; a change fails, with a diff image")
    k.add_argument("--update-baseline", action="store_true", help="with --baseline: write the screenshots to DIR")
    k.add_argument("--baseline-tolerance", type=float, default=None, metavar="PCT",
                   help="percent of a screenshot's pixels that may change (default 0.1)")
    k.add_argument("--junit", metavar="FILE", help="write JUnit XML (one test case per tool x profile)")
    k.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML page, "
                                                  "screenshots included")
    k.add_argument("--record", metavar="FILE", help="with --tool: save the view's session as a recording "
                                                    "(play it back with `moka replay FILE`)")
    k.add_argument("--no-storage", action="store_true",
                   help="give views no localStorage/sessionStorage, as hosts without Moka's storage do")
    _answer_options(k)
    k.set_defaults(func=_later("run", "check"))

    ch = sub.add_parser("chat", help="run one chat turn headless and print the transcript")
    ch.add_argument("message")
    ch.add_argument("--backend")
    ch.add_argument("--model")
    ch.add_argument("--conversation", help="continue this conversation id")
    ch.add_argument("--approve", choices=["ask", "read-only", "all"], default="read-only",
                    help="which tool calls may run with nobody to approve them (default: read-only tools); "
                         "a call that needs approval fails at once")
    ch.add_argument("--json", action="store_true")
    _answer_options(ch)
    ch.set_defaults(func=_later("run", "chat"))

    i = sub.add_parser("inspect", help="print the inspector log")
    i.add_argument("--follow", "-f", action="store_true")
    i.add_argument("--channel", help="mcp.rpc, ui.rpc, agent, server, view")
    i.add_argument("--server")
    i.add_argument("--limit", type=int, default=200, help="last N events (default 200)")
    i.add_argument("--json", action="store_true")
    i.set_defaults(func=_later("commands", "inspect"))

    plugins.add_parser(sub)  # moka plugins [list|install|uninstall|new]

    ky = sub.add_parser("keys", help="store or remove a model backend's API key in the OS keyring")
    ky.add_argument("action", choices=["set", "delete", "path"])
    ky.add_argument("backend", nargs="?")
    ky.set_defaults(func=_later("commands", "keys"))

    replay.add_parser(sub)  # moka replay FILE [--check]

    d = sub.add_parser("demo-server")  # no help: unlisted (how Moka starts its bundled demo server)
    d.add_argument("rest", nargs=argparse.REMAINDER)
    d.set_defaults(func=_later("commands", "demo_server"))
    return p


def entry() -> None:
    """The ``moka`` command (console script, ``python -m moka_shell``, the frozen app): run, then exit.

    After a command in ``ONE_SHOT`` everything it wrote is flushed and the process ends at once: its
    servers, browser and files are closed by then, and only the interpreter's teardown is skipped.
    """
    code = main()
    if _finished["one_shot"]:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe (`moka tools | head`) or a closed stream
                pass
        os._exit(code)
    sys.exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # The demo server must not touch stdout before it speaks MCP: dispatch it first.
    if args_list[:1] == ["demo-server"]:
        from moka_shell.demo.server import main as demo_main

        return int(demo_main(args_list[1:]) or 0)
    # Everything else the CLI writes may carry a server's, view's or recording's text: inert (G5).
    stdout, stderr = guard_output()
    try:
        return _run(args_list)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _run(args_list: list[str]) -> int:
    try:
        # `moka servers add NAME [options] -- COMMAND ARGS...` and `moka dev [options] -- COMMAND ARGS...`:
        # everything after "--" is the command.
        command: list[str] = []
        if "--" in args_list and {"servers", "dev"} & set(args_list[:args_list.index("--")]):
            cut = args_list.index("--")
            args_list, command = args_list[:cut], args_list[cut + 1:]
        args = parse(args_list)
        if command:
            args.argv = command
        code = int(args.func(args) or 0)
        _finished["one_shot"] = getattr(args.func, "__name__", "") in ONE_SHOT
        return code
    except MokaError as exc:
        print(f"moka: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `moka tools --json | head`
        sys.stderr.close()
        return 0
