"""Consent requests waiting at the same time: each has its own id, and each answer reaches its own."""

from __future__ import annotations

import asyncio
from pathlib import Path
import pytest

from moka_shell.config import MokaConfig
from moka_shell.core.app import MokaApp
from moka_shell.paths import Paths
from moka_shell.testing import EventRecorder

pytestmark = pytest.mark.anyio


async def test_concurrent_requests_are_answered_separately(tmp_path: Path) -> None:
    app = MokaApp(Paths(tmp_path / "config.json", tmp_path), config=MokaConfig(), mode="desktop")
    asked = EventRecorder("consent.request")
    app.subscribe(asked)
    first = asyncio.create_task(app.consent.ask("open_link", "s1", {"url": "https://a.example"}))
    second = asyncio.create_task(app.consent.ask("open_link", "s2", {"url": "https://b.example"}))
    while len(asked) < 2:
        await asyncio.sleep(0)
    ids = [a["requestId"] for a in asked.data()]
    assert len(set(ids)) == 2
    app.consent.answer(ids[0], allow=True, remember=False)
    assert await first is True and not second.done()
    # A third request while the second still waits must not take its id (the old ids were
    # "q<number waiting + 1>-<id(detail) % 10000>": here "q2-…" again, one dict address away
    # from answering the wrong request).
    third = asyncio.create_task(app.consent.ask("open_link", "s3", {"url": "https://c.example"}))
    while len(asked) < 3:
        await asyncio.sleep(0)
    assert asked.data()[2]["requestId"] not in ids
    app.consent.answer(asked.data()[2]["requestId"], allow=True, remember=False)
    assert await third is True and not second.done()
    app.consent.answer(ids[1], allow=False, remember=False)
    assert await second is False
