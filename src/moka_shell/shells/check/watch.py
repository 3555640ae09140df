"""Watching a view after its result until it is quiet, and turning what it did into a report."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from moka_shell.core.views.csp import PERMISSIONS
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


def _doom(event: dict[str, Any]) -> str | None:
    """Why a view that has not started never will: its script was blocked or did not load."""
    msg = event.get("message")
    params = msg.get("params") if isinstance(msg, dict) else None
    data = params.get("data") if isinstance(params, dict) and params.get("logger") == "moka.view" else None
    if not isinstance(data, dict):
        return None
    if data.get("kind") == "csp" and str(data.get("directive", "")).startswith("script-src") \
            and data.get("blockedURI") not in ("eval", "inline"):
        return f"its script {data.get('blockedURI')} was blocked by the CSP"
    if data.get("kind") == "load" and data.get("tag") == "script":
        return f"its script {data.get('url')} did not load"
    return None


def watch(view: View, inspector: Inspector, *, settle: float, deadline: float,
          pause: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Wait for the result, then until nothing happened for ``settle`` s (or the deadline).

    Activity is any message to or from the view, an error, a CSP report or a size change:
    everything the inspector records for it. A view whose script was blocked or failed to load
    before its handshake is given up on once it was quiet for ``settle`` s: it cannot start.
    """
    last_seq = 0
    last_activity = time.monotonic()
    delivered_at: float | None = None
    doomed: str | None = None
    while time.monotonic() < deadline:
        page = inspector.page(EventFilter(view=view.id), limit=50, after=last_seq)
        if page.events:
            last_seq = max(int(e["seq"]) for e in page.events)
            last_activity = time.monotonic()
            if not view.initialized:
                doomed = doomed or next((d for e in page.events if (d := _doom(e))), None)  # the first cause
        if view.state == "failed":
            return {"quiet": True, "settled": False}
        if doomed and not view.initialized and time.monotonic() - last_activity >= settle:
            return {"quiet": True, "settled": False, "stopped": doomed}
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
            watched: dict[str, Any], seen: dict[str, Any], profile: HostProfile | None,
            consent: list[dict[str, Any]], engine: str) -> None:
    """Fill a view's report: transcript, timeline, requests, size, and every finding, classified.

    ``seen`` is what the engine saw: ``probe`` (the frame's DOM and size) and ``painted`` (its
    pixels' colours), each None when the engine cannot tell.
    """
    probe, painted = seen.get("probe"), seen.get("painted")
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
    loads: list[dict[str, Any]] = []
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
                elif data.get("kind") == "load":
                    loads.append(data)
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
        if c.get("action") != "permissions":  # asked once a run; every view they were denied to says so below
            findings.append(Finding("would-ask-person", f"would ask the person to allow {c['action']}; answered "
                                    "as a denial", "warning", detail=c))
        vr.timeline.append({"t": c.get("t", 0.0), "event": f"would ask the person: {c['action']}"})
    findings.extend(_load_findings(loads, vr.csp_violations, seen.get("loads") or {}))
    if note := _permissions_note(view):
        findings.append(note)
    if eval_blocked:
        threw = any(f.cls in ("thrown-error", "needs-unsafe-eval") for f in findings)
        broke = threw or view.state == "failed"
        findings.append(Finding("needs-unsafe-eval", "the view tried eval() or new Function, which the CSP blocks"
                                + ("" if broke else " (a probe, as Zod makes; harmless while the view works)"),
                                "failure" if broke else "warning"))
    vr.size = {"requested": sizes[-1] if sizes else None, "changes": len(sizes),
               **({"rendered": probe} if probe is not None else {}),
               **({"painted": painted} if painted is not None else {})}
    _judge(vr, view, findings, timeout=timeout, watched=watched, seen={"probe": probe, "painted": painted},
           sizes=sizes, engine=engine)
    vr.timeline.sort(key=lambda x: x["t"])
    del vr.timeline[MAX_TIMELINE:]


def _judge(vr: ViewReport, view: View, findings: list[Finding], *, timeout: float, watched: dict[str, Any],
           seen: dict[str, Any], sizes: list[dict[str, Any]], engine: str) -> None:
    first: list[Finding] = []
    if view.state == "failed":
        first.append(classify(view.failure or "failed"))
    elif not view.initialized and watched.get("stopped"):
        first.append(Finding("no-handshake", f"no handshake: {watched['stopped']}, so the view cannot start "
                             "(`moka check` stopped waiting once the view was quiet)"))
    elif not view.initialized:
        first.append(Finding("no-handshake", f"no handshake within {timeout:g} s"))
    elif "result_sent" not in view.timings and view.cancelled is None:
        first.append(Finding("no-result", "the view never received its tool result"))
    if view.cancelled and view.result is None:
        first.append(Finding("tool-error", f"the tool call did not succeed: {view.cancelled}", "warning"))
    if view.result and view.result.get("isError"):
        first.append(Finding("tool-error", "the tool returned isError: true", "warning"))
    if view.initialized and view.state != "failed":
        first.extend(_looks(seen, sizes, engine))
    if not watched.get("quiet", True):
        first.append(Finding("never-quiet", f"the view was still busy when --timeout ({timeout:g} s) ran out",
                             "warning"))
    # A view that broke its own handshake: the error it threw is the cause, the missed step the effect.
    # One that never started: its blocked or missing script is the cause too.
    cause_classes = CAUSES if view.initialized else CAUSES + ("csp-blocked", "load-failed")
    causes = [f for f in findings if f.severity == "failure" and f.cls in cause_classes]
    ordered = causes + first + [f for f in findings if f not in causes] if first and causes else first + findings
    vr.findings = [f.to_json() for f in ordered]
    for f in ordered:
        line = f.message
        if f.severity == "failure":
            vr.fail(line)
            if line not in vr.problems:
                vr.problems.append(line)
        elif f.severity == "info":
            if line not in vr.notes:
                vr.notes.append(line)
        elif line not in vr.warnings:
            vr.warnings.append(line)
    vr.warnings.extend(w for w in view.warnings if w not in vr.warnings and "eval()" not in w)


def _load_findings(loads: list[dict[str, Any]], blocked: list[str], network: dict[str, str]) -> list[Finding]:
    """Files the view's elements failed to load (once each; a CSP block is already its own finding).

    A script that did not load is a failure: the code of the view is missing. An image, a
    stylesheet or a font is a warning.
    """
    out: list[Finding] = []
    for data in {str(d.get("url") or ""): d for d in loads}.values():
        url, tag = str(data.get("url") or ""), str(data.get("tag") or "file")
        if not url or any(line.endswith(" " + url) for line in blocked):
            continue
        why = network.get(url) or "no reason known: open the URL to see"
        out.append(Finding("load-failed", f"the {tag} {url} did not load ({why})",
                           "failure" if tag == "script" else "warning", detail={"url": url, "tag": tag,
                                                                                "why": why}))
    return out


def _looks(seen: dict[str, Any], sizes: list[dict[str, Any]], engine: str) -> list[Finding]:
    """Blank (nothing painted), clipped (content the frame hides), or never sized: judged by what shows."""
    probe, painted = seen.get("probe"), seen.get("painted")
    out: list[Finding] = []
    sized = "" if sizes else " and never sent ui/notifications/size-changed"
    if painted is not None and painted.get("colours") == 1:
        out.append(Finding("blank-view", f"blank view: it painted nothing (its {painted.get('width')} × "
                           f"{painted.get('height')} px frame is a single colour){sized}",
                           detail={"painted": painted, **({"rendered": probe} if probe else {})}))
        return out
    if painted is None and probe is not None and not sizes and not probe.get("text") and not probe.get("elements"):
        out.append(Finding("blank-view", "blank view: it never sent ui/notifications/size-changed and "
                           "renders nothing", detail={"rendered": probe}))
        return out
    clipped = (probe or {}).get("clipped")
    if clipped:
        frame = (probe or {}).get("frame") or {}
        asked = f"; the view asked for {sizes[-1].get('height')} px" if sizes and "height" in sizes[-1] else ""
        out.append(Finding("clipped", f"clipped: its content is {clipped.get('content')} px tall, but "
                           f"{clipped.get('by')} shows {clipped.get('shown')} px and hides the rest (the frame is "
                           f"{frame.get('height')} px{asked})", detail={"rendered": probe}))
    if not sizes:
        note = "" if probe is not None else f" (the {engine} engine cannot look inside the frame to tell " \
                                            "whether it renders anything)"
        out.append(Finding("never-sized", "the view never sent ui/notifications/size-changed" + note, "warning"))
    return out


def _permissions_note(view: View) -> Finding | None:
    """Devices the resource declares and the person was asked for: valid, so information only."""
    if not view.policy.denied:
        return None
    raw = view.resource.ui_meta.get("permissions")
    declared = sorted(k for k in raw if k in PERMISSIONS) if isinstance(raw, dict) else []
    return Finding("asks-permission", f"would ask the person for {', '.join(declared) or 'its permissions'} "
                   "(declared in the resource's _meta.ui.permissions); `moka check` renders the view without "
                   "them, as after a no", "info", detail={"permissions": declared})


def _short(params: dict[str, Any], limit: int = 600) -> Any:
    import json

    text = json.dumps(params, default=str)
    return params if len(text) <= limit else {"moka/truncated": text[:limit] + "…", "moka/size": len(text)}
