"""Links a server or a view wants opened, read the way browsers read them.

A card that says "Opens accounts.google.com" must open accounts.google.com. Python's ``urlsplit``
and browsers disagree on many addresses (``http://evil\\@accounts.google.com/`` is a page of
``evil`` to a browser: ``\\`` is ``/`` there), so Moka parses them with a WHATWG URL parser (the
``url`` crate inside pydantic-core, the standard browsers follow), shows the host that parser finds
— as ``new URL(url).host`` gives it, international names in their ASCII (``xn--``) form — and opens
exactly the address it normalised and showed. What it cannot show plainly is refused: a user name
before the host, control characters or spaces, a host with characters no plain name has
(finding G2; tests/test_links.py, tests/browser/test_link_hosts.py compares with Chromium).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from moka_shell.errors import UnsafeLinkError

MAX_LINK = 16 * 1024  # characters; a sign-in address with its state and PKCE challenge is a few hundred
WEB_SCHEMES = {"http": 80, "https": 443}
# A host a person can read: letters, digits, dots, dashes (and the ``_`` some intranets use),
# an IPv4 address, or an IPv6 one in brackets. Anything else (``a!b.com``, ``a$b``) is refused.
_PLAIN_HOST = re.compile(r"[a-z0-9_.-]+|\[[0-9a-f:.]+\]")
_UNSAFE_CHARS = re.compile(r"[\x00-\x20\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


@dataclass(frozen=True)
class WebLink:
    """An http(s) address as browsers read it: ``url`` is shown and opened, ``host`` is shown."""

    url: str
    host: str  # the host, and the port unless it is the scheme's default (``new URL(url).host``)

    @property
    def international(self) -> bool:
        """Is the host an international name, shown in the ASCII form browsers send?"""
        return any(label.startswith("xn--") for label in self.host.split("."))


def _parse_error(exc: ValueError) -> str:
    # pydantic's message: "1 validation error…\n  Input should be a valid URL, empty host [type=…]".
    lines = str(exc).splitlines()
    reason = (lines[1] if len(lines) > 1 else lines[0]).strip().split(" [")[0]
    return reason.removeprefix("Input should be a valid URL, ")


def web_link(url: str) -> WebLink:
    """``url`` parsed as a browser parses it; UnsafeLinkError unless it is a plain http(s) address."""
    if len(url) > MAX_LINK:
        raise UnsafeLinkError(url, f"it is {len(url):,} characters long, and Moka opens at most {MAX_LINK:,}")
    if _UNSAFE_CHARS.search(url):
        raise UnsafeLinkError(url, "it contains spaces, control or invisible characters, which browsers "
                                   "drop or read differently")
    try:
        from pydantic_core import Url  # here, not at the top: the desktop's window imports this module (§13)

        parsed = Url(url)
    except ValueError as exc:  # pydantic-core's ValidationError is a ValueError
        raise UnsafeLinkError(url, f"it is not a valid address ({_parse_error(exc)})") from None
    default_port = WEB_SCHEMES.get(parsed.scheme)
    if default_port is None:
        raise UnsafeLinkError(url, "only http and https links are opened")
    if parsed.username or parsed.password:
        raise UnsafeLinkError(url, "it has a user name before its host (user@host), which hides where it goes")
    host = parsed.host or ""
    if not _PLAIN_HOST.fullmatch(host) or host.startswith(".") or ".." in host:
        raise UnsafeLinkError(url, f"its host {host!r} is not a plain name or address")
    shown = host if parsed.port in (None, default_port) else f"{host}:{parsed.port}"
    return WebLink(url=str(parsed), host=shown)


def app_link(url: str) -> WebLink | str:
    """A link a view asked to open: a WebLink for http(s), the address itself for ``mailto:``."""
    if url[:7].lower() == "mailto:":
        if _UNSAFE_CHARS.search(url) or len(url) > MAX_LINK:
            raise UnsafeLinkError(url, "it contains spaces, control or invisible characters")
        return url
    return web_link(url)


def open_link_detail(url: str) -> dict[str, Any]:
    """What the open-link question shows (``url``, and ``host`` for http(s)): the address that will open."""
    link = app_link(url)
    if isinstance(link, str):
        return {"url": link}
    return {"url": link.url, "host": link.host, "international": link.international}
