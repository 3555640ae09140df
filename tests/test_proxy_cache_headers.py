"""The sandbox proxy is cached at its content-named URL only, and keeps its frame-ancestors there.

Real HTTP against a started core's sandbox origin; the view URL the core hands the page puts the
view's parameters in the fragment, so that URL is the same for every view (docs/performance.md §8).
"""

from __future__ import annotations

import urllib.parse

import httpx2
import pytest

from moka_shell.core.views.document import proxy_url
from moka_shell.paths import Paths
from moka_shell.shells.core_thread import start_core

pytestmark = pytest.mark.anyio


async def test_only_the_content_named_proxy_url_is_cacheable(paths: Paths) -> None:
    app, web = await start_core(paths, mode="browser", servers=[], store=False)
    sandbox = web.endpoints.sandbox_origin
    try:
        async with httpx2.AsyncClient(timeout=30) as http:
            named = await http.get(sandbox + web.endpoints.proxy_page)
            other = await http.get(f"{sandbox}/proxy.html?v=0000000000000000")
            plain = await http.get(f"{sandbox}/proxy.html")
            for reply in (named, other, plain):
                assert reply.status_code == 200 and reply.text == named.text
                assert f"frame-ancestors http://127.0.0.1:{web.host_port}" in reply.headers["content-security-policy"]
            assert named.headers["cache-control"] == "private, max-age=31536000, immutable"
            assert other.headers["cache-control"] == plain.headers["cache-control"] == "no-store"
    finally:
        await app.stop()
        await web.stop()


async def test_the_view_parameters_go_in_the_fragment(paths: Paths) -> None:
    app, web = await start_core(paths, mode="browser", servers=[], store=False)
    try:
        a = urllib.parse.urlsplit(proxy_url(web.endpoints, "v1", "key1", ""))
        b = urllib.parse.urlsplit(proxy_url(web.endpoints, "v2", "key2", "camera"))
        # Everything before the fragment (what the browser caches by, and the server sees) is shared.
        assert a._replace(fragment="") == b._replace(fragment="")
        assert urllib.parse.urlunsplit(a._replace(fragment="")) == web.endpoints.sandbox_origin + web.endpoints.proxy_page
        params = dict(urllib.parse.parse_qsl(b.fragment))
        assert params == {"view": "/view/v2?k=key2", "allow": "camera", "host": web.endpoints.host_origin, "id": "v2"}
    finally:
        await app.stop()
        await web.stop()
