"""Coalescing: a burst of requests for the same work runs it once (list_changed floods, finding R1.12)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class Coalesced:
    """Runs ``action`` once per burst: requests within ``delay`` of each other share one run.

    ``action`` returns False to stop (the connection is gone); a request that arrives while it
    runs asks for one more round.
    """

    def __init__(self, action: Callable[[], Awaitable[bool]], delay: float) -> None:
        self._action = action
        self._delay = delay
        self._wanted = False
        self.task: asyncio.Task[None] | None = None

    def request(self) -> None:
        """Ask for a run soon (on the running loop)."""
        self._wanted = True
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())

    def cancel(self) -> None:
        """Drop a run under way or waiting (the connection it served is gone)."""
        if self.task is not None:
            self.task.cancel()

    async def _run(self) -> None:
        while self._wanted:
            await asyncio.sleep(self._delay)
            self._wanted = False  # requests from here on ask for one more round
            if not await self._action():
                return
