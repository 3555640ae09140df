"""The memory floor's window: a bare pywebview window showing one URL until it is killed.

    python -m bench.floor_webview URL

No js_api, no menu, nothing of Moka's: the window pywebview makes for a page, in private mode
as Moka's desktop window is. The backend is pywebview's choice (PYWEBVIEW_GUI=gtk for GTK).
"""

from __future__ import annotations

import sys

import webview


def main() -> int:
    """Open the window on the URL and run until the process is ended."""
    webview.create_window("floor", url=sys.argv[1], width=1180, height=820)
    webview.start(private_mode=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
