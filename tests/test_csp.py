"""The view CSP: restrictive by default, declared domains only, sanitised entries, permissions."""

from __future__ import annotations

import pytest

from moka_shell.core.views.csp import build_policy


def directives(header: str) -> dict[str, list[str]]:
    out = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            out[words[0]] = words[1:]
    return out


def test_default_policy_is_restrictive() -> None:
    """No csp metadata: no network at all, no frames, no plugins, no eval."""
    d = directives(build_policy(None).header)
    assert d["default-src"] == ["'none'"]
    assert d["connect-src"] == ["'none'"]
    assert d["frame-src"] == ["'none'"] and d["object-src"] == ["'none'"] and d["base-uri"] == ["'none'"]
    assert "'unsafe-eval'" not in d["script-src"]
    assert not any(src.startswith("http") for srcs in d.values() for src in srcs)


def test_declared_domains_land_in_their_directives() -> None:
    """connectDomains → connect-src; resourceDomains → script/style/img/font/media; frame and base-uri."""
    meta = {"csp": {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example"],
                    "frameDomains": ["https://www.youtube.com"], "baseUriDomains": ["https://base.example"]}}
    d = directives(build_policy(meta).header)
    assert d["connect-src"] == ["https://api.example.com"]
    for key in ("script-src", "style-src", "img-src", "font-src", "media-src"):
        assert "https://*.cdn.example" in d[key]
    assert "https://*.cdn.example" not in d["connect-src"]
    assert d["frame-src"] == ["https://www.youtube.com"] and d["base-uri"] == ["https://base.example"]


@pytest.mark.parametrize("bad", [
    "https://ok.example; script-src *", "*", "'unsafe-inline'", "https://a.example 'unsafe-eval'", "data:",
    "javascript:alert(1)", "https://a.example\r\nX: y", 'https://"quoted".example', "http:", 42, None,
])
def test_injection_attempts_are_dropped(bad: object) -> None:
    """An entry that could inject a keyword or a directive never reaches the header."""
    policy = build_policy({"csp": {"connectDomains": [bad, "https://good.example"]}})
    d = directives(policy.header)
    assert d["connect-src"] == ["https://good.example"]
    assert policy.rejected and "ignored" in policy.rejected[0]
    assert "*" not in policy.header.replace("https://*.", "")


def test_permissions_map_to_allow_attribute() -> None:
    """camera/microphone/geolocation/clipboardWrite map to the iframe allow attribute; others are ignored."""
    policy = build_policy({"permissions": {"clipboardWrite": {}, "microphone": {}, "usb": {}}})
    assert policy.allow == "clipboard-write; microphone"
    assert set(policy.permissions) == {"clipboardWrite", "microphone"}


def test_eval_only_when_allowed_for_the_server() -> None:
    """'unsafe-eval' is added only when the person allowed it in the server's config."""
    assert "'unsafe-eval'" in directives(build_policy(None, allow_eval=True).header)["script-src"]


def test_blob_workers_and_media_are_allowed_but_no_remote() -> None:
    """Scheme sources apps need (blob: workers and media, data: images) are present; they reach no network."""
    d = directives(build_policy(None).header)
    assert "blob:" in d["worker-src"] and "blob:" in d["media-src"] and "data:" in d["img-src"]


def test_harmless_entries_are_ignored_not_rejected() -> None:
    """`blob:` and `data:` among resourceDomains ask for nothing the policy lacks: ignored, not a problem (C2)."""
    policy = build_policy({"csp": {"resourceDomains": ["blob:", "data:", "https://cdn.example"]}})
    assert policy.rejected == [] and len(policy.ignored) == 2 and "blob:" in policy.ignored[0]
    assert "https://cdn.example" in directives(policy.header)["script-src"]
    refused = build_policy({"csp": {"connectDomains": ["blob:"]}})  # connect-src never gets blob:
    assert refused.ignored == [] and refused.rejected
