"""Host profiles as data, and the override point that applies them (core/views/profile.py)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from moka_shell._pyinstaller import data_files
from moka_shell.cli.main import main
from moka_shell.core.themes import STANDARD_VARIABLES
from moka_shell.core.views.profile import CAPABILITY_OF_METHOD, HostProfile
from moka_shell.errors import UsageError
from moka_shell.shells.check.findings import FIXES, classify, csp_finding, error_finding
from moka_shell.shells.check.profiles import load_profile, profile_names, resolve

# McpUiHostCapabilities and McpUiHostContext fields (ext-apps 2.0.4 spec.types.d.ts; mcp-apps-host.md §1I, §1J).
CAPABILITIES = {"experimental", "openLinks", "downloadFile", "serverTools", "serverResources", "logging", "sandbox",
                "updateModelContext", "message", "sampling"}
CONTEXT = {"toolInfo", "theme", "styles", "displayMode", "availableDisplayModes", "containerDimensions", "locale",
           "timeZone", "userAgent", "platform", "deviceCapabilities", "safeAreaInsets"}
MOKA_CAPS = {"openLinks": {}, "serverTools": {"listChanged": True}, "serverResources": {"listChanged": True},
             "logging": {}, "downloadFile": {}, "sandbox": {"csp": {"connectDomains": ["https://a.example"]}},
             "message": {"text": {}, "image": {}, "resource": {}},
             "updateModelContext": {"text": {}, "image": {}}}


def test_every_host_the_issue_names_ships_as_a_data_file_with_sources() -> None:
    names = profile_names()
    assert names[0] == "moka"
    assert {"moka", "claude", "chatgpt", "vscode", "cursor", "goose", "m365-copilot", "minimal"} <= set(names)
    folder = resources.files("moka_shell") / "check_profiles"
    for name in names:
        raw = json.loads((folder / f"{name}.json").read_text(encoding="utf-8"))
        assert raw["name"] == name and raw["sources"] and raw["summary"]
        spec = load_profile(name)
        p = spec.profile
        if name == "moka":
            assert p is None  # Moka as it is: nothing applied
            continue
        assert p is not None and p.capabilities is not None
        assert set(p.capabilities) <= CAPABILITIES
        assert p.context_fields is None or set(p.context_fields) <= CONTEXT
        assert p.style_variables is None or set(p.style_variables) <= set(STANDARD_VARIABLES)
        assert p.display_modes is None or set(p.display_modes) <= {"inline", "fullscreen", "pip"}
        assert p.platform in (None, "web", "desktop", "mobile")


def test_profiles_are_package_data_for_wheels_and_bundles() -> None:
    assert {f"check_profiles/{n}.json" for n in profile_names()} <= set(data_files())


def test_a_profile_only_takes_away() -> None:
    """It never advertises what Moka lacks, keeps Moka's modalities within the host's, and refuses the rest."""
    p = HostProfile(name="t", title="Test", capabilities={"message": {"text": {}}, "sampling": {}, "sandbox": {}})
    caps = p.advertise(MOKA_CAPS)
    assert caps == {"message": {"text": {}}, "sandbox": MOKA_CAPS["sandbox"]}  # no sampling: Moka had none
    assert p.refusal("ui/message") is None
    for method, cap in CAPABILITY_OF_METHOD.items():
        if cap not in p.capabilities:
            assert p.refusal(method) and f"hostCapabilities.{cap}" in str(p.refusal(method))
    assert p.refusal("ping") is None and p.refusal("ui/initialize") is None
    assert HostProfile(name="moka", title="Moka").advertise(MOKA_CAPS) is MOKA_CAPS


def test_a_profile_trims_the_host_context() -> None:
    ctx = {"theme": "dark", "displayMode": "inline", "availableDisplayModes": ["fullscreen", "inline", "pip"],
           "containerDimensions": {"maxHeight": 1200, "maxWidth": 700}, "platform": "web",
           "styles": {"variables": {"--color-text-primary": "#000", "--font-sans": "x"}}, "locale": "en-US"}
    p = HostProfile(name="t", title="T", display_modes=("inline", "fullscreen"), container={"maxHeight": 400},
                    platform="desktop", context_fields=("theme", "displayMode", "availableDisplayModes",
                                                        "containerDimensions", "platform", "styles"),
                    style_variables=("--font-sans",))
    out = p.context(ctx)
    assert out == {"theme": "dark", "displayMode": "inline", "availableDisplayModes": ["fullscreen", "inline"],
                   "containerDimensions": {"maxHeight": 400}, "platform": "desktop",
                   "styles": {"variables": {"--font-sans": "x"}}}
    fixed = p.context({**ctx, "containerDimensions": {"height": 700, "width": 900}})
    assert fixed["containerDimensions"] == {"height": 700, "width": 900}  # fullscreen keeps Moka's box
    none = HostProfile(name="t", title="T", style_variables=()).styles({"theme": "x", "styles": {"variables": {}}})
    assert none == {"theme": "x"}  # no variables: no styles key (an empty object would be noise)


def test_resolve_takes_all_lists_and_rejects_unknown_names() -> None:
    assert [s.name for s in resolve(None)] == ["moka"]
    assert [s.name for s in resolve(["all"])] == profile_names()
    assert [s.name for s in resolve(["vscode,claude", "vscode"])] == ["vscode", "claude"]
    with pytest.raises(UsageError) as err:
        resolve(["nope"])
    assert err.value.exit_code == 2 and "claude" in str(err.value)


def test_failure_classes_have_fixes_and_csp_names_the_entry() -> None:
    assert all(FIXES.values())
    f = csp_finding("img-src", "https://cdn.example.com/a.png")
    assert f.cls == "csp-blocked" and f.detail["allowWith"] == {"resourceDomains": ["https://cdn.example.com"]}
    assert '"resourceDomains": ["https://cdn.example.com"]' in f.fix
    assert "allowWith" not in csp_finding("script-src-elem", "inline").detail
    assert classify("the resource must be exactly 'text/html;profile=mcp-app', got 'text/html'").cls == "wrong-mime-type"
    assert classify("Unknown resource: ui://x/y").cls == "resource-unreadable"
    assert classify("_meta.ui.visibility is empty: neither the model nor any view can call this tool").cls == \
        "bad-visibility"
    assert classify("the view did not finish the MCP Apps handshake within 6 s (no ui/initialize arrived)").cls == \
        "no-handshake"


def test_errors_are_named_by_what_they_are() -> None:
    sec = {"kind": "error", "message": "Uncaught SecurityError: Failed to read the 'localStorage' property from "
           "'Window': The document is sandboxed and lacks the 'allow-same-origin' flag."}
    assert error_finding(sec, omitted=[], eval_blocked=False).cls == "storage"
    read = {"kind": "unhandledrejection", "message": "Cannot read properties of undefined (reading 'maxHeight')"}
    assert error_finding(read, omitted=["containerDimensions"], eval_blocked=False).cls == "missing-host-context"
    assert error_finding(read, omitted=[], eval_blocked=False).cls == "thrown-error"  # Moka sent everything
    ev = {"kind": "error", "message": "EvalError: Refused to evaluate a string as JavaScript because 'unsafe-eval'"}
    assert error_finding(ev, omitted=[], eval_blocked=True).cls == "needs-unsafe-eval"
    assert error_finding({"kind": "console", "message": "x"}, omitted=[], eval_blocked=False).severity == "warning"


def test_bad_check_options_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 with a message, before any server or engine starts."""
    base = ["--config", str(tmp_path / "c.json"), "--data-dir", str(tmp_path / "d"), "check", "srv"]
    assert main([*base, "--profile", "nope"]) == 2
    assert "no host profile named 'nope'" in capsys.readouterr().err
    assert main([*base, "--settle", "-1"]) == 2
    assert "--settle" in capsys.readouterr().err
