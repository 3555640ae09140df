"""The long-running commands: the desktop app, browser mode, checks and headless chat."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from typing import TYPE_CHECKING

from moka_shell.errors import UsageError
from moka_shell.paths import Paths, resolve_paths
from moka_shell.shells.core_thread import has_display

if TYPE_CHECKING:
    from moka_shell.shells.check.baseline import Baselines


def paths_of(args: argparse.Namespace) -> Paths:
    """The config and data paths for this invocation."""
    return resolve_paths(args.config, args.data_dir)


def serve(args: argparse.Namespace, *, announce: str | None = None) -> int:
    """Browser mode: serve the UI on 127.0.0.1 until interrupted."""
    from moka_shell.shells.browser import run_browser

    return run_browser(paths_of(args), port=args.port, announce=announce, open_browser=bool(getattr(args, "open", False)))


def desktop(args: argparse.Namespace) -> int:
    """The desktop app; with no display it says so and falls back to browser mode."""
    if not has_display():
        args.port = 0
        return serve(args, announce="moka: no display found (no DISPLAY or WAYLAND_DISPLAY); "
                                    "serving the same UI in browser mode instead.")
    from moka_shell.core.instance_lock import request_focus
    from moka_shell.errors import InstanceRunningError
    from moka_shell.shells.desktop.run import run_desktop

    paths = paths_of(args)
    try:
        return run_desktop(paths)
    except InstanceRunningError:
        # A second launch: bring the first window forward instead of starting a second writer.
        if request_focus(paths.data_dir):
            print("moka: Moka is already running; its window was brought to the front.", file=sys.stderr)
            return 0
        raise


def check(args: argparse.Namespace) -> int:
    """Render a server's UI tools headless and print a report."""
    from moka_shell.cli.commands import answers_of
    from moka_shell.shells.check.run import CheckOptions, run_check
    from moka_shell.shells.check.html_report import write_html
    from moka_shell.shells.check.junit import write_junit

    tool_args = None
    if args.record and not args.tool:
        raise UsageError("--record needs --tool (a recording holds one view)")
    if args.args is not None:
        if not args.tool:
            raise UsageError("--args needs --tool")
        try:
            tool_args = json.loads(args.args)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args must be a JSON object: {exc.msg}") from exc
    if args.settle < 0 or args.timeout <= 0:
        raise UsageError("--settle must be 0 or more and --timeout more than 0")
    baselines = _baselines(args)
    with tempfile.TemporaryDirectory(prefix="moka-check-") as shots:
        # The HTML report embeds the screenshots and --baseline compares them: without --screenshot
        # they are taken into a folder that goes once the report is written.
        options = CheckOptions(tool=args.tool, tool_args=tool_args, timeout=args.timeout,
                               settle=min(args.settle, args.timeout), engine=args.engine, profiles=args.profile,
                               screenshot_dir=args.screenshot or (shots if args.html or baselines else None),
                               record=args.record, no_storage=args.no_storage, answers=answers_of(args),
                               baselines=baselines, process_ends_after=True)
        report = run_check(paths_of(args), args.server, options)
        if args.html:
            write_html(report, args.html)
        if not args.screenshot:
            for view in report.views:
                view.screenshots = {}  # taken only for the HTML report, and gone with the folder
    if args.junit:
        write_junit(report, args.junit)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, default=str))
    else:
        print(report.to_text())
    return report.exit_code


def _baselines(args: argparse.Namespace) -> Baselines | None:
    """--baseline, --update-baseline and --baseline-tolerance, checked."""
    from moka_shell.shells.check.baseline import TOLERANCE, Baselines

    if not args.baseline:
        if args.update_baseline or args.baseline_tolerance is not None:
            raise UsageError("--update-baseline and --baseline-tolerance need --baseline DIR")
        return None
    tolerance = TOLERANCE if args.baseline_tolerance is None else args.baseline_tolerance
    if not 0 <= tolerance <= 100:
        raise UsageError("--baseline-tolerance is a percentage of pixels, from 0 to 100")
    if importlib.util.find_spec("PIL") is None:
        raise UsageError("--baseline compares pixels with Pillow: pip install 'moka-shell[check]'")
    # Diff images go with the screenshots the person asked for (a CI artifact), else beside the baselines.
    return Baselines(args.baseline, update=args.update_baseline, tolerance=tolerance, diff_folder=args.screenshot)


def chat(args: argparse.Namespace) -> int:
    """One headless chat turn; prints the transcript."""
    from moka_shell.cli.chat import run_chat_turn
    from moka_shell.cli.commands import answers_of

    import asyncio

    transcript, ok = asyncio.run(run_chat_turn(paths_of(args), args.message, backend=args.backend,
                                               model=args.model, conversation=args.conversation,
                                               approve=args.approve, answers=answers_of(args)))
    if args.json:
        print(json.dumps(transcript, indent=2, default=str))
    else:
        for line in transcript["lines"]:
            print(line)
    sys.stdout.flush()
    return 0 if ok else 1
