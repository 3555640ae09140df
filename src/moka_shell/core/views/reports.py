"""CSP reports: only for a live view, only with that view's report key, and not without end (S8).

The report URL in a view's policy carries a key derived from the view id and a secret of this
process, so a page that is not the view's own document cannot file reports for it. The key stays
the same when the view is parked and mounted again (its policy header is built once).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from moka_shell.core.views.throttle import Throttle

REPORT_BURST = 50  # reports a view may file at once (one blocked request makes one report)
REPORT_RATE = 5.0  # ... and then per second
_SECRET = secrets.token_bytes(32)


def report_key(view_id: str) -> str:
    """The view's report key."""
    return hmac.new(_SECRET, view_id.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def report_uri(view_id: str) -> str:
    """The ``report-uri`` for a view's policy."""
    return f"/csp-report/{view_id}?k={report_key(view_id)}"


class CspReports:
    """Decides which reports are kept: the right key, and within the view's rate."""

    def __init__(self) -> None:
        self.throttle = Throttle({"csp-report": (REPORT_BURST, REPORT_RATE)})

    def key_ok(self, view_id: str, key: str) -> bool:
        """True if ``key`` is this view's report key (compared in constant time)."""
        return bool(key) and secrets.compare_digest(report_key(view_id), key)

    def admit(self, view_id: str) -> bool:
        """True if one more report of this view may be kept now."""
        return self.throttle.admit(view_id, "csp-report")
