"""The CSP audit line (spec: hosts SHOULD log CSP configurations): the policy a view runs under is
written to that view's own console as it loads, as well as to the Inspector (issue 29.2).

The same document is what every engine loads (browser mode, the desktop, `moka check`), so the
served HTML is checked too: the line is in it before any of the app's scripts.
"""

from __future__ import annotations

import sys
import urllib.request

from browser_support import Moka
from support import SERVERS

TRUTH = {"command": sys.executable, "args": [str(SERVERS / "truth_server.py")]}


def test_a_views_console_says_the_csp_it_runs_under(moka_factory) -> None:  # type: ignore[no-untyped-def]
    moka: Moka = moka_factory({"truth": TRUTH})
    page = moka.open("runner")
    lines: list[tuple[str, str, str]] = []
    page.on("console", lambda m: lines.append((m.type, m.text, m.location.get("url", ""))))
    view_id = moka.call("tools.run", {"server": "truth", "tool": "blob_csp", "arguments": {}})["viewId"]
    view = moka.wait_view_ready("blob_csp")
    assert view.id == view_id
    header = view.policy.header
    want = f"[Moka] This view (blob_csp from truth) runs under the Content-Security-Policy: {header}"
    found = moka.wait(lambda: [ln for ln in lines if ln[1] == want], 20, "the CSP audit line")
    kind, _text, url = found[0]
    assert kind == "info" and f"/view/{view_id}" in url  # the view's own console, not Moka's page
    assert any(t == "info" and "Left out of the policy (harmless)" in x and "blob:" in x and f"/view/{view_id}" in u
               for t, x, u in lines), lines
    # The Inspector has it as well.
    created = [e for e in moka.app.inspector.query(limit=1000)
               if e.get("view") == view_id and e.get("method") == "view/created"]
    assert created and created[0]["message"]["csp"] == header
    # The served document, as each engine gets it: the audit line first, before the app's own scripts.
    with urllib.request.urlopen(f"{moka.app.view_host.endpoints.sandbox_origin}/view/{view_id}?k={view.key}") as r:
        html = r.read().decode()
        # The web server adds only who may frame it (its proxy, in Moka's page).
        assert r.headers["Content-Security-Policy"].startswith(header + "; frame-ancestors ")
    assert html.index("[Moka] This view (blob_csp from truth)") < html.index("window.onResult")
