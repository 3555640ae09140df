"""The report ``moka check`` prints: per view and profile, what happened, what failed, and the fix."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from moka_shell.shells.check.storage import line as storage_line
from moka_shell.terminal import line

# Timings worth printing, in the order they happen.
_STEPS = [("proxy_ready", "proxy ready"), ("document", "document served"), ("initialize", "ui/initialize"),
          ("initialized", "initialized"), ("input_sent", "tool-input"), ("result_sent", "tool-result")]


@dataclass
class ViewReport:
    """What happened to one view under one host profile."""

    tool: str
    arguments: dict[str, Any]
    resource_uri: str
    profile: str = "moka"
    ok: bool = True
    failure: str | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # information: never changes the status
    findings: list[dict[str, Any]] = field(default_factory=list)  # {class, severity, message, fix, detail?}
    csp: str = ""
    csp_violations: list[str] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)  # thrown errors, rejections, console.error
    size: dict[str, Any] = field(default_factory=dict)  # what the view asked for, rendered and painted
    requests: list[dict[str, Any]] = field(default_factory=list)  # view → host requests and their answers
    consent: list[dict[str, Any]] = field(default_factory=list)  # what a person would have been asked
    timings_ms: dict[str, float] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    app_info: dict[str, Any] = field(default_factory=dict)
    app_tools: list[str] = field(default_factory=list)
    screenshots: dict[str, str] = field(default_factory=dict)  # scheme → PNG path
    baseline: dict[str, dict[str, Any]] = field(default_factory=dict)  # scheme → {status, baseline, diff?, …}
    engine_lacks: list[str] = field(default_factory=list)  # options this engine could not honour
    storage: dict[str, Any] = field(default_factory=dict)  # {provided, used, denied} (shells/check_storage.py)

    def fail(self, reason: str) -> None:
        """Mark the view failed (the first reason wins)."""
        self.ok = False
        self.failure = self.failure or reason

    @property
    def status(self) -> str:
        """PASS, WARN (passed with warnings) or FAIL."""
        return "FAIL" if not self.ok else "WARN" if self.warnings else "PASS"


@dataclass
class CheckReport:
    """The whole check of one server."""

    server: str
    engine: str
    tool: str | None = None
    settle: float = 1.5
    profiles: list[dict[str, Any]] = field(default_factory=list)  # {name, title, summary, sources}
    server_status: str = "?"
    protocol_version: str | None = None
    metadata: list[dict[str, str]] = field(default_factory=list)  # problems that count
    # Harmless metadata mistakes, and with --tool the other tools' problems: they never count.
    metadata_warnings: list[dict[str, str]] = field(default_factory=list)
    views: list[ViewReport] = field(default_factory=list)
    engine_lacks: list[str] = field(default_factory=list)
    nothing_to_check: str | None = None  # why there was no view to render (exit code 5)
    baseline: dict[str, Any] = field(default_factory=dict)  # --baseline: {folder, update, tolerancePercent}

    def add_problem(self, tool: str, problem: str, *, harmless: bool = False) -> None:
        """A problem in the server's metadata: it counts unless harmless or --tool names another tool."""
        from moka_shell.shells.check.findings import classify

        finding = classify(problem, default="harmless-metadata" if harmless else "metadata")
        item = {"tool": tool, "problem": problem, "class": finding.cls, "fix": finding.fix}
        counts = not harmless and (self.tool is None or tool == self.tool)
        target = self.metadata if counts else self.metadata_warnings
        if item not in target:
            target.append(item)

    @property
    def ok(self) -> bool:
        """True when there was something to check and no cell of the matrix is FAIL."""
        return self.nothing_to_check is None and not any("FAIL" in row.values() for row in self.matrix().values())

    @property
    def exit_code(self) -> int:
        """0 passed, 1 something failed, 5 nothing to check (no UI tool)."""
        return 0 if self.ok else 5 if self.nothing_to_check and not self.metadata else 1

    def matrix(self) -> dict[str, dict[str, str]]:
        """tool → profile → PASS / WARN / FAIL; a tool's metadata counts in each of its cells."""
        names = [p["name"] for p in self.profiles] or ["moka"]
        out: dict[str, dict[str, str]] = {}
        for v in self.views:
            out.setdefault(v.tool, {})[v.profile] = v.status
        for m in self.metadata:
            out[m["tool"]] = dict.fromkeys(out.get(m["tool"]) or names, "FAIL")
        for m in self.metadata_warnings:
            row = out.get(m["tool"], {})
            row.update({k: "WARN" for k, status in row.items() if status == "PASS"})
        return out

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (for CI): everything."""
        return {"server": self.server, "engine": self.engine, "ok": self.ok, "exitCode": self.exit_code,
                "nothingToCheck": self.nothing_to_check, "tool": self.tool,
                "settleSeconds": self.settle, "serverStatus": self.server_status,
                "protocolVersion": self.protocol_version, "profiles": self.profiles,
                "metadataProblems": self.metadata, "metadataWarnings": self.metadata_warnings,
                "engineLacks": self.engine_lacks, "matrix": self.matrix(), "baseline": self.baseline or None,
                "views": [asdict(v) for v in self.views]}

    def to_text(self) -> str:
        """Human-readable form."""
        names = [p["name"] for p in self.profiles] or ["moka"]
        lines = [f"moka check {self.server}  (engine: {self.engine}, server {self.server_status}"
                 + (f", protocol {self.protocol_version}" if self.protocol_version else "")
                 + f", profile{'s' if len(names) > 1 else ''} {', '.join(names)})"]
        for v in self.views:
            lines.extend(_view_lines(v, with_profile=len(names) > 1))
        if self.metadata:
            lines.append("\nmetadata problems:")
            lines.extend(f"  {line(m['tool'])}: {line(m['problem'])}\n      fix [{m['class']}]: {m['fix']}"
                         for m in self.metadata)
        if self.metadata_warnings:
            lines.append("\nmetadata warnings (they do not count):")
            lines.extend(f"  {line(m['tool'])}: {line(m['problem'])}"
                         + ("" if m["class"] == "harmless-metadata" else f"  (not {self.tool}, the tool checked)")
                         for m in self.metadata_warnings)
        if self.baseline:
            what = "written to" if self.baseline.get("update") else "compared with"
            lines.append(f"\nbaselines {what} {line(self.baseline['folder'])} (a screenshot may change "
                         f"{self.baseline['tolerancePercent']:g} % of its pixels)")
        for lack in self.engine_lacks:
            lines.append(f"\nnote: {lack}")
        if len(names) > 1:
            lines.append("\n" + self.matrix_text(names))
        if self.nothing_to_check:
            lines.append(f"\nnothing to check: {line(self.nothing_to_check)}")
        failed = sum(1 for v in self.views if not v.ok)
        verdict = "OK" if self.ok else "NOTHING TO CHECK" if self.exit_code == 5 else "FAILED"
        lines.append(f"\n{verdict}: {len(self.views) - failed} of {len(self.views)} views passed, "
                     f"{len(self.metadata)} metadata problem(s)"
                     + (f", {len(self.metadata_warnings)} metadata warning(s)" if self.metadata_warnings else "")
                     + f" (exit code {self.exit_code})")
        return "\n".join(lines)

    def matrix_text(self, names: list[str]) -> str:
        """The tool × profile table."""
        m = self.matrix()
        width = max([len("tool")] + [len(t) for t in m]) + 2
        cols = [max(len(n), 4) + 2 for n in names]
        head = "tool".ljust(width) + "".join(n.ljust(c) for n, c in zip(names, cols))
        rows = [t.ljust(width) + "".join(m[t].get(n, "-").ljust(c) for n, c in zip(names, cols)) for t in m]
        return "\n".join([head.rstrip(), "-" * len(head.rstrip())] + [r.rstrip() for r in rows])


def _view_lines(v: ViewReport, *, with_profile: bool) -> list[str]:
    where = f"  [{v.profile}]" if with_profile else ""
    mark = "PASS" if v.ok else "FAIL"
    extra = f"  ({len(v.warnings)} warning{'s' if len(v.warnings) != 1 else ''})" if v.ok and v.warnings else ""
    # Every field a server or view wrote goes through line(): inert, and on the line it belongs to (G5).
    lines = [f"\n{mark}  {line(v.tool)}{where}  {line(v.resource_uri)}  args {json.dumps(v.arguments)}{extra}"]
    if v.app_info:
        lines.append(f"      app: {line(v.app_info.get('name', '?'))} {line(v.app_info.get('version', ''))}")
    if v.app_tools:
        names = ", ".join(line(t) for t in v.app_tools)
        lines.append(f"      tools the view offers (a chat's model gets them as app__NAME while it is open): {names}")
    if v.storage and (used := storage_line(v.storage)):
        lines.append(f"      {used}")
    steps = [f"{label} {v.timings_ms[k]:.0f} ms" for k, label in _STEPS if k in v.timings_ms]
    if steps:
        lines.append("      " + " · ".join(steps))
    asked = (v.size or {}).get("requested")
    if asked:
        lines.append(f"      size asked: {asked.get('width', '?')} × {asked.get('height', '?')} px "
                     f"({v.size.get('changes', 0)} size-changed)")
    if v.failure:
        lines.append(f"      error: {line(v.failure)}")
    # The failure's own fix right under it, then the rest in the order they were found.
    for f in sorted(v.findings, key=lambda f: f["message"] != v.failure):
        label = {"failure": "problem", "warning": "warning"}.get(f["severity"], "note")
        if f["message"] != v.failure:
            lines.append(f"      {label}: {line(f['message'])}")
        lines.append(f"        [{f['class']}] fix: {f['fix']}")
        stack = (f.get("detail") or {}).get("stack")
        if stack:
            lines.extend("          " + line(s) for s in str(stack).splitlines()[:6])
    for w in v.warnings:
        if not any(w == f["message"] for f in v.findings):
            lines.append(f"      warning: {line(w)}")
    for c in v.csp_violations:
        lines.append(f"      csp violation: {line(c)}")
    for r in v.requests:
        if r["method"] != "ui/initialize":
            lines.append(f"      request {line(r['method'])} → {line(r.get('answer', '?'))}")
    for kind, path in v.screenshots.items():
        lines.append(f"      screenshot ({kind}): {path}")
    for kind, entry in v.baseline.items():
        lines.append("      " + line(baseline_line(kind, entry)))
    for lack in v.engine_lacks:
        lines.append(f"      note: {lacking('this', lack)}")
    methods = [f"{'<-' if t['direction'] == 'in' else '->'} {line(t.get('method') or _reply(t['message']))}"
               for t in v.transcript]
    if methods:
        lines.append(f"      ui.rpc ({len(methods)}): " + ", ".join(methods[:14]) + (" …" if len(methods) > 14 else ""))
    return lines


def baseline_line(scheme: str, entry: dict[str, Any]) -> str:
    """One line about a screenshot and its baseline (shells/check/baseline.py fills ``entry``)."""
    status = entry.get("status", "?")
    if status == "changed":
        return f"baseline ({scheme}): CHANGED, {entry.get('changedPercent', 0):.2f} % of pixels; diff: {entry['diff']}"
    if status == "same":
        return f"baseline ({scheme}): same ({entry.get('changedPercent', 0):.2f} % of pixels changed)"
    return f"baseline ({scheme}): {status} {entry['baseline']}"


def _reply(message: Any) -> str:
    if isinstance(message, dict) and "error" in message:
        return f"error {message['error'].get('code')}"
    return "result" if isinstance(message, dict) and "result" in message else "?"


def lacking(engine: str, lack: str) -> str:
    """What an engine could not do, as a sentence ("the webview engine cannot take screenshots")."""
    return f"{engine if engine == 'this' else f'the {engine}'} engine cannot {'take ' if lack == 'screenshots' else ''}{lack}"
