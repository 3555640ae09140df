"""A view that fails shows its failure card (or its problem strip), never "Loading view…" forever.

Each failure kind that `moka check` reports, run from the Tool runner against the deliberately
broken server (tests/servers/broken_apps_server.py), as an app author would meet it.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from browser_support import Moka
from support import SERVERS

BROKEN = {"command": sys.executable, "args": [str(SERVERS / "broken_apps_server.py")]}


def run_view(moka: Moka, tool: str) -> Any:
    """Run `tool` from the runner screen and return the locator of its view card."""
    res = moka.call("tools.run", {"server": "broken", "tool": tool, "arguments": {}})
    view_id = res["viewId"]
    card = moka.page.locator(f'.view-card[data-view-id="{view_id}"]')
    card.wait_for(timeout=5000)
    return card


@pytest.fixture
def broken(moka_factory: Any) -> Moka:
    moka: Moka = moka_factory({"broken": BROKEN})
    moka.app.view_host.handshake_timeout = 2  # the 20 s default only makes the test slow
    moka.open("runner")
    return moka


@pytest.mark.parametrize(("tool", "reason"), [
    ("wrong_mime", "exactly 'text/html;profile=mcp-app'"),
    ("missing_resource", "Unknown resource"),
    ("read_error", "Error reading resource ui://broken-apps/read-error"),
])
def test_a_view_that_fails_before_it_mounts_shows_its_card(broken: Moka, tool: str, reason: str) -> None:
    """The core fails these in the same tick it announces them; the card must keep the failure."""
    card = run_view(broken, tool)
    error = card.locator(".view-error")
    error.wait_for(timeout=2000)
    assert card.get_attribute("data-state") == "failed"
    assert reason in error.inner_text()
    assert card.locator(".view-loading").count() == 0 and card.locator("iframe").count() == 0
    # Still failed a moment later: nothing after the failure put the loading frame back.
    broken.page.wait_for_timeout(300)
    assert card.get_attribute("data-state") == "failed" and card.locator(".view-error").count() == 1


def test_a_view_that_never_handshakes_shows_its_card(broken: Moka) -> None:
    """No ui/initialize within the deadline: the failure card names the missing handshake."""
    card = run_view(broken, "no_handshake")
    card.locator(".view-error").wait_for(timeout=10000)
    assert "no ui/initialize arrived" in card.locator(".view-error").inner_text()


@pytest.mark.parametrize(("tool", "reason"), [
    ("throws", "deliberate uncaught error"),
    ("csp_violation", "connect-src"),
])
def test_a_live_view_with_a_problem_shows_a_strip(broken: Moka, tool: str, reason: str) -> None:
    """A view that runs but throws or hits its CSP keeps its frame and gets a problem strip."""
    card = run_view(broken, tool)
    strip = card.locator(".view-problem")
    strip.wait_for(timeout=10000)
    assert reason in strip.inner_text()
    assert card.locator("iframe").count() == 1 and card.locator(".view-error").count() == 0


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_failure_card_screenshot(broken: Moka, scheme: str) -> None:
    """A picture of the wrong-mime failure card, light and dark, for a person to look at."""
    broken.page.emulate_media(color_scheme=scheme)  # Moka's default theme follows the system
    card = run_view(broken, "wrong_mime")
    card.locator(".view-error").wait_for(timeout=2000)
    card.screenshot(path=f"/tmp/shots/view-failure-{scheme}.png")
