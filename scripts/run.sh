#!/usr/bin/env bash
# Set up (if needed) and start Moka on its embedded defaults: the bundled demo server.
# With a display it opens the desktop window; without one it serves the UI in browser mode.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export QTWEBENGINE_CHROMIUM_FLAGS="${QTWEBENGINE_CHROMIUM_FLAGS:-}$( [ "$(id -u)" -eq 0 ] && echo ' --no-sandbox' )"
exec .venv/bin/moka "$@"
