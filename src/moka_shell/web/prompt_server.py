"""uvicorn's server, stopped when asked rather than at its next tick, and saying when it is up (§19).

uvicorn notices ``should_exit`` on a 0.1 s tick, then pauses another 0.1 s for connections to
close and polls them every 0.1 s, whether or not any is open. Moka stops its two servers on every
exit (a one-shot ``moka check``, the desktop's quit, every test's core), so each stop cost
0.1–0.3 s of waiting for nothing. Here the tick wakes as soon as the stop is asked, and the shutdown
waits for the connections themselves: none open means no wait at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket

import uvicorn

TICK = 0.1  # s: uvicorn's housekeeping period (its Date header is refreshed every 10 ticks)
POLL = 0.01  # s between looks at connections still closing, once the quick looks found some
QUICK_LOOKS = 5  # loop turns given to connections that close at once (idle keep-alive ones) before polling


class PromptServer(uvicorn.Server):
    """A uvicorn server whose ``request_exit()`` takes effect at once."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._wake = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop serving, once its main loop runs
        self.up = asyncio.Event()  # set when its start-up has ended (``started`` says whether it worked)

    def request_exit(self) -> None:
        """Stop serving: the main loop ends now instead of at its next tick (callable from any thread)."""
        self.should_exit = True
        loop = self._loop
        if loop is None:
            return  # not serving yet: the main loop looks at should_exit before it first waits
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if here is loop:
            self._wake.set()
        else:
            with contextlib.suppress(RuntimeError):  # that loop has already closed: nothing to wake
                loop.call_soon_threadsafe(self._wake.set)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start-up; then ``up`` is set, so a waiter needs no polling (it polled every 10 ms)."""
        try:
            await super().startup(sockets=sockets)
        finally:
            self.up.set()

    async def main_loop(self) -> None:
        """uvicorn's ticks, each cut short by a stop request."""
        self._loop = asyncio.get_running_loop()  # before the first look at should_exit (request_exit)
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), TICK)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """Stop listening, ask each connection to finish, and wait for them (up to the graceful timeout)."""
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        state = self.server_state
        for connection in list(state.connections):
            connection.shutdown()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.config.timeout_graceful_shutdown or 0)
        looks = 0
        while (state.connections or state.tasks) and not self.force_exit:
            if self.config.timeout_graceful_shutdown is not None and loop.time() >= deadline:
                for task in state.tasks:
                    task.cancel(msg="Moka is stopping; the request ran past the graceful timeout")
                break
            looks += 1
            await asyncio.sleep(0 if looks <= QUICK_LOOKS else POLL)
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()
