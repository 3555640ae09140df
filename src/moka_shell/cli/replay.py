"""``moka replay FILE``: play a recorded view session back with no server (``--check``: headless, compared)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from moka_shell.errors import UsageError


def add_parser(sub: Any) -> None:
    """Register ``moka replay`` on the CLI's subcommands."""
    r = sub.add_parser("replay", help="play a recorded view session back with no server (--check: headless, compared)")
    r.add_argument("file", help="a recording (moka check --record, or the Inspector's \"Save this view's session\")")
    r.add_argument("--check", action="store_true",
                   help="headless: exit 0 when the view replays as recorded, 1 with each divergence named")
    r.add_argument("--json", action="store_true", help="with --check: the report as JSON")
    r.add_argument("--timeout", type=float, default=20.0, help="seconds for the view (default 20)")
    r.add_argument("--settle", type=float, default=1.5, metavar="S",
                   help="seconds the view must stay quiet before it is compared (default 1.5)")
    r.set_defaults(func=replay)


def replay(args: argparse.Namespace) -> int:
    """Run ``moka replay``."""
    from moka_shell.shells.check.replay import replay_check, replay_open

    if args.timeout <= 0 or args.settle < 0:
        raise UsageError("--timeout must be more than 0 and --settle 0 or more")
    if not args.check:
        if args.json:
            raise UsageError("--json needs --check")
        return replay_open(args.file)
    report = replay_check(args.file, timeout=args.timeout, settle=min(args.settle, args.timeout))
    print(json.dumps(report.to_json(), indent=2) if args.json else report.to_text())
    return 0 if report.ok else 1
