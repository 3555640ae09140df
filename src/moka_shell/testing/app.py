"""One way to start a Moka core in a test, as datasette's ``make_app_client`` is for datasette's.

``start_app`` builds a ``MokaApp`` with the given servers (or config) and plugins, subscribes an
``EventRecorder`` when given one, starts the app on the running loop (views get ``FAKE_ENDPOINTS``,
so no web server is needed) and waits for its servers to be ready or failed; the caller stops it.
``running_app`` is the same as an async context manager that stops the app however the test ends.
A plugin's own tests use them to run the plugin inside a real core::

    async with running_app(tmp_path, servers={"demo": ServerConfig(command="moka", args=["demo-server"])},
                           plugins=PluginHost(load_entrypoints=False, extra=[my_plugin])) as app:
        assert app.servers.get("demo").status == "ready"
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from moka_shell.config import MokaConfig, ServerConfig
from moka_shell.core.app import MokaApp
from moka_shell.core.shell import Endpoints
from moka_shell.paths import Paths
from moka_shell.testing.shell import FAKE_ENDPOINTS

READY_WITHIN = 30.0  # seconds a start waits for its servers (a bound on a loaded machine, not a speed claim)


class EventRecorder(list[tuple[str, Any]]):
    """Every event an app pushed, in order, as ``(event, data)``; only the events named, when names are given.

    Subscribe it (``app.subscribe(events)``, or ``start_app(events=events)``); it is a list, so a test
    reads it as one: ``events[-1]``, ``len(events)``, ``events.clear()``.
    """

    def __init__(self, *names: str) -> None:
        super().__init__()
        self.names = frozenset(names)

    def __call__(self, event: str, data: Any) -> None:
        """Record one event (the listener ``app.subscribe`` calls)."""
        if not self.names or event in self.names:
            self.append((event, data))

    def data(self, event: str | None = None) -> list[Any]:
        """The data of every recorded event (of ``event`` only, when given), in order."""
        return [d for e, d in self if event is None or e == event]


def app_paths(where: Paths | Path) -> Paths:
    """``where`` itself, or a config file and data dir of a test's own in the folder ``where``."""
    return where if isinstance(where, Paths) else Paths(where / "config.json", where / "data")


async def start_app(where: Paths | Path, *, servers: Mapping[str, ServerConfig] | None = None,
                    config: MokaConfig | None = None, events: EventRecorder | None = None, store: bool = True,
                    endpoints: Endpoints | None = FAKE_ENDPOINTS, ready_within: float | None = READY_WITHIN,
                    prepare: Callable[[MokaApp], object] | None = None, **options: Any) -> MokaApp:
    """A started MokaApp; the caller stops it (``await app.stop()``).

    ``where`` is the test's ``Paths`` or a folder for them. ``servers`` replace the config's servers;
    without ``config`` the app reads its config file, as ``moka`` does. ``store=False`` keeps no
    conversations (no chat); ``ready_within=None`` does not wait for the servers. ``prepare(app)``
    runs between building and starting (change what the config file said, listen to the inspector
    from the first message). The other keyword arguments are MokaApp's own (``plugins``,
    ``actions``, ``mode``, ``handshake_timeout`` …).
    """
    if servers is not None:
        config = config or MokaConfig()
        config.mcp_servers = dict(servers)
    app = MokaApp(app_paths(where), config=config, **options)
    if events is not None:
        app.subscribe(events)
    if prepare is not None:
        prepare(app)
    try:
        await app.start(store=store, endpoints=endpoints)
        if ready_within is not None:
            await app.servers.wait_ready(timeout=ready_within)
    except BaseException:
        await app.stop()
        raise
    return app


@asynccontextmanager
async def running_app(where: Paths | Path, **how: Any) -> AsyncIterator[MokaApp]:
    """``start_app(where, **how)`` for the body of an ``async with``; the app is stopped after it."""
    app = await start_app(where, **how)
    try:
        yield app
    finally:
        await app.stop()
