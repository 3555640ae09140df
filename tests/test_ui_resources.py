"""The UI resource cache: a view asking for its HTML never waits behind the background prefetch (R1.15)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from moka_shell.core.mcp.catalog import APP_MIME
from moka_shell.core.mcp.ui_resources import CONCURRENCY, UiCache

pytestmark = pytest.mark.anyio


class StalledServer:
    """A client whose first reads hold their slot until released, as a slow server's would."""

    def __init__(self, stalled: set[str]) -> None:
        self.stalled = stalled
        self.release = asyncio.Event()
        self.reads: list[str] = []

    async def read_resource(self, uri: str) -> Any:
        self.reads.append(uri)
        if uri in self.stalled:
            await self.release.wait()
        return SimpleNamespace(contents=[{"uri": uri, "mimeType": APP_MIME, "text": f"<p>{uri}</p>"}])


async def test_a_view_asking_for_its_resource_does_not_wait_behind_the_prefetch() -> None:
    """Every read slot held by slow reads and 2,000 more queued: the view's own read starts at once."""
    uris = [f"ui://s/{i}" for i in range(2000)]
    server = StalledServer(set(uris[:CONCURRENCY]))
    cache = UiCache()
    cache.prefetch(server, uris, {})  # type: ignore[arg-type]
    while len(server.reads) < CONCURRENCY:  # the slow reads have taken every slot
        await asyncio.sleep(0)
    # Before: the view's read joined the queued prefetch task and waited for a slot behind 1,995 others.
    got = await asyncio.wait_for(cache.get(server, uris[-1], {}), 60)  # type: ignore[arg-type]
    assert got.error is None and got.html == f"<p>{uris[-1]}</p>"
    assert not server.release.is_set()  # it did not need the slow reads to end
    server.release.set()
    await cache.idle()
    assert server.reads.count(uris[-1]) == 1  # the queued prefetch of it did not read it again
    assert len(cache.entries) == len(uris)


async def test_a_view_joins_a_read_of_its_resource_already_under_way() -> None:
    """A read that holds a slot is shared, not started twice."""
    server = StalledServer({"ui://s/a"})
    cache = UiCache()
    cache.prefetch(server, ["ui://s/a"], {})  # type: ignore[arg-type]
    while not server.reads:
        await asyncio.sleep(0)
    waiting = asyncio.ensure_future(cache.get(server, "ui://s/a", {}))  # type: ignore[arg-type]
    server.release.set()
    assert (await waiting).html == "<p>ui://s/a</p>"
    assert server.reads == ["ui://s/a"]
