"""The host Moka shows is the host a browser opens, checked without a browser (finding G2, row 23).

tests/browser/test_link_hosts.py holds a larger corpus against Chromium itself; these are the
review's attacks and their relatives with the answers written out, so a change to the parser (or
pydantic-core's URL crate under it) is caught in every run.
"""

from __future__ import annotations

import pytest

from moka_shell.core.links import MAX_LINK, app_link, open_link_detail, web_link
from moka_shell.errors import UnsafeLinkError


@pytest.mark.parametrize(("url", "host", "opened"), [
    # The review's attack: Python's urlsplit says accounts.google.com; a browser goes to the first host,
    # and so does what Moka shows.
    ("http://127.0.0.1:9\\@accounts.google.com/", "127.0.0.1:9", "http://127.0.0.1:9/@accounts.google.com/"),
    ("https://evil.example\\..\\x", "evil.example", "https://evil.example/x"),
    ("http:\\\\evil.example\\", "evil.example", "http://evil.example/"),
    ("HTTP://EVIL.EXAMPLE", "evil.example", "http://evil.example/"),
    ("https://a.example#@evil.example", "a.example", "https://a.example/#@evil.example"),
    ("https://a.example?@evil.example/", "a.example", "https://a.example/?@evil.example/"),
    ("https://sub.Example.COM:8080/a", "sub.example.com:8080", "https://sub.example.com:8080/a"),
    ("https://a.example:443/", "a.example", "https://a.example/"),
    ("http://0x7f.1/", "127.0.0.1", "http://127.0.0.1/"),
    ("http://2130706433/", "127.0.0.1", "http://127.0.0.1/"),
    ("http://[::1]:8080/", "[::1]:8080", "http://[::1]:8080/"),
    # look-alike scripts and full-width dots: shown in the ASCII form the browser sends
    ("https://\u0430ccounts.google.com/", "xn--ccounts-1fg.google.com", "https://xn--ccounts-1fg.google.com/"),
    ("https://evil\uff0ecom", "evil.com", "https://evil.com/"),
])
def test_the_shown_host_is_the_opened_host(url: str, host: str, opened: str) -> None:
    link = web_link(url)
    assert (link.host, link.url) == (host, opened)


@pytest.mark.parametrize(("url", "why"), [
    ("https://accounts.google.com@evil.example/", "user name before its host"),
    ("https://a:b@evil.example/", "user name before its host"),
    ("http://acc\tounts.google.com", "control or invisible"),
    ("https://evil.example\u202e/moc.elgoog", "control or invisible"),
    ("https://acc\u200bounts.google.com", "control or invisible"),
    ("javascript:alert(1)", "only http and https"),
    ("file:///etc/passwd", "only http and https"),
    ("https://a!b.example", "not a plain name"),
    ("https://a..b.example", "not a plain name"),
    ("http://a.example:65536/", "not a valid address"),
])
def test_addresses_that_hide_where_they_go_are_refused_with_the_reason(url: str, why: str) -> None:
    with pytest.raises(UnsafeLinkError) as caught:
        web_link(url)
    assert why in str(caught.value)


def test_international_names_are_flagged_and_mailto_passes_as_written() -> None:
    assert open_link_detail("https://g\u00f6ogle.de/") == {"url": "https://xn--gogle-jua.de/", "host": "xn--gogle-jua.de",
                                                          "international": True}
    assert app_link("mailto:someone@example.com") == "mailto:someone@example.com"
    with pytest.raises(UnsafeLinkError):
        app_link("mailto:a@b.example\u202e")
    with pytest.raises(UnsafeLinkError):
        web_link("https://a.example/" + "x" * MAX_LINK)
