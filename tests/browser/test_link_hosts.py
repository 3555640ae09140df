"""The host Moka shows for a link is the host Chromium opens (finding G2, row 23).

``core/links.py`` reads addresses with a WHATWG parser. Here Chromium itself is the judge: for a
corpus of tricky addresses, every one Moka accepts has the host Chromium's ``new URL(url).host``
gives, and the normalised address Moka opens goes to that host too. Then the review's attack end to
end: a server's URL elicitation and a view's ``ui/open-link`` with ``http://127.0.0.1:PORT\\@accounts.google.com/login``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from browser_support import DEMO, Moka
from moka_shell.core.links import web_link
from moka_shell.errors import UnsafeLinkError
from support import SERVERS
from test_demo_views import open_playground
from test_elicitation_ui import shoot

CORPUS = [
    # userinfo and backslashes (the review's attack and its relatives)
    "http://evil\\@accounts.google.com/login", "https://evil.example\\@accounts.google.com/login",
    "http://127.0.0.1:9\\@accounts.google.com/", "https://accounts.google.com@evil.example/",
    "https://a:b@evil.example/", "https://@evil.example/", "https://:@evil.example",
    "https://a.example:443@evil.example/", "https://accounts.google.com%2F@evil.example/",
    "https://accounts.google.com%40evil.example/", "http:\\\\evil.example\\", "http:/\\evil.example/",
    "https://a.example/\\..\\x",
    # slashes, case, dots
    "http:////evil.example", "http:evil.example", "https:evil.example", "https:///evil.example",
    "HTTP://EVIL.EXAMPLE", "https://evil.example./", "https://sub.Example.COM:8080/a?b#c",
    "https://a.example#@evil.example", "https://a.example?@evil.example/", "https://a.example/path/../../x",
    "https://a.example/%2e%2e/x", "https://a..b.example", "https://.evil.example", "https://-evil.example",
    # tabs, newlines, invisible and bidi characters
    "http://acc\tounts.google.com", "http://accounts.google.com\n.evil.example/", " https://evil.example",
    "https://evil.example\u202e/moc.elgoog", "https://acc\u200bounts.google.com", "https://ex ample.com",
    # international names, look-alike scripts, full-width and ideographic dots
    "https://\u0430ccounts.google.com/", "https://\u0262oogle.com", "https://xn--80ak6aa92e.com/",
    "https://www.\u0430\u0440\u0440\u04cf\u0435.com/", "https://g\u00f6ogle.de", "https://fa\u00df.de",
    "https://\uff25\uff36\uff29\uff2c\uff0e\uff43\uff4f\uff4d/", "https://evil\u3002com", "https://evil\uff0ecom",
    "https://evil\uff61com", "https://evil.example\u3002accounts.google.com/", "https://xn--/",
    "https://xn--a.example", "https://xn--ls8h.la/", "https://\U0001f4a9.la",
    # percent-encoded hosts, numbers read as IPv4, IPv6
    "http://%65vil.example/", "http://evil%2eexample/", "https://evil.example%00.accounts.google.com/",
    "http://0x7f.1/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/", "https://0x01020304/",
    "http://1.2.3.08/", "http://foo.1/", "http://foo.0x1/", "http://1.2.3.4.5/", "http://256.1.1.1/",
    "http://[::1]:8080/", "http://[0:0::1]/", "http://[::ffff:127.0.0.1]/", "http://[::127.0.0.1]/",
    "http://[fe80::1%25eth0]/", "http://[1:2:3:4:5:6:7:8]/", "http://[::1", "http://[::ffff:1.2.3.4]:443/",
    # ports
    "https://a.example:443/", "http://a.example:80/", "http://a.example:0080/", "https://a.example:8443/",
    "http://a.example:/", "http://a.example:65536/", "http://a.example:8x/", "https://localhost:3000/",
    # odd hosts, paths and other schemes
    "https://a!b.example", "https://a_b.example", "https://a.example/\u00fc?q=\u00fc#\u00fc",
    "https://a.example/<script>", "https://a.example/{}|^`", "https://a.example?q=\"<>'",
    "javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", "ws://a.example", "https://",
    "https://example.com/connect?account=42",
]


def test_every_address_moka_accepts_opens_the_host_it_shows(browser: Any) -> None:
    """For each address: refused, or the host shown is Chromium's, and the address opened goes there."""
    page = browser.new_page()
    try:
        parsed = page.evaluate("(urls) => urls.map((u) => { try { return new URL(u).host; } catch { return null; } })",
                               CORPUS)
        accepted = {}
        for url, chromium_host in zip(CORPUS, parsed, strict=True):
            try:
                link = web_link(url)
            except UnsafeLinkError:
                continue
            assert link.host == chromium_host, (url, link, chromium_host)
            accepted[url] = link
        opened = page.evaluate("(urls) => urls.map((u) => new URL(u).host)", [link.url for link in accepted.values()])
    finally:
        page.close()
    for (url, link), host in zip(accepted.items(), opened, strict=True):
        assert host == link.host, (url, link.url, host)
    assert len(accepted) > 40  # the corpus exercises the accepting side as much as the refusing one
    assert web_link("http://evil\\@accounts.google.com/login").host == "evil"


class Sink(ThreadingHTTPServer):
    """A local web server that notes every path it is asked for (the attacker's host)."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
                sink.paths.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"the attacker's page")

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    def pages(self) -> list[str]:
        """The pages asked for (not the icon a browser asks for by itself)."""
        return [p for p in self.paths if p != "/favicon.ico"]

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def sink() -> Iterator[Sink]:
    server = Sink()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def page_host(page: Any, url: str) -> str:
    return str(page.evaluate("(u) => new URL(u).host", url))


def test_the_elicitation_card_names_the_host_the_browser_opens(moka_factory, sink: Sink, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The review's attack: the card said "Open accounts.google.com" and the browser went to the attacker."""
    moka: Moka = moka_factory({"e": {"command": sys.executable,
                                     "args": [str(SERVERS / "elicit_server.py"), str(tmp_path / "server.log")]}})
    page = moka.open("runner")
    attack = f"http://{sink.host}\\@accounts.google.com/login"
    page.select_option("#runner-server", "e")
    page.select_option("#runner-tool", "send_to")
    page.locator('#runner-form [name="url"]').fill(attack)
    page.click("#runner-run")
    card = page.locator(".runner-result .elicit[data-mode=url]").first
    card.wait_for(timeout=20000)
    shown = card.locator(".elicit-host").inner_text()
    assert shown == page_host(page, attack) == sink.host
    assert "accounts.google.com" not in shown and card.locator('[data-action="accept"]').inner_text() == f"Open {sink.host}"
    address = card.locator(".elicit-address").inner_text()
    assert address == f"http://{sink.host}/@accounts.google.com/login"
    shoot(moka, page, "url-host-confusion")
    with moka.context.expect_page(timeout=15000) as popup:
        card.locator('[data-action="accept"]').click()
    popup.value.wait_for_load_state()
    assert popup.value.url == address and page_host(page, popup.value.url) == shown
    assert sink.pages() == ["/@accounts.google.com/login"]


def test_a_sign_in_link_with_a_user_name_is_refused_on_the_card(moka_factory, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``https://accounts.google.com@evil.example/`` hides its host: the server is told no, nothing opens."""
    moka: Moka = moka_factory({"e": {"command": sys.executable,
                                     "args": [str(SERVERS / "elicit_server.py"), str(tmp_path / "server.log")]}})
    page = moka.open("runner")
    page.select_option("#runner-server", "e")
    page.select_option("#runner-tool", "send_to")
    page.locator('#runner-form [name="url"]').fill("https://accounts.google.com@evil.example/login")
    page.click("#runner-run")
    entry = page.locator(".runner-result").first
    entry.locator(".tool-text, .tool-error, .runner-error").first.wait_for(timeout=20000)
    assert "user name before its host" in entry.inner_text()
    assert page.locator(".elicit").count() == 0


def test_the_open_link_question_names_the_host_the_browser_opens(moka_factory, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    """A view's ``ui/open-link`` with the same address: the consent dialog names the host that opens."""
    moka: Moka = moka_factory({"moka-demo": DEMO})
    _view, frame = open_playground(moka)
    attack = f"http://{sink.host}\\@accounts.google.com/login"
    frame.evaluate("(url) => window.parent.postMessage({jsonrpc: '2.0', id: 'link-1', method: 'ui/open-link', "
                   "params: {url}}, '*')", attack)
    dialog = moka.page.locator("#consent-dialog")
    dialog.wait_for(state="visible", timeout=20000)
    moka.page.screenshot(path="/tmp/moka-elicitation/open-link-host.png")
    assert dialog.locator(".consent-host strong").inner_text() == page_host(moka.page, attack) == sink.host
    assert dialog.locator(".consent-value").inner_text() == f"http://{sink.host}/@accounts.google.com/login"
    with moka.context.expect_page(timeout=15000) as tab:
        moka.page.click("#consent-allow")
    tab.value.wait_for_load_state()
    assert page_host(moka.page, tab.value.url) == sink.host
    assert sink.pages() == ["/@accounts.google.com/login"]
