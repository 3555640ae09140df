"""The short-lived CLI commands: servers, tools, call, inspect, keys (``moka plugins`` is cli/plugins.py)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from moka_shell.core.shell import Mode
from moka_shell.config import ConfigFile, ServerConfig
from moka_shell.config_import import import_config_file
from moka_shell.core.server_configs import ServerConfigs
from moka_shell.errors import ServerUnavailableError, UsageError
from moka_shell.inspector import EventFilter, follow_log, read_tail
from moka_shell.cli.run import paths_of
from moka_shell.paths import Paths, file_in_the_way, folder_blocked
from moka_shell.terminal import line

if TYPE_CHECKING:
    from moka_shell.core.mcp.answers import ScriptedAnswers

T = TypeVar("T")


@asynccontextmanager
async def core(args: argparse.Namespace, servers: list[str] | None, *, wait: float = 30.0,
               mode: Mode = "headless", answers: ScriptedAnswers | None = None,
               views: bool = True) -> AsyncIterator[Any]:
    """A MokaApp with only the named servers started, ready or failed, and stopped after.

    ``views=False``: the command shows no view, so no UI resource is read ahead.
    """
    from moka_shell.core.app import MokaApp

    app = MokaApp(paths_of(args), mode=mode, answers=answers, read_ui_ahead=views)
    for name in servers or []:
        if name not in app.config.mcp_servers:
            from moka_shell.errors import UnknownServerError

            raise UnknownServerError(name, sorted(app.config.mcp_servers))
    await app.start(servers=servers, store=False)
    try:
        await app.servers.wait_ready(timeout=wait)
        yield app
    finally:
        await app.stop()


def run(coro_fn: Callable[[], Awaitable[T]]) -> T:
    """Run one async command to completion."""
    return asyncio.run(coro_fn())  # type: ignore[arg-type]


def answers_of(args: argparse.Namespace) -> ScriptedAnswers | None:
    """The answers to servers' questions given with ``--answers``, ``--answer`` and ``--answer-defaults``."""
    from moka_shell.core.mcp.answers import ScriptedAnswers

    return ScriptedAnswers.from_options(args.answers, args.answer, args.answer_defaults)


def report_questions(app: Any, *, refused: bool = True) -> bool:
    """Say on stderr which questions the run's answers answered and (``refused``) which were refused;
    True if none was refused."""
    scripted = app.elicitations.scripted
    for text in scripted.answered if scripted is not None else []:
        print(f"moka: {line(text)}", file=sys.stderr)
    for text in app.elicitations.unanswered if refused else []:
        print(f"moka: not answered: {line(text)}", file=sys.stderr)
    return not app.elicitations.unanswered


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


# ---- servers -----------------------------------------------------------------------------------


def servers_list(args: argparse.Namespace) -> int:
    """Configured servers; with --check, connect and show each status."""
    cfg = ConfigFile(paths_of(args).config_file).config
    if not args.check:
        from moka_shell.core.mcp.oauth.provider import auth_state  # imports the MCP SDK: only when listing
        from moka_shell.core.mcp.oauth.store import use_data_dir

        use_data_dir(paths_of(args).data_dir)
        rows = [{"name": n, "transport": c.transport_id, "disabled": c.disabled, "auth": auth_state(c.url, c.headers, c.oauth),
                 "trustsAnnotations": c.annotations_trusted,
                 "target": c.url or " ".join([c.command or ""] + c.args)} for n, c in cfg.mcp_servers.items()]
        if args.json:
            _print_json(rows)
        else:
            for r in rows:
                signed = {"signed-in": "signed in ", "step-up": "signed in (more access asked) "}.get(str(r["auth"]), "")
                trusted = "trusts hints " if r["trustsAnnotations"] else ""
                print(f"{r['name']:<24} {r['transport']:<6} {'disabled ' if r['disabled'] else ''}{signed}{trusted}"
                      f"{r['target']}")
            if not rows:
                print("no servers configured; add one with `moka servers add NAME -- COMMAND ARGS...`")
        return 0

    async def go() -> list[dict[str, Any]]:
        async with core(args, None) as app:
            return app.servers.infos()

    infos = run(go)
    if args.json:
        _print_json(infos)
    else:
        for i in infos:
            status = "sign in required" if i["status"] == "signin" else i["status"]
            print(f"{i['name']:<24} {status:<10} {i['toolCount']:>3} tools  {line(i.get('error', ''))}")
    return 0 if all(i["status"] in ("ready", "disabled") for i in infos) else 1


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"{what} must look like KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k] = v
    return out


def servers_add(args: argparse.Namespace) -> int:
    """Add a stdio (``-- COMMAND ARGS``) or HTTP (``--url``) server to the config."""
    argv = list(args.argv)
    if not args.url and not argv:
        raise UsageError("give a command after `--` or a --url",
                         hint="moka servers add NAME -- npx -y @modelcontextprotocol/server-basic-vanillajs --stdio")
    data: dict[str, Any] = {"env": _pairs(args.env, "--env"), "headers": _pairs(args.header, "--header")}
    if args.url:
        data["url"] = args.url
    else:
        data["command"], data["args"] = argv[0], argv[1:]
    if args.cwd:
        data["cwd"] = args.cwd
    if args.type:
        data["type"] = args.type
    if args.trust_annotations:
        data["trustAnnotations"] = True
    cfg_file = ConfigFile(paths_of(args).config_file)
    configs = ServerConfigs(cfg_file.config, cfg_file.save)
    replacing = configs.taken(args.name)
    configs.add(args.name, ServerConfig.model_validate(data), replace=args.replace,
                taken_hint="pass --replace to replace it (its other settings are kept), or pick another name")
    print(f"replaced {args.name!r} in {cfg_file.path}" if replacing else f"added {args.name!r} to {cfg_file.path}")
    return 0


def servers_trust(args: argparse.Namespace) -> int:
    """Trust a server's tool annotations (``trustAnnotations``), or stop (``--off``)."""
    cfg_file = ConfigFile(paths_of(args).config_file)
    ServerConfigs(cfg_file.config, cfg_file.save).change(args.name, trustAnnotations=not args.off)
    if args.off:
        print(f"Moka no longer goes by {args.name!r}'s tool annotations: its read-only tools ask before they run")
    else:
        print(f"Moka goes by {args.name!r}'s tool annotations: the tools it marks read-only run without asking "
              "(approval mode 'read-only'); undo with --off")
    return 0


def servers_remove(args: argparse.Namespace) -> int:
    """Remove a server from the config."""
    cfg_file = ConfigFile(paths_of(args).config_file)
    ServerConfigs(cfg_file.config, cfg_file.save).remove(args.name)
    print(f"removed {args.name!r}")
    return 0


def servers_import(args: argparse.Namespace) -> int:
    """Import servers from another client's config file."""
    found = import_config_file(Path(args.path).expanduser())
    cfg_file = ConfigFile(paths_of(args).config_file)
    done = ServerConfigs(cfg_file.config, cfg_file.save).add_new(found.servers)
    for name, reason in [*done.skipped, *found.skipped]:
        print(f"skipped {name!r}: {reason}")
    print(f"imported {len(done.added)} server(s) from {found.source_format} config: {', '.join(done.added) or 'none'}")
    return 0


# ---- tools and calls ---------------------------------------------------------------------------


def _require_ready(app: Any, names: list[str]) -> None:
    for name in names:
        conn = app.servers.get(name)
        if conn.status != "ready":
            raise ServerUnavailableError(name, conn.status, conn.error)


def tools(args: argparse.Namespace) -> int:
    """List tools with visibility and UI resource."""

    async def go() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with core(args, [args.server] if args.server else None, views=False) as app:
            if args.server:
                _require_ready(app, [args.server])
            return [t.to_info() for t in app.servers.all_tools()], app.servers.infos()

    tool_rows, infos = run(go)
    failed = [i for i in infos if i["status"] not in ("ready", "disabled")]
    if args.json:
        _print_json(tool_rows)
    else:
        for t in tool_rows:
            # Names, descriptions and URIs are the server's: each stays on its own line (terminal.line).
            ui = f"  ui: {line(t['resourceUri'])}" if t.get("resourceUri") else ""
            print(f"{t['server']}/{line(t['name'])}  [{','.join(line(v) for v in t['visibility'])}]{ui}")
            if t.get("description"):
                print(f"    {line(t['description'].splitlines()[0][:100])}")
            for problem in t.get("problems", []):
                print(f"    warning: {line(problem)}")
    for i in failed:
        print(f"moka: server {i['name']!r} is {i['status']}: {line(i.get('error', ''))}", file=sys.stderr)
    return 1 if failed and not tool_rows else 0


def call(args: argparse.Namespace) -> int:
    """Call one tool and print its content and structuredContent."""
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise UsageError(f"arguments must be a JSON object: {exc.msg}", hint="e.g. '{\"sides\": 6}'") from exc
    if not isinstance(arguments, dict):
        raise UsageError("arguments must be a JSON object, e.g. '{\"sides\": 6}'")

    answers = answers_of(args)
    all_answered = True

    async def go() -> dict[str, Any]:
        nonlocal all_answered
        async with core(args, [args.server], answers=answers, views=False) as app:
            _require_ready(app, [args.server])
            try:
                result = await app.servers.get(args.server).call_tool(args.tool, arguments)
            except BaseException:
                report_questions(app, refused=False)  # the error says the refusal itself
                raise
            all_answered = report_questions(app)
            return result

    result = run(go)
    if args.json:
        _print_json(result)
    else:
        for item in result.get("content") or []:
            if item.get("type") == "text":
                print(item.get("text", ""))
            else:
                print(f"[{line(item.get('type'))} content]")
        if "structuredContent" in result:
            print("structuredContent: " + json.dumps(result["structuredContent"], default=str))
    return 1 if result.get("isError") or not all_answered else 0


# ---- inspector, keys --------------------------------------------------------------------


def _stamp(when: object) -> str:
    """An event's time as HH:MM:SS.mmm, or a placeholder for a time no clock can show (1e20, inf, NaN)."""
    import time as _t

    try:
        seconds = float(when)  # type: ignore[arg-type]
        return _t.strftime("%H:%M:%S", _t.localtime(seconds)) + f".{int(seconds * 1000) % 1000:03d}"
    except (TypeError, ValueError, OverflowError, OSError):  # a log written by hand or by another program
        return "--:--:--.---"


def _format_event(ev: dict[str, Any]) -> str:
    stamp = _stamp(ev.get("time", 0))
    arrow = {"in": "<-", "out": "->"}.get(ev.get("direction", "-"), "  ")
    who = line(ev.get("server", "")) + (f"/{line(ev['view'])}" if ev.get("view") else "")
    body = json.dumps(ev.get("message"), default=str)
    return f"{stamp} {line(ev.get('channel', '')):<8} {arrow} {who:<22} {line(ev.get('method') or ''):<34} {body[:160]}"


def inspect(args: argparse.Namespace) -> int:
    """Print stored inspector events, optionally following new ones."""
    folder = paths_of(args).inspector_dir
    if (blocker := file_in_the_way(folder)) is not None:  # not "no events yet": say what is in the way (R3.4)
        raise folder_blocked(folder, "the inspector's folder", "read", blocker)
    flt = EventFilter(channel=args.channel, server=args.server)
    # From the end of the newest file backwards: memory is bounded by --limit, not by the log's size.
    events = read_tail(folder, flt.matches, args.limit) if args.limit > 0 else []
    for ev in events:
        print(json.dumps(ev, default=str) if args.json else _format_event(ev))
    if args.follow:
        try:
            for ev in follow_log(folder):
                if flt.matches(ev):
                    print(json.dumps(ev, default=str) if args.json else _format_event(ev), flush=True)
        except KeyboardInterrupt:
            return 0
    elif not events and not args.json:
        print(f"no events yet in {folder}", file=sys.stderr)
    return 0


def keys(args: argparse.Namespace) -> int:
    """Store or delete a backend's API key in the OS keyring (read from stdin)."""
    from moka_shell.core.chat.keys import delete_key, store_key

    if args.action == "path":
        import keyring

        print(type(keyring.get_keyring()).__name__)
        return 0
    if not args.backend:
        raise UsageError("name the backend, e.g. `moka keys set openai`")
    if args.action == "delete":
        delete_key(args.backend)
        print(f"removed the key for {args.backend!r}")
        return 0
    key = sys.stdin.readline().strip() if not sys.stdin.isatty() else __import__("getpass").getpass("API key: ")
    if not key:
        raise UsageError("no key given")
    store_key(args.backend, key)
    print(f"stored the key for {args.backend!r} in the OS keyring")
    return 0


def demo_server(args: argparse.Namespace) -> int:
    """Run the bundled demo server (how frozen apps start it)."""
    from moka_shell.demo.server import main as demo_main

    return int(demo_main(list(args.rest)) or 0)

