"""Waits on the main thread that Ctrl-C still ends, whichever thread the kernel gave the signal to.

The kernel hands a process's SIGINT to any of its threads that does not block it, and Python acts
on a signal only when its main thread next runs Python code. A main thread inside one long
``Event.wait()`` or ``Future.result()`` never does, so a Ctrl-C that reached another thread was
lost and the command went on (``moka check`` during a view's render, about one run in ten on a
loaded machine). These waits wake every ``SIGNAL_CHECK`` seconds to let Python look.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from typing import TypeVar

T = TypeVar("T")

SIGNAL_CHECK = 0.2  # seconds: how late a Ctrl-C that reached another thread may be acted on


def wait_event(event: threading.Event, timeout: float | None = None) -> bool:
    """``event.wait(timeout)``, in short waits; True once the event is set."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not event.wait(SIGNAL_CHECK if deadline is None else max(0.0, min(SIGNAL_CHECK, deadline - time.monotonic()))):
        if deadline is not None and time.monotonic() >= deadline:
            return False
    return True


def wait_result(future: concurrent.futures.Future[T], timeout: float | None = None) -> T:
    """``future.result(timeout)``, in short waits (``TimeoutError`` as it raises)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while not future.done():
        left = SIGNAL_CHECK if deadline is None else min(SIGNAL_CHECK, deadline - time.monotonic())
        if left <= 0:
            break
        concurrent.futures.wait([future], left)
    return future.result(0)
