"""Every way a view can fail ``moka check``, named, with the fix an app author applies."""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["failure", "warning", "info"]  # info never changes a status

# Which _meta.ui.csp list opens each directive (core/views/csp.py builds them the same way).
CSP_KEY = {"connect-src": "connectDomains", "script-src": "resourceDomains", "style-src": "resourceDomains",
           "img-src": "resourceDomains", "font-src": "resourceDomains", "media-src": "resourceDomains",
           "frame-src": "frameDomains", "base-uri": "baseUriDomains"}

FIXES: dict[str, str] = {
    "no-handshake": "Make the view's script run and connect: with the ext-apps SDK call `await app.connect()`; "
                    "a bridge of your own must post ui/initialize to window.parent, then ui/notifications/initialized.",
    "wrong-mime-type": "Serve the UI resource with mimeType exactly 'text/html;profile=mcp-app' "
                       "(RESOURCE_MIME_TYPE in the SDK).",
    "resource-unreadable": "Register the ui:// resource under exactly the URI the tool's _meta.ui.resourceUri "
                           "names, and make resources/read for it succeed.",
    "bad-uri": "Point _meta.ui.resourceUri at a ui:// URI (for example ui://my-app/view.html).",
    "csp-on-tool": "Move csp and permissions from the tool's _meta.ui to the resource's _meta.ui "
                   "(the content item resources/read returns).",
    "bad-visibility": "Set _meta.ui.visibility to [\"model\"], [\"app\"] or [\"model\", \"app\"] (the default).",
    "csp-blocked": "Declare the origin in the resource's _meta.ui.csp (see the entry above), or stop loading it.",
    "needs-unsafe-eval": "Avoid eval and new Function (ext-apps 1.7.0 and later run Zod without them). If the "
                         "view really needs them, opt in per server: \"allowUnsafeEval\": true in Moka's config; "
                         "other hosts may refuse.",
    "thrown-error": "Fix or catch the error where the stack points; a view should survive every result and "
                    "every refusal.",
    "blank-view": "Render something on tool-result, where it shows: an element the frame clips to nothing "
                  "(a body of height 0 with overflow hidden) paints nothing; send ui/notifications/size-changed "
                  "(the SDK's autoResize, or app.sendSizeChanged({height})).",
    "clipped": "Send ui/notifications/size-changed with the height your content needs (the SDK's autoResize "
               "measures it), not the frame's own height: a view that reports the height it was given never "
               "grows past the frame a host starts it at.",
    "load-failed": "Make the URL serve the file (check the path and the version in it), or ship the script "
                   "inside the view's HTML; a view whose entry script does not load never starts.",
    "never-sized": "Send ui/notifications/size-changed (the SDK's autoResize does); hosts that size frames from "
                   "it clip or hide a view that never sends it.",
    "missing-host-context": "Treat every hostContext field as optional: a host may leave it out (the profile "
                            "above does).",
    "storage": "Views run in an opaque origin, where IndexedDB, caches and cookies throw SecurityError (and "
               "localStorage/sessionStorage too on hosts without Moka's storage, as --no-storage shows): guard "
               "storage in try/catch; keep state in localStorage under _meta.viewUUID, or on the server.",
    "request-refused": "Check hostCapabilities before calling and degrade gracefully when the host says no.",
    "asks-permission": "Nothing to fix: declaring _meta.ui.permissions is valid, and a host may ask the "
                       "person or say no. Make the view work without the device too: hostCapabilities."
                       "sandbox.permissions tells what it was given.",
    "harmless-metadata": "Optional: take the entry out of the list; it changes nothing in Moka.",
    "would-ask-person": "A person would be asked here; `moka check` answers no. Make sure the view handles "
                        "the denial (an isError result or a JSON-RPC error).",
    "no-result": "The tool call did not finish in time: raise --timeout, or make the tool answer faster.",
    "tool-error": "Make the tool succeed with the arguments shown, or pass --args for --tool.",
    "console-error": "The view logged an error with console.error; look at the message.",
    "never-quiet": "The view kept sending messages until --timeout; polling faster than the settle time "
                   "keeps the check from seeing it settle (raise --timeout or lower --settle).",
    "visual-change": "Open the diff image (the baseline, the view now, the changed pixels in red). If the change "
                     "is what you meant, store the new screenshots with --update-baseline and commit them; if not, "
                     "fix the view.",
    "baseline-missing": "Write the baselines with `moka check … --baseline DIR --update-baseline` (on the machine "
                        "and engine CI uses: fonts differ between systems) and commit DIR.",
    "baseline-unsteady": "Let the view come to rest: finish script-driven animation (a chart library's) within "
                         "the settle time, or turn it off when the host context says so; raise --settle otherwise.",
    "baseline-not-compared": "Use the chromium engine (or the webview engine under Qt), which takes screenshots.",
    "metadata": "Fix the tool's _meta as the message says.",
    "view-failed": "See the message; the inspector (`moka inspect`) has the whole exchange.",
}


@dataclass
class Finding:
    """One named thing that went wrong (a failure) or might (a warning)."""

    cls: str
    message: str
    severity: Severity = "failure"
    fix: str = ""
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.fix = self.fix or FIXES.get(self.cls, "")

    def to_json(self) -> dict[str, Any]:
        """The finding as the JSON report carries it."""
        return {"class": self.cls, "severity": self.severity, "message": self.message, "fix": self.fix,
                **({"detail": self.detail} if self.detail else {})}


_PATTERNS: list[tuple[str, str]] = [
    (r"text/html;profile=mcp-app", "wrong-mime-type"),
    (r"did not finish the MCP Apps handshake|no handshake", "no-handshake"),
    (r"Unknown resource|Error reading resource|could not be read|resources/read", "resource-unreadable"),
    (r"resourceUri must be a ui://", "bad-uri"),
    (r"belongs on the ui:// resource", "csp-on-tool"),
    (r"visibility", "bad-visibility"),
    (r"never received its tool result", "no-result"),
    (r"tool call did not succeed|isError", "tool-error"),
]


def classify(message: str, *, severity: Severity = "failure", default: str = "view-failed") -> Finding:
    """A failure or metadata problem, from Moka's own message."""
    for pattern, cls in _PATTERNS:
        if re.search(pattern, message):
            return Finding(cls, message, severity)
    return Finding(default, message, severity)


def origin_of(url: str) -> str | None:
    """``https://api.example.com`` from a blocked URL (None for inline, eval, data: and the like)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme in ("http", "https", "ws", "wss") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


def csp_finding(directive: str, blocked: str, *, severity: Severity = "failure") -> Finding:
    """A CSP block, with the _meta.ui.csp entry that would allow it."""
    directive = directive.split(" ")[0]
    base = directive.replace("-elem", "").replace("-attr", "")
    key = CSP_KEY.get(base)
    origin = origin_of(blocked)
    if key and origin:
        entry = f'"_meta": {{"ui": {{"csp": {{"{key}": ["{origin}"]}}}}}} on the ui:// resource'
        fix = f"Declare it: {entry}."
    elif blocked in ("inline",):
        fix = "Inline event handlers and javascript: URLs are blocked; attach listeners from a script instead."
    else:
        fix = (f"{directive} cannot be opened for {blocked or 'this source'} through _meta.ui.csp in Moka "
               "(see docs/security.md); load it another way.")
    return Finding("csp-blocked", f"the CSP blocked {blocked or '?'} ({directive})", severity, fix,
                   {"directive": directive, "blockedURI": blocked, **({"allowWith": {key: [origin]}}
                                                                      if key and origin else {})})


_STORAGE = re.compile(r"localStorage|sessionStorage|indexedDB|IndexedDB|document\.cookie|'caches'|"
                      r"allow-same-origin", re.I)
_READ_UNDEFINED = re.compile(r"reading '([^']+)'|undefined is not an object \(evaluating '([^']+)'\)"
                             r"|(\w+) is undefined")


def error_finding(data: dict[str, Any], *, omitted: list[str], eval_blocked: bool) -> Finding:
    """An uncaught error, unhandled rejection or console.error line, named by what it is."""
    kind = str(data.get("kind") or "error")
    message = str(data.get("message") or "error")
    stack = str(data.get("stack") or "")
    detail: dict[str, Any] = {"kind": kind, "message": message}
    if stack:
        detail["stack"] = stack
    if data.get("source"):
        detail["source"] = f"{data.get('source')}:{data.get('line', 0)}"
    if _STORAGE.search(message) and ("SecurityError" in message or "denied" in message.lower()
                                     or "sandbox" in message.lower()):
        return Finding("storage", f"the view used storage, which its sandbox forbids: {message}", "failure",
                       detail=detail)
    if eval_blocked and re.search(r"unsafe-eval|EvalError|Function\(|eval", message):
        return Finding("needs-unsafe-eval", f"the view needs eval: {message}", detail=detail)
    read = _READ_UNDEFINED.search(message)
    if read and omitted:
        field_read = next(g for g in read.groups() if g)
        return Finding("missing-host-context", f"the view read a hostContext field this host does not send "
                       f"(it left out {', '.join(omitted)}): {message}", detail={**detail, "read": field_read,
                                                                               "omitted": omitted})
    if kind == "console":
        return Finding("console-error", f"console.error: {message}", "warning", detail=detail)
    what = "an unhandled promise rejection" if kind == "unhandledrejection" else "an uncaught error"
    return Finding("thrown-error", f"the view threw {what}: {message}", detail=detail)
