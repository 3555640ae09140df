"""Moka's page works where the engine gives it no Web Storage (WebKitGTK's private mode throws on access)."""

from __future__ import annotations

from typing import Any

DEMO = {"command": "moka", "args": ["demo-server"]}
NO_STORAGE = """
for (const name of ["localStorage", "sessionStorage"]) {
  Object.defineProperty(window, name, { configurable: true,
    get() { throw new DOMException("The operation is insecure.", "SecurityError"); } });
}
"""


def test_the_page_and_a_view_work_without_web_storage(moka_factory: Any) -> None:
    moka = moka_factory({"moka-demo": DEMO})
    moka.context.add_init_script(NO_STORAGE)  # Moka's own page only: views get Moka's storage
    page = moka.open("inspector")
    page.click("label:has(#inspector-mode-events)")  # the remembered choice cannot be saved; no throw
    page.goto(moka.url + "#runner?server=moka-demo&tool=roll_dice")
    page.wait_for_selector("#runner-run:not([disabled])", timeout=15000)
    page.click("#runner-run")
    moka.wait_view_ready("roll_dice")
    assert not [c for c in moka.console if "pageerror" in c], moka.console
