#!/usr/bin/env bash
# Set up (if needed) everything the tests use, then run them: type check, the test suite
# (unit, real subprocess servers, Chromium end to end, the desktop shell offscreen) and the
# quick benchmark run that keeps bench/ working.
set -euo pipefail
cd "$(dirname "$0")/.."
MOKA_SETUP_TEST=1 bash scripts/setup.sh
export QT_QPA_PLATFORM=offscreen QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox"
echo "== mypy"
.venv/bin/python -m mypy --no-error-summary src/moka_shell
echo "== pytest"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
