"""Host profiles: Moka advertising itself as another host does, for `moka check --profile`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from browser_support import DEMO, Moka
from test_check import moka
from test_demo_views import open_playground, wait_log

from moka_shell.shells.check.profiles import load_profile, profile_names


def init_result(view: dict[str, Any]) -> dict[str, Any]:
    """The host's answer to the view's ui/initialize, from the check's transcript."""
    out = [t["message"] for t in view["transcript"] if t["direction"] == "out" and "result" in t["message"]
           and "hostCapabilities" in (t["message"]["result"] or {})]
    return out[0]["result"]


def test_profile_all_prints_the_matrix_and_each_profile_is_advertised(tmp_path: Path) -> None:
    """--profile all: one view per profile, a tool × profile matrix, and each profile's own advertisement."""
    servers = {"moka-demo": DEMO}
    text = moka(tmp_path, servers, "check", "moka-demo", "--tool", "open_playground", "--profile", "all",
                "--timeout", "20")
    assert text.returncode == 0, text.stdout[-3000:] + text.stderr[-2000:]
    header = next(line for line in text.stdout.splitlines() if line.startswith("tool "))
    assert header.split() == ["tool", *profile_names()]
    row = next(line for line in text.stdout.splitlines() if line.startswith("open_playground "))
    assert row.split()[1:] == ["PASS"] * len(profile_names())

    proc = moka(tmp_path, servers, "check", "moka-demo", "--tool", "open_playground", "--profile", "vscode,minimal,moka",
                "--json", "--timeout", "20")
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and [v["profile"] for v in report["views"]] == ["vscode", "minimal", "moka"]
    assert all(p["sources"] for p in report["profiles"])
    by = {v["profile"]: init_result(v) for v in report["views"]}
    moka_caps = by["moka"]["hostCapabilities"]
    for name in ("vscode", "minimal"):
        profile = load_profile(name).profile
        assert profile is not None and profile.capabilities is not None
        caps, ctx = by[name]["hostCapabilities"], by[name]["hostContext"]
        assert set(caps) == set(profile.capabilities) & set(moka_caps)  # only ever a subset of Moka's
        assert set(ctx) <= set(profile.context_fields or ctx)
        if "availableDisplayModes" in ctx:
            assert set(ctx["availableDisplayModes"]) <= set(profile.display_modes or ())
        if "containerDimensions" in ctx:
            assert ctx["containerDimensions"] == profile.container
        assert "styles" not in ctx  # neither sends style variables
        # Security is Moka's in every profile: the same CSP.
    csps = {v["csp"].split("report-uri")[0] for v in report["views"]}
    assert len(csps) == 1 and "default-src 'none'" in csps.pop()
    assert "message" not in by["vscode"]["hostCapabilities"] and "message" in moka_caps
    assert set(by["moka"]["hostContext"]["availableDisplayModes"]) > {"inline"}


def test_a_profile_without_message_refuses_the_demo_button(moka_factory: Any) -> None:
    """Under the VS Code profile (no ui/message) the playground's Send reports the refusal; nothing crashes."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    spec = load_profile("vscode")

    async def use() -> None:
        moka.app.view_host.use_profile(spec.profile)

    moka.core.submit(use()).result(5)
    view, frame = open_playground(moka)
    moka.click_in_view(frame, "#btn-message")
    logged = wait_log(moka, frame, "message", "error")
    assert "-32601" in logged and "not available in the VS Code profile" in logged
    assert frame.locator('body[data-state="ready"]').count() == 1  # the view lives on
    moka.click_in_view(frame, "#btn-reroll")  # serverTools is advertised: still works
    assert wait_log(moka, frame, "reroll", "ok")
    replies = [e["message"] for e in moka.ui_rpc(view.id) if e["direction"] == "out"
               and "result" in e["message"] and "hostCapabilities" in (e["message"]["result"] or {})]
    assert "message" not in replies[0]["result"]["hostCapabilities"]
