"""The sandbox proxy page, served with its script inline and allowed by hash.

Inline, so a mounting view costs one request fewer (docs/performance.md §1). The script stays a
file of its own in `static/sandbox/`, where it is written and read; the page is put together
once per run. The page is the same for every view (their parameters go in the URL's fragment),
so it is served at a URL named by its content and cached: a mounting view costs no request for
it at all after the first (docs/performance.md §8).
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path

SCRIPT_TAG = '<script src="proxy.js"></script>'
# default-src 'none' and a script hash: the page runs exactly this script and loads nothing but
# same-origin view documents into its frame.
CSP = "default-src 'none'; script-src '{hash}'; style-src 'unsafe-inline'; frame-src 'self'; base-uri 'none'"


@dataclass(frozen=True)
class ProxyPage:
    """The page's HTML and the Content-Security-Policy that admits its one inline script."""

    html: str
    csp: str
    version: str  # names this exact page (and its policy) in its URL, so a cached copy is never stale

    @property
    def path(self) -> str:
        """The page's content-named path on the sandbox origin."""
        return f"/proxy.html?v={self.version}"


def build_proxy_page(sandbox_dir: Path, *, frame_ancestors: str = "") -> ProxyPage:
    """Inline ``proxy.js`` into ``proxy.html`` and allow it by its SHA-256."""
    html = (sandbox_dir / "proxy.html").read_text(encoding="utf-8")
    script = (sandbox_dir / "proxy.js").read_text(encoding="utf-8")
    if SCRIPT_TAG not in html or "</script" in script.lower():
        raise ValueError(f"{sandbox_dir}: proxy.html must load proxy.js with {SCRIPT_TAG!r}, "
                         "and proxy.js must not contain a closing script tag")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    page, csp = html.replace(SCRIPT_TAG, f"<script>{script}</script>"), CSP.format(hash=f"sha256-{digest}")
    if frame_ancestors:
        # Part of the policy, so part of the name: a cached copy from a run on other host ports
        # would refuse to be framed by this run's page.
        csp += f"; frame-ancestors {frame_ancestors}"
    version = hashlib.sha256(f"{csp}\n{page}".encode()).hexdigest()[:16]
    return ProxyPage(page, csp, version)
