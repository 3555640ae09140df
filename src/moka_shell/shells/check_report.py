"""The report ``moka check`` prints: per view, handshake timings, transcript, errors, CSP."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

# Timings worth printing, in the order they happen.
_STEPS = [("proxy_ready", "proxy ready"), ("document", "document served"), ("initialize", "ui/initialize"),
          ("initialized", "initialized"), ("input_sent", "tool-input"), ("result_sent", "tool-result")]


@dataclass
class ViewReport:
    """What happened to one view."""

    tool: str
    arguments: dict[str, Any]
    resource_uri: str
    ok: bool = True
    failure: str | None = None
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    csp: str = ""
    csp_violations: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    app_info: dict[str, Any] = field(default_factory=dict)
    app_tools: list[str] = field(default_factory=list)

    def fail(self, reason: str) -> None:
        """Mark the view failed (the first reason wins)."""
        self.ok = False
        self.failure = self.failure or reason


@dataclass
class CheckReport:
    """The whole check of one server."""

    server: str
    engine: str
    server_status: str = "?"
    protocol_version: str | None = None
    metadata: list[dict[str, str]] = field(default_factory=list)
    views: list[ViewReport] = field(default_factory=list)

    def add_problem(self, tool: str, problem: str) -> None:
        """A problem in the server's metadata (fails the check)."""
        item = {"tool": tool, "problem": problem}
        if item not in self.metadata:
            self.metadata.append(item)

    @property
    def ok(self) -> bool:
        """True when every view passed and the metadata has no problem."""
        return all(v.ok for v in self.views) and not self.metadata

    def to_json(self) -> dict[str, Any]:
        """Machine-readable form (for CI)."""
        return {"server": self.server, "engine": self.engine, "ok": self.ok, "serverStatus": self.server_status,
                "protocolVersion": self.protocol_version, "metadataProblems": self.metadata,
                "views": [asdict(v) for v in self.views]}

    def to_text(self) -> str:
        """Human-readable form."""
        lines = [f"moka check {self.server}  (engine: {self.engine}, server {self.server_status}"
                 + (f", protocol {self.protocol_version})" if self.protocol_version else ")")]
        for v in self.views:
            mark = "PASS" if v.ok else "FAIL"
            lines.append(f"\n{mark}  {v.tool}  {v.resource_uri}  args {json.dumps(v.arguments)}")
            if v.app_info:
                lines.append(f"      app: {v.app_info.get('name', '?')} {v.app_info.get('version', '')}")
            if v.app_tools:
                lines.append(f"      tools the view offers: {', '.join(v.app_tools)}")
            steps = [f"{label} {v.timings_ms[k]:.0f} ms" for k, label in _STEPS if k in v.timings_ms]
            if steps:
                lines.append("      " + " · ".join(steps))
            if v.failure:
                lines.append(f"      error: {v.failure}")
            for p in v.problems:
                if p != v.failure:
                    lines.append(f"      problem: {p}")
            for w in v.warnings:
                lines.append(f"      warning: {w}")
            for c in v.csp_violations:
                lines.append(f"      csp violation: {c}")
            methods = [f"{'<-' if t['direction'] == 'in' else '->'} {t.get('method') or _reply(t['message'])}"
                       for t in v.transcript]
            if methods:
                lines.append(f"      ui.rpc ({len(methods)}): " + ", ".join(methods[:14])
                             + (" …" if len(methods) > 14 else ""))
        if self.metadata:
            lines.append("\nmetadata problems:")
            for m in self.metadata:
                lines.append(f"  {m['tool']}: {m['problem']}")
        failed = sum(1 for v in self.views if not v.ok)
        lines.append(f"\n{'OK' if self.ok else 'FAILED'}: {len(self.views) - failed} of {len(self.views)} views passed, "
                     f"{len(self.metadata)} metadata problem(s)")
        return "\n".join(lines)


def _reply(message: Any) -> str:
    if isinstance(message, dict) and "error" in message:
        return f"error {message['error'].get('code')}"
    return "result" if isinstance(message, dict) and "result" in message else "?"
