"""Why a file a view loads failed: the status or network error, for ``moka check``'s report (C4).

The view's prelude names the element and its URL (core/views/document.py); the engine may have
seen the request fail. Chromium drops an error page answering a script request before anyone sees
its status (ERR_BLOCKED_BY_ORB), and the webview engine sees no requests at all, so a URL with no
HTTP status yet is asked for once more from here. Only URLs the view's CSP let it load get here.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

MAX_ASKED = 5  # URLs asked again per view
TIMEOUT = 5.0  # seconds for each


def failed_urls(events: list[dict[str, Any]]) -> list[str]:
    """The http(s) URLs the view's elements failed to load, in order, once each; none the CSP blocked."""
    urls: list[str] = []
    blocked: set[str] = set()
    for e in events:
        msg = e.get("message")
        params = msg.get("params") if isinstance(msg, dict) else None
        data = params.get("data") if isinstance(params, dict) and params.get("logger") == "moka.view" else None
        if not isinstance(data, dict):
            continue
        if data.get("kind") == "csp":
            blocked.add(str(data.get("blockedURI") or ""))
        url = str(data.get("url") or "") if data.get("kind") == "load" else ""
        if url.startswith(("http://", "https://")) and url not in urls:
            urls.append(url)
    return [u for u in urls if u not in blocked]


def reasons(urls: list[str], network: dict[str, str]) -> dict[str, str]:
    """URL → why it did not load: the engine's HTTP status, else what asking again answers."""
    out: dict[str, str] = {}
    for url in urls:
        seen = network.get(url, "")
        if seen.startswith("HTTP ") or len(out) >= MAX_ASKED:
            out[url] = seen or "the browser gave no reason: open the URL to see"
        else:
            out[url] = ask(url, seen)
    return out


def ask(url: str, seen: str) -> str:
    """GET the URL once: its status, or why it cannot be reached (``seen``: what the engine said)."""
    engine = f"; the browser said {seen}" if seen else ""
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "moka-check"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 (http(s) only, above)
            kind = answer.headers.get("Content-Type") or "no Content-Type"
            return f"HTTP {answer.status} with {kind} when asked again{engine}"
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code} {exc.reason}".rstrip() + engine
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"unreachable: {reason}{engine}"
