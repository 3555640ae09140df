"""``asyncio.run`` with an end that can't hang: what is left when the main coroutine returns gets a bound.

``asyncio.run`` cancels every task still there and then waits for each, without a limit. One task
that lost its cancellation (reliability finding N8b: a server's supervisor went on retrying) kept
`moka serve` alive after "Stopping Moka…" for as long as anyone watched. Here the leftovers get
``LEFTOVER_WAIT`` seconds, the ones that did not end are named in the log and dropped with the loop,
and the default executor gets the same bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")
LEFTOVER_WAIT = 5.0  # for tasks still there once the main coroutine ended (they were cancelled)
log = logging.getLogger("moka")


def run_bounded(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` on a new loop, as ``asyncio.run`` does, then end the loop within a bound."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        try:
            _end(loop)
        finally:
            asyncio.set_event_loop(None)
            loop.close()


def _end(loop: asyncio.AbstractEventLoop) -> None:
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in left:
        task.cancel()
    if left:
        _, stuck = loop.run_until_complete(asyncio.wait(left, timeout=LEFTOVER_WAIT))
        for task in stuck:
            log.warning("Moka stopped with a task that did not end: %s", task.get_name())
    loop.run_until_complete(loop.shutdown_asyncgens())
    try:
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_default_executor(), LEFTOVER_WAIT))
    except asyncio.TimeoutError:
        log.warning("Moka stopped with a worker thread still busy")
