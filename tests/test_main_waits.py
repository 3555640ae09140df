"""Ctrl-C ends the main thread's waits even when the kernel gave the signal to another thread (main_waits.py)."""

from __future__ import annotations

import concurrent.futures
import ctypes
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from moka_shell.shells.main_waits import wait_event, wait_result

# A main thread waiting for good, and a second thread that exists only to receive the signal.
SCRIPT = textwrap.dedent("""
    import concurrent.futures, sys, threading, time
    from moka_shell.shells.main_waits import wait_event, wait_result

    parked = threading.Event()
    threading.Thread(target=parked.wait, daemon=True).start()
    try:
        print("waiting", flush=True)  # in the try: the signal may be acted on from the next line on
        if sys.argv[1] == "event":
            wait_event(threading.Event())
        else:
            wait_result(concurrent.futures.Future())
    except KeyboardInterrupt:
        sys.exit(130)
""")


@pytest.mark.parametrize("kind", ["event", "future"])
def test_a_sigint_given_to_another_thread_ends_the_wait(kind: str) -> None:
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, kind], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "waiting"
        other = next(int(t.name) for t in Path(f"/proc/{proc.pid}/task").iterdir() if int(t.name) != proc.pid)
        assert ctypes.CDLL(None, use_errno=True).tgkill(proc.pid, other, signal.SIGINT) == 0, ctypes.get_errno()
        assert proc.wait(60) == 130
    finally:
        proc.kill()
        proc.wait()


def test_the_waits_keep_their_meaning() -> None:
    done = threading.Event()
    assert wait_event(done, 0.05) is False
    threading.Timer(0.05, done.set).start()
    assert wait_event(done) is True
    future: concurrent.futures.Future[int] = concurrent.futures.Future()
    with pytest.raises(concurrent.futures.TimeoutError):
        wait_result(future, 0.05)
    threading.Timer(0.05, future.set_result, (7,)).start()
    assert wait_result(future) == 7
    failed: concurrent.futures.Future[int] = concurrent.futures.Future()
    failed.set_exception(ValueError("no"))
    with pytest.raises(ValueError, match="no"):
        wait_result(failed, 1)
