"""Chromium launched on a thread of its own while the core starts; the check's views render there.

Playwright's sync API must be used from the thread that started it, so the thread that launches
the browser also renders the views (``run``). The check's own thread never waits for the launch
unless a view needs the browser: a server with no UI tool is reported as soon as its tools are
listed, and the browser launched for nothing is closed behind it (``release``), or, when the
process ends right after (``moka check``), left to end with it (docs/performance.md §19).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from moka_shell.shells.check.engines import Engine
from moka_shell.shells.main_waits import wait_event

Job = Callable[[Engine], None]


class EngineThread:
    """One browser engine, launched at once on its own thread; jobs run there, one at most."""

    def __init__(self, make: Callable[[], Engine]) -> None:
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=1)
        self._done = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(make,), name="moka-check-engine", daemon=True)
        self._thread.start()

    def _run(self, make: Callable[[], Engine]) -> None:
        engine: Engine | None = None
        try:
            engine = make()
        except Exception as exc:  # Playwright's own errors, or its absence: raised only if a view needs it
            self._error = exc
        job = self._jobs.get()
        try:
            if job is not None and engine is not None:
                job(engine)
        except BaseException as exc:  # handed to the thread that waits in run()
            self._error = exc
        finally:
            if engine is not None:
                with contextlib.suppress(Exception):  # a browser that already went away
                    engine.close()
            self._done.set()

    def run(self, job: Job) -> None:
        """Run ``job(engine)`` on the engine's thread and wait; raises the launch's or the job's error."""
        self._jobs.put(job)
        wait_event(self._done)  # Ctrl-C ends this wait, whichever thread received it (main_waits.py)
        if self._error is not None:
            raise self._error

    def release(self, *, wait: bool = True) -> None:
        """No (more) views: close the browser on its thread; ``wait`` for it unless the process is about to end."""
        with contextlib.suppress(queue.Full):  # run() gave it its one job already
            self._jobs.put_nowait(None)
        if wait:
            wait_event(self._done)
