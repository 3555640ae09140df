"""The reference for desktop cold start: a bare pywebview Qt window that loads one page.

    python -m bench.bare_webview OUT.json

Writes when the page said hello through js_api (epoch seconds), then exits.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import webview

PAGE = """<!doctype html><title>bare</title><p>hello</p><script>
(function wait() {  // pywebviewready alone was missed once in a while: poll as well
  if (window.pywebview && window.pywebview.api && window.pywebview.api.hello) window.pywebview.api.hello();
  else setTimeout(wait, 5);
})();
</script>"""


class Api:
    """What the page calls once pywebview is ready."""

    def __init__(self, out: Path) -> None:
        self._out = out

    def hello(self) -> None:
        """Note the time and close."""
        self._out.write_text(json.dumps({"hello": time.time()}), encoding="utf-8")
        os._exit(0)  # only the start-up is measured; window.destroy() from here hung at times


def main() -> int:
    """Open the window and run until the page has said hello."""
    webview.create_window("bare", html=PAGE, js_api=Api(Path(sys.argv[1])), width=1180, height=820)
    webview.start(private_mode=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
