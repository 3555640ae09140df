"""Runs ``moka`` (the desktop app) offscreen with a config file it can't read, and reports what the
window showed and what the command returned. Run in a fresh process by tests/gui/test_desktop_start.py.

The core now starts on its thread while the window is being built, so its error can arrive before
the window is shown; the window must still show it, and the command must still print it and fail.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import threading
import time
from typing import Any


def watch(seen: dict[str, Any]) -> None:
    """Wait for the window's page to say why Moka could not start, note it, close the window."""
    import webview

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if webview.windows:
            try:
                text = webview.windows[0].evaluate_js("document.body ? document.body.innerText : ''")
            except Exception:  # the page is being replaced
                text = ""
            if isinstance(text, str) and "could not start" in text:
                seen["window_text"] = text
                break
        time.sleep(0.1)
    if webview.windows:
        webview.windows[0].destroy()


def main() -> int:
    """``moka --config BAD --data-dir DIR``, watched."""
    from moka_shell.cli.main import main as moka_main

    seen: dict[str, Any] = {}
    threading.Thread(target=watch, args=(seen,), daemon=True).start()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        seen["exit_code"] = moka_main(["--config", sys.argv[1], "--data-dir", sys.argv[2]])
    seen["stderr"] = err.getvalue()
    print(json.dumps(seen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
