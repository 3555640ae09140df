"""``moka check --html FILE``: the whole report as one self-contained HTML page that looks like Moka.

No network: Moka's own style sheet and the report's are inlined, screenshots are ``data:`` URLs,
and the page's CSP forbids every load but those (its one script, the light/dark switch, is
allowed by its hash). Every string a server or a view wrote is escaped.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from moka_shell.shells.check.report import CheckReport, ViewReport
from moka_shell.version import __version__

_STEPS = [("proxy_ready", "proxy ready"), ("document", "document served"), ("initialize", "ui/initialize"),
          ("initialized", "initialized"), ("input_sent", "tool-input"), ("result_sent", "tool-result")]
_TONE = {"PASS": "success", "WARN": "warning", "FAIL": "danger", "-": "info"}
_LABEL = {"failure": "problem", "warning": "warning", "info": "note"}
MAX_SHOT = 8 * 1024 * 1024  # bytes of one screenshot embedded; a bigger file is linked by name only


def e(value: Any) -> str:
    """Text for HTML (content or a quoted attribute)."""
    return html.escape(str(value), quote=True)


def _static(path: str) -> str:
    return (resources.files("moka_shell") / "web" / "static" / path).read_text(encoding="utf-8")


def _anchor(v: ViewReport) -> str:
    return "view-" + re.sub(r"[^A-Za-z0-9_-]+", "-", f"{v.tool}-{v.profile}")


def _badge(status: str) -> str:
    return f'<span class="badge badge-{_TONE.get(status, "info")}">{e(status)}</span>'


def _matrix(report: CheckReport) -> str:
    names = [p["name"] for p in report.profiles] or ["moka"]
    anchors = {(v.tool, v.profile): _anchor(v) for v in report.views}
    head = "".join(f"<th>{e(n)}</th>" for n in names)
    rows = []
    for tool, row in report.matrix().items():
        cells = []
        for n in names:
            cell = _badge(row.get(n, "-"))
            cells.append(f'<td><a href="#{anchors[(tool, n)]}">{cell}</a></td>' if (tool, n) in anchors
                         else f"<td>{cell}</td>")
        rows.append(f"<tr><td><code>{e(tool)}</code></td>{''.join(cells)}</tr>")
    return f'<table class="matrix"><tr><th>tool</th>{head}</tr>{"".join(rows)}</table>'


def _metadata(report: CheckReport) -> str:
    parts = []
    for title, items, severity in (("Metadata problems (they count)", report.metadata, "failure"),
                                   ("Metadata warnings (they do not count)", report.metadata_warnings, "warning")):
        if items:
            lis = "".join(_finding({"severity": severity, "class": m["class"], "fix": m["fix"],
                                    "message": f"{m['tool']}: {m['problem']}"}) for m in items)
            parts.append(f'<h2 class="section-title">{e(title)}</h2><ul class="findings">{lis}</ul>')
    return f'<section class="card">{"".join(parts)}</section>' if parts else ""


def _finding(f: dict[str, Any]) -> str:
    severity = str(f.get("severity") or "failure")
    detail = f.get("detail") or {}
    extra = ""
    allow = detail.get("allowWith") if isinstance(detail, dict) else None
    if isinstance(allow, dict) and not all(str(k) in str(f.get("fix", "")) for k in allow):  # else the fix says it
        entry = json.dumps({"_meta": {"ui": {"csp": allow}}})
        extra += f"<div class=\"finding-fix\"><b>allow it with</b> <code>{e(entry)}</code> on the ui:// resource</div>"
    if isinstance(detail, dict) and detail.get("stack"):
        extra += f"<pre>{e(detail['stack'])}</pre>"
    tone = {"failure": "danger", "warning": "warning"}.get(severity, "info")
    return (f'<li class="finding" data-severity="{e(severity)}"><div class="finding-line">'
            f'<span class="badge badge-{tone}">'
            f'{e(_LABEL.get(severity, severity))}</span><span>{e(f.get("message", ""))}</span>'
            f'<span class="finding-class">[{e(f.get("class", "?"))}]</span></div>'
            f'<div class="finding-fix"><b>fix</b> {e(f.get("fix", ""))}</div>{extra}</li>')


def _shot(scheme: str, path: str) -> str:
    file = Path(path)
    try:
        data = file.read_bytes() if file.stat().st_size <= MAX_SHOT else b""
    except OSError:
        data = b""
    caption = f"{scheme} · {file.name}"
    if not data:
        return f'<figure class="shot"><figcaption>{e(caption)} (not embedded)</figcaption></figure>'
    src = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
    return (f'<figure class="shot"><img src="{src}" alt="{e(scheme)} screenshot of the view">'
            f"<figcaption>{e(caption)}</figcaption></figure>")


def _size(v: ViewReport) -> str:
    size = v.size or {}
    asked = size.get("requested")
    rendered = size.get("rendered") or {}
    frame = rendered.get("frame") or {}
    facts = [("size asked", f"{asked.get('width', '?')} × {asked.get('height', '?')} px "
              f"({size.get('changes', 0)} size-changed)" if asked else "never (no size-changed)")]
    if frame:
        facts.append(("frame given", f"{frame.get('width')} × {frame.get('height')} px"))
    if size.get("painted"):
        facts.append(("painted", f"{size['painted'].get('colours')} colour(s) in its pixels"))
    if rendered.get("clipped"):
        c = rendered["clipped"]
        facts.append(("clipped", f"{c.get('by')}: {c.get('content')} px of content, {c.get('shown')} px shown"))
    steps = [f"{label} {v.timings_ms[k]:.0f} ms" for k, label in _STEPS if k in v.timings_ms]
    if steps:
        facts.append(("timings", " · ".join(steps)))
    if v.baseline:
        states = [f"{k} {b.get('status', '?')}" + (f" ({b['changedPercent']:.2f} % of pixels)"
                                                   if "changedPercent" in b else "") for k, b in v.baseline.items()]
        facts.append(("baseline", " · ".join(states)))
    if v.app_info:
        facts.append(("app", f"{v.app_info.get('name', '?')} {v.app_info.get('version', '')}"))
    facts.append(("arguments", json.dumps(v.arguments)))
    return '<dl class="facts">' + "".join(f"<dt>{e(k)}</dt><dd>{e(val)}</dd>" for k, val in facts) + "</dl>"


# Moka's chevron icon (js/icons.js), which a fold turns when it opens.
_CHEVRON = ('<svg class="icon" viewBox="0 0 24 24" width="14" height="14" fill="none" stroke="currentColor" '
            'stroke-width="1.75" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">'
            '<path d="M9 6l6 6-6 6"/></svg>')


def _fold(title: str, body: str) -> str:
    return f'<details class="fold"><summary>{_CHEVRON}{e(title)}</summary>{body}</details>'


def _view(v: ViewReport, with_profile: bool) -> str:
    where = f' <span class="badge">{e(v.profile)}</span>' if with_profile else ""
    parts = [f'<header class="view-report-head">{_badge(v.status)}<span class="tool-name">{e(v.tool)}</span>'
             f'{where}<span class="uri">{e(v.resource_uri)}</span></header>', _size(v)]
    if v.screenshots:
        parts.append('<div class="shots">' + "".join(_shot(k, p) for k, p in v.screenshots.items()) + "</div>")
    diffs = [(f"{k} diff: baseline, now, changed pixels", b["diff"]) for k, b in v.baseline.items() if b.get("diff")]
    if diffs:
        parts.append('<div class="shots baseline-diffs">' + "".join(_shot(k, p) for k, p in diffs) + "</div>")
    first = sorted(v.findings, key=lambda f: f["message"] != v.failure)
    if first:
        parts.append('<ul class="findings">' + "".join(_finding(f) for f in first) + "</ul>")
    if v.errors:
        lines = "\n".join(f"{x.get('t', 0):>8.0f} ms  {x.get('kind', 'error')}: {x.get('message', '')}"
                          for x in v.errors)
        parts.append(_fold(f"Console errors and thrown errors ({len(v.errors)})", f"<pre>{e(lines)}</pre>"))
    if v.csp:
        parts.append(_fold("Content-Security-Policy the view ran under", f"<pre>{e(v.csp)}</pre>"))
    if v.requests:
        rows = "".join(f"<tr><td>{r.get('t', 0):.0f} ms</td><td>{e(r['method'])} → {e(r.get('answer', '?'))}</td></tr>"
                       for r in v.requests)
        parts.append(_fold(f"Requests the view made ({len(v.requests)})", f'<table class="timeline">{rows}</table>'))
    if v.timeline:
        rows = "".join(f"<tr><td>{t['t']:.0f} ms</td><td>{e(t['event'])}</td></tr>" for t in v.timeline)
        parts.append(_fold(f"Timeline ({len(v.timeline)} events)", f'<table class="timeline">{rows}</table>'))
    failed = " failed" if not v.ok else ""
    return f'<article class="card view-report{failed}" id="{_anchor(v)}">{"".join(parts)}</article>'


def html_report(report: CheckReport) -> str:
    """The report as one HTML document."""
    script = _static("report/theme.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    csp = f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{digest}'"
    verdict = "OK" if report.ok else "NOTHING TO CHECK" if report.exit_code == 5 else "FAILED"
    tone = "success" if report.ok else "info" if report.exit_code == 5 else "danger"
    names = [p["name"] for p in report.profiles] or ["moka"]
    facts = (f"engine {report.engine} · server {report.server_status}"
             + (f" · protocol {report.protocol_version}" if report.protocol_version else "")
             + f" · profile{'s' if len(names) > 1 else ''} {', '.join(names)} · exit code {report.exit_code}")
    body = [f'<header class="report-head"><span class="report-mark">M</span><div><h1 class="report-title">'
            f"moka check <code>{e(report.server)}</code></h1><div class=\"report-facts\">{e(facts)}</div></div>"
            f'<span class="grow"></span><span class="badge badge-{tone} verdict">{e(verdict)}</span>'
            '<button class="btn btn-sm" id="theme-toggle" type="button" hidden>Dark</button></header>']
    if report.nothing_to_check:
        body.append(f'<section class="card"><p>Nothing to check: {e(report.nothing_to_check)}</p></section>')
    if report.views or report.metadata:
        body.append(f'<section class="card"><h2 class="section-title">Tools × profiles</h2>{_matrix(report)}</section>')
    body.append(_metadata(report))
    if report.engine_lacks:
        body.append('<section class="card">' + "".join(f"<p class=\"muted\">note: {e(x)}</p>"
                                                       for x in report.engine_lacks) + "</section>")
    body.extend(_view(v, len(names) > 1) for v in report.views)
    stamp = datetime.datetime.now().replace(microsecond=0).isoformat(sep=" ")
    body.append(f'<footer class="report-foot">Moka {e(__version__)} · {e(stamp)}</footer>')
    return ('<!doctype html><html lang="en" data-theme="light"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{e(csp)}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>moka check {e(report.server)}: {e(verdict)}</title>"
            f"<style>{_static('css/app.css')}\n{_static('css/check-report.css')}</style></head>"
            f'<body><main class="report">{"".join(body)}</main><script>{script}</script></body></html>\n')


def write_html(report: CheckReport, path: str) -> None:
    """Write the HTML report (its folder is created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html_report(report), encoding="utf-8")
