"""Watching a view after its result until it is quiet, and turning what it did into a report."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from moka_shell.core.views.profile import HostProfile
from moka_shell.core.views.view import View
from moka_shell.inspector import EventFilter, Inspector
from moka_shell.shells.check.findings import Finding, classify, csp_finding, error_finding
from moka_shell.shells.check.report import ViewReport

POLL = 0.05
CAUSES = ("thrown-error", "missing-host-context", "storage", "needs-unsafe-eval")
MAX_TIMELINE = 400  # entries kept per view (the transcript keeps every ui.rpc message)
ALL_CONTEXT = ("toolInfo", "theme", "styles", "displayMode", "availableDisplayModes", "containerDimensions",
               "locale", "timeZone", "userAgent", "platform", "deviceCapabilities", "safeAreaInsets")


def _delivered(view: View) -> bool:
    return view.initialized and ("result_sent" in view.timings or view.cancelled is not None)


def watch(view: View, inspector: Inspector, *, settle: float, deadline: float,
          pause: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Wait for the result, then until nothing happened for ``settle`` s (or the deadline).

    Activity is any message to or from the view, an error, a CSP report or a size change:
    everything the inspector records for it.
    """
    last_seq = 0
    last_activity = time.monotonic()
    delivered_at: float | None = None
    while time.monotonic() < deadline:
        page = inspector.page(EventFilter(view=view.id), limit=50, after=last_seq)
        if page.events:
            last_seq = max(int(e["seq"]) for e in page.events)
            last_activity = time.monotonic()
        if view.state == "failed":
            return {"quiet": True, "settled": False}
        if delivered_at is None and _delivered(view):
            delivered_at = time.monotonic()
        if delivered_at is not None and time.monotonic() - max(last_activity, delivered_at) >= settle:
            return {"quiet": True, "settled": True}
        pause(POLL)
    return {"quiet": False, "settled": delivered_at is not None}


def _t(ev: dict[str, Any], wall0: float) -> float:
    return round((float(ev.get("time", wall0)) - wall0) * 1000, 1)


def _summary(message: Any) -> str:
    if not isinstance(message, dict):
        return "?"
    if message.get("method"):
        return str(message["method"])
    if "error" in message and isinstance(message["error"], dict):
        return f"error {message['error'].get('code')} {message['error'].get('message', '')}".strip()
    if isinstance(message.get("result"), dict) and message["result"].get("isError"):
        return "result isError"
    return "result"


def collect(vr: ViewReport, view: View, events: list[dict[str, Any]], *, wall0: float, timeout: float,
            watched: dict[str, Any], probe: dict[str, Any] | None, profile: HostProfile | None,
            consent: list[dict[str, Any]], engine: str) -> None:
    """Fill a view's report: transcript, timeline, requests, size, and every finding, classified."""
    t0 = view.timings.get("t0") or view.timings.get("created", 0)
    vr.timings_ms = {k: round((v - t0) * 1000, 1) for k, v in view.timings.items()
                     if k != "t0" and isinstance(v, float) and v >= t0}
    vr.app_info = view.app_info
    vr.app_tools = [str(t.get("name", "?")) for t in view.app_tools]
    rpc = [e for e in events if e["channel"] == "ui.rpc"]
    vr.transcript = [{"direction": e["direction"], "channel": e["channel"], "method": e.get("method"),
                      "message": e["message"]} for e in rpc]
    findings: list[Finding] = []
    omitted = [f for f in ALL_CONTEXT if profile is not None and profile.context_fields is not None
               and f not in profile.context_fields]
    eval_blocked = False
    sizes: list[dict[str, Any]] = []
    asked: dict[Any, dict[str, Any]] = {}
    for e in events:
        msg = e["message"] if isinstance(e["message"], dict) else {}
        t = _t(e, wall0)
        if e["channel"] == "ui.rpc":
            arrow = "view → host" if e["direction"] == "in" else "host → view"
            vr.timeline.append({"t": t, "event": f"{arrow} {_summary(msg)}"})
            method = msg.get("method")
            raw = msg.get("params")
            params: dict[str, Any] = raw if isinstance(raw, dict) else {}
            if e["direction"] == "in" and method and "id" in msg:
                asked[msg["id"]] = {"method": method, "params": _short(params), "t": t}
            elif e["direction"] == "out" and not method and msg.get("id") in asked:
                req = asked.pop(msg["id"])
                req["answer"] = _summary(msg)
                if "error" in msg:
                    req["error"] = msg["error"]
                vr.requests.append(req)
                if "error" in msg and req["method"] not in ("ui/initialize",):
                    err = msg["error"] if isinstance(msg["error"], dict) else {}
                    findings.append(Finding("request-refused", f"the host refused {req['method']}: "
                                            f"{err.get('message', '?')} ({err.get('code')})", "warning",
                                            detail={"request": req}))
            if method == "ui/notifications/size-changed" and e["direction"] == "in":
                sizes.append({k: params[k] for k in ("width", "height") if k in params})
            if method == "notifications/message" and params.get("logger") == "moka.view":
                raw_data = params.get("data")
                data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
                if data.get("kind") == "csp":
                    blocked = str(data.get("blockedURI") or "")
                    if blocked == "eval":
                        eval_blocked = True
                        continue
                    f = csp_finding(str(data.get("directive") or "?"), blocked)
                    findings.append(f)
                    line = f"{f.detail['directive']} blocked {blocked}"
                    if line not in vr.csp_violations:
                        vr.csp_violations.append(line)
                elif data:
                    vr.errors.append({"t": t, **data})
                    findings.append(error_finding(data, omitted=omitted, eval_blocked=eval_blocked))
        elif e.get("method") == "view/csp-report":
            report = (msg.get("report") or {}).get("csp-report") or msg.get("report") or {}
            if isinstance(report, dict) and report.get("blocked-uri") == "eval":
                eval_blocked = True
        elif e["channel"] == "view":
            vr.timeline.append({"t": t, "event": f"view {msg.get('event', e.get('method'))}"})
    for req in asked.values():
        vr.requests.append({**req, "answer": "no answer yet"})
    for c in consent:
        vr.consent.append(c)
        findings.append(Finding("would-ask-person", f"would ask the person to allow {c['action']}; answered as a "
                                f"denial", "warning", detail=c))
        vr.timeline.append({"t": c.get("t", 0.0), "event": f"would ask the person: {c['action']}"})
    if eval_blocked:
        threw = any(f.cls in ("thrown-error", "needs-unsafe-eval") for f in findings)
        broke = threw or view.state == "failed"
        findings.append(Finding("needs-unsafe-eval", "the view tried eval() or new Function, which the CSP blocks"
                                + ("" if broke else " (a probe, as Zod makes; harmless while the view works)"),
                                "failure" if broke else "warning"))
    vr.size = {"requested": sizes[-1] if sizes else None, "changes": len(sizes),
               **({"rendered": probe} if probe is not None else {})}
    _judge(vr, view, findings, timeout=timeout, watched=watched, probe=probe, sizes=sizes, engine=engine)
    vr.timeline.sort(key=lambda x: x["t"])
    del vr.timeline[MAX_TIMELINE:]


def _judge(vr: ViewReport, view: View, findings: list[Finding], *, timeout: float, watched: dict[str, Any],
           probe: dict[str, Any] | None, sizes: list[dict[str, Any]], engine: str) -> None:
    first: list[Finding] = []
    if view.state == "failed":
        first.append(classify(view.failure or "failed"))
    elif not view.initialized:
        first.append(Finding("no-handshake", f"no handshake within {timeout:g} s"))
    elif "result_sent" not in view.timings and view.cancelled is None:
        first.append(Finding("no-result", "the view never received its tool result"))
    if view.cancelled and view.result is None:
        first.append(Finding("tool-error", f"the tool call did not succeed: {view.cancelled}", "warning"))
    if view.result and view.result.get("isError"):
        first.append(Finding("tool-error", "the tool returned isError: true", "warning"))
    if view.initialized and not sizes:
        blank = probe is not None and not probe.get("text") and not probe.get("elements")
        if blank:
            first.append(Finding("blank-view", "blank view: it never sent ui/notifications/size-changed and "
                                 "renders nothing", detail={"rendered": probe}))
        else:
            note = "" if probe is not None else f" (the {engine} engine cannot look inside the frame to tell " \
                                                "whether it renders anything)"
            first.append(Finding("never-sized", "the view never sent ui/notifications/size-changed" + note,
                                 "warning"))
    if not watched.get("quiet", True):
        first.append(Finding("never-quiet", f"the view was still busy when --timeout ({timeout:g} s) ran out",
                             "warning"))
    # A view that broke its own handshake: the error it threw is the cause, the missed step the effect.
    causes = [f for f in findings if f.severity == "failure" and f.cls in CAUSES]
    ordered = causes + first + [f for f in findings if f not in causes] if first and causes else first + findings
    vr.findings = [f.to_json() for f in ordered]
    for f in ordered:
        line = f.message
        if f.severity == "failure":
            vr.fail(line)
            if line not in vr.problems:
                vr.problems.append(line)
        elif line not in vr.warnings:
            vr.warnings.append(line)
    vr.warnings.extend(w for w in view.warnings if w not in vr.warnings and "eval()" not in w)


def _short(params: dict[str, Any], limit: int = 600) -> Any:
    import json

    text = json.dumps(params, default=str)
    return params if len(text) <= limit else {"moka/truncated": text[:limit] + "…", "moka/size": len(text)}
