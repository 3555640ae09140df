"""The Content-Security-Policy for a view, built from its resource's ``_meta.ui.csp``.

The policy is restrictive by default and never admits a domain the server did not
declare. docs/security.md explains every directive and why it is there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# scheme://host[:port][/path], host may start with "*." ; nothing that could inject a
# directive (";", ",", quotes, whitespace) or a keyword ('unsafe-inline', 'self', *).
_SOURCE = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*"
                     r"(?::(?:\d{1,5}|\*))?(?:/[A-Za-z0-9._~%/-]*)?$")
_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# _meta.ui.permissions names, and the iframe `allow` feature each one opens.
PERMISSIONS = {"camera": "camera", "microphone": "microphone", "geolocation": "geolocation",
               "clipboardWrite": "clipboard-write"}
# Sources a list may hold that are no origin but ask for nothing the policy below lacks or must
# refuse: resources from data: and blob: are allowed where they are safe (scripts, images, media,
# fonts), and the sandbox's 'self' serves nothing. (connect-src gets neither: those stay refused.)
_HARMLESS = {"resourceDomains": {"blob:", "data:", "'self'", "self"}, "connectDomains": {"'self'", "self"},
             "frameDomains": {"'self'", "self"}, "baseUriDomains": {"'self'", "self"}}


@dataclass
class ViewPolicy:
    """The header value, the iframe ``allow`` value, and what was refused."""

    header: str
    allow: str
    approved: dict[str, list[str]]
    permissions: dict[str, dict[str, Any]]
    rejected: list[str] = field(default_factory=list)  # declarations that are wrong or refused
    ignored: list[str] = field(default_factory=list)  # entries that are no origin, but harmless
    denied: list[str] = field(default_factory=list)  # what the person did not grant (permissions.py)


def sanitize_sources(values: Any, key: str, rejected: list[str], ignored: list[str] | None = None) -> list[str]:
    """Keep only well-formed origin sources; record the others (harmless ones in ``ignored``)."""
    if values is None:
        return []
    if not isinstance(values, list):
        rejected.append(f"csp.{key} must be a list of origins, got {type(values).__name__}")
        return []
    out: list[str] = []
    for value in values:
        if isinstance(value, str) and _SOURCE.match(value.strip()):
            out.append(value.strip().rstrip("/"))
        elif ignored is not None and isinstance(value, str) and value.strip().lower() in _HARMLESS.get(key, ()):
            ignored.append(f"csp.{key}: {value!r} is not an origin and needs no declaring (the view's CSP "
                           "already allows scripts, images, media and fonts from data: and blob:); ignored")
        else:
            rejected.append(f"csp.{key}: {value!r} is not an origin like https://api.example.com; ignored")
    return list(dict.fromkeys(out))


def build_policy(ui_meta: dict[str, Any] | None, *, report_uri: str | None = None,
                 allow_eval: bool = False) -> ViewPolicy:
    """Build the view's CSP header and iframe ``allow`` attribute."""
    ui_meta = ui_meta or {}
    rejected: list[str] = []
    ignored: list[str] = []
    raw_csp = ui_meta.get("csp")
    csp: dict[str, Any] = raw_csp if isinstance(raw_csp, dict) else {}
    if ui_meta.get("csp") is not None and not isinstance(ui_meta.get("csp"), dict):
        rejected.append("_meta.ui.csp must be an object; the restrictive default applies")
    approved = {k: sanitize_sources(csp.get(k), k, rejected, ignored) for k in _CSP_KEYS}
    res = " ".join(approved["resourceDomains"])
    conn = " ".join(approved["connectDomains"])

    def join(*parts: str) -> str:
        return " ".join(p for p in parts if p)

    self_inline = "'self' 'unsafe-inline'"
    none = "'none'"
    directives = [
        "default-src 'none'",
        # Inline script is how single-file apps ship; eval only when the person allowed it for the server.
        # data: and blob: scripts are code the document already holds (PDF.js loads its worker module
        # from a data: URL): no more than 'unsafe-inline' allows, and no network path.
        "script-src " + join(self_inline, "data: blob:", "'unsafe-eval'" if allow_eval else "", res),
        "style-src " + join(self_inline, res),
        "img-src " + join("'self' data: blob:", res),
        "font-src " + join("'self' data:", res),
        "media-src " + join("'self' data: blob:", res),
        # No 'self': the sandbox origin has nothing for a view to talk to.
        "connect-src " + (conn or none),
        "worker-src 'self' blob: data:",
        "frame-src " + (" ".join(approved["frameDomains"]) or none),
        "object-src 'none'",
        "base-uri " + (" ".join(approved["baseUriDomains"]) or none),
        "form-action 'none'",
    ]
    if report_uri:
        directives.append(f"report-uri {report_uri}")
    raw_perms = ui_meta.get("permissions")
    perms_in: dict[str, Any] = raw_perms if isinstance(raw_perms, dict) else {}
    granted: dict[str, dict[str, Any]] = {k: {} for k in perms_in if k in PERMISSIONS}
    allow = "; ".join(PERMISSIONS[k] for k in granted)
    return ViewPolicy("; ".join(directives), allow, {k: v for k, v in approved.items() if v}, granted, rejected,
                      ignored)
