"""Plugin code on a clock: every hook call runs on a worker thread and is waited for only so long.

A plugin that blocks (a ``time.sleep`` in a hook, a lock it never gets) must not stop Moka from
starting, answering or exiting. Python can't stop a thread, so the call keeps its (daemon) thread
and the caller goes on without it; ``PluginHost`` then names the plugin and skips it from then on.
Daemon threads matter here: a blocked worker in a ``ThreadPoolExecutor`` would hold up
interpreter exit, and ``asyncio.run`` waits for its default executor when it ends.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def _seconds(env: str, default: float) -> float:
    try:
        return max(0.05, float(os.environ.get(env, "")))
    except ValueError:
        return default


# Registration, start-up and shutdown hooks: generous, they run once. Decision hooks run while a
# view waits for an answer, so theirs is short. MOKA_HOOK_TIMEOUT overrides both (tests use it).
HOOK_TIMEOUT = _seconds("MOKA_HOOK_TIMEOUT", 5.0)
DECISION_TIMEOUT = _seconds("MOKA_HOOK_TIMEOUT", 2.0)


class HookTimeout(Exception):
    """A hook call did not return within its deadline (its thread is left running, unwaited)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"did not return within {seconds:g} s")
        self.seconds = seconds


def call(fn: Callable[[], T], timeout: float, name: str = "hook") -> T:
    """``fn()`` on a daemon thread: its value, its exception re-raised, or ``HookTimeout``."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller, who decides what it means
            box["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name=f"moka-{name}", daemon=True).start()
    if not done.wait(timeout):
        raise HookTimeout(timeout)
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


async def call_async(fn: Callable[[], T], timeout: float, name: str = "hook") -> T:
    """Like ``call``, but awaited: the core loop keeps running while the plugin thinks."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if fut.done():
            return
        if error is not None:
            fut.set_exception(error)
        else:
            fut.set_result(value)

    def run() -> None:
        value: Any = None
        error: BaseException | None = None
        try:
            value = fn()
        except BaseException as exc:  # handed to the awaiting caller
            error = exc
        try:
            loop.call_soon_threadsafe(settle, value, error)
        except RuntimeError:  # the loop closed while the plugin was still busy: nobody waits
            pass

    threading.Thread(target=run, name=f"moka-{name}", daemon=True).start()
    try:
        return await asyncio.wait_for(asyncio.shield(fut), timeout)
    except asyncio.TimeoutError:
        raise HookTimeout(timeout) from None
