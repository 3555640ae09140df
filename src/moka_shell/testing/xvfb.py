"""A private X display (Xvfb) for tests and benchmarks of the desktop shell under a real X server."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager


def have_xvfb() -> bool:
    """Is Xvfb installed (scripts/setup.sh installs it)?"""
    return shutil.which("Xvfb") is not None


@contextmanager
def xvfb_display(size: str = "1400x1000x24") -> Iterator[str]:
    """Start Xvfb on a free display and yield its name (``":N"``); stopped on exit.

    The number comes back through ``-displayfd``, so parallel runs never pick the same display.
    """
    read, write = os.pipe()
    proc = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", size, "-nolisten", "tcp"],
                            pass_fds=(write,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as pipe:
        number = pipe.readline().strip()
    try:
        if not number:
            raise RuntimeError("Xvfb did not report a display number")
        yield f":{number}"
    finally:
        proc.terminate()
        proc.wait(10)
