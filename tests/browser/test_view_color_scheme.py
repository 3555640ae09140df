"""An app that follows prefers-color-scheme agrees with Moka's theme, not the operating system's.

The official system-monitor example styles itself with @media (prefers-color-scheme: dark) and
reads matchMedia; Moka dark on a light system must give it its dark colours, and back.
"""

from __future__ import annotations

from typing import Any

from browser_support import npm_stdio

DARK_BG = "#111827"  # system-monitor's --color-bg under (prefers-color-scheme: dark)


def colour(frame: Any) -> str:
    return str(frame.evaluate("getComputedStyle(document.documentElement).getPropertyValue('--color-bg').trim()"))


def test_the_view_follows_moka_not_the_system(moka_factory: Any) -> None:
    moka = moka_factory({"sysmon": npm_stdio("mcp-system-monitor-server")})
    moka.page.emulate_media(color_scheme="light")  # the operating system is light
    moka.call("theme.set", {"mode": "dark"})
    page = moka.open("runner?server=sysmon&tool=get-system-info")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    page.click("#runner-run")
    view = moka.wait_view_ready("get-system-info")
    frame = moka.frame(view.id)
    moka.wait(lambda: colour(frame) == DARK_BG, what="the app's dark colours under Moka's dark theme")
    assert frame.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is True

    moka.call("theme.set", {"mode": "light"})  # and back, live: the app is not reloaded
    moka.wait(lambda: colour(frame) not in ("", DARK_BG), what="the app's light colours after the switch")
    assert frame.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") is False
    assert not [c for c in moka.console if "pageerror" in c], moka.console
