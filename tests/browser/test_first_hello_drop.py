"""The page's first hello lost to a dropped socket: the page boots once the socket is back.

Before, a socket that dropped while the page's first ``app.hello`` was in flight left the page on
"Moka's core did not answer" until the person reloaded it, even after the socket came back: the
boot gave up on the first error and never said hello again.
"""

from __future__ import annotations

from typing import Any

from browser_support import DEMO, Moka


def test_a_first_hello_lost_to_a_drop_is_said_again_after_it(moka_factory: Any) -> None:
    moka: Moka = moka_factory({"moka-demo": DEMO})
    hellos: list[str] = []
    original = moka.web.bridge.methods["app.hello"]

    async def hello_dropping_the_first(params: dict[str, Any]) -> Any:
        hellos.append("hello")
        if len(hellos) == 1:
            # The socket ends while this hello is in flight: its answer goes to no socket.
            for ws in list(moka.web.sockets):
                await ws.close(code=1012)
        return await original(params)

    moka.core.submit(_set(moka, "app.hello", hello_dropping_the_first)).result(10)
    page = moka.page
    page.goto(moka.url)
    moka.wait(lambda: len(hellos) >= 2, 30, "the page to say hello again once its socket is back")
    page.wait_for_selector('#conn[data-status="online"]', timeout=30000)
    # The page booted: Chat is shown with its composer, not the "did not answer" screen.
    page.locator("#composer").wait_for(timeout=30000)
    assert page.get_by_text("Moka's core did not answer").count() == 0
    # The rest of the boot ran too: routing works and the other screens render the core's state.
    page.evaluate("location.hash = '#servers'")
    page.locator("#screen-servers").get_by_text("moka-demo").first.wait_for(timeout=30000)
    assert page.locator("#screen-chat").is_hidden()


async def _set(moka: Moka, method: str, handler: Any) -> None:
    moka.web.bridge.methods[method] = handler
