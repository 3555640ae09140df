#!/usr/bin/env bash
# Set up (if needed) everything the tests use, then run them: the type check, the front end's
# formatting, lint and unit tests, the test suite (unit, real subprocess servers, Chromium end
# to end, the desktop shell offscreen), the quick benchmark run that keeps bench/ working, and
# — in CI (CI=true) or with MOKA_TEST_PACKAGING=1 — both Linux packages built from this checkout
# and smoke-tested.
set -euo pipefail
cd "$(dirname "$0")/.."
MOKA_SETUP_TEST=1 bash scripts/setup.sh
export QT_QPA_PLATFORM=offscreen QTWEBENGINE_CHROMIUM_FLAGS="--no-sandbox"
unset DISPLAY WAYLAND_DISPLAY
if [ "${CI:-}" = "true" ]; then export MOKA_TEST_PACKAGING=${MOKA_TEST_PACKAGING:-1}; fi
echo "== mypy"
.venv/bin/python -m mypy --no-error-summary src/moka_shell
echo "== front end"
# Biome checks the formatting and lints (any warning fails; biome.jsonc has the rules), then
# node's own test runner runs the JS unit tests in tests/js (package.json's scripts).
npm run --silent lint -- --colors=off
npm test --silent
echo "== pytest"
# Two workers (pytest-xdist): most tests wait on subprocesses and Chromium, so two cores serve
# two streams of them. --dist loadgroup keeps each xdist_group on one worker, one test after
# another (tests/conftest.py says which: the packaging builds, modules sharing one costly fixture).
# MOKA_TEST_WORKERS=0 runs everything in this one process; later arguments win over these. -rs: the
# log says why each skipped test was skipped (a tool missing here, a build not asked for).
.venv/bin/python -m pytest -q -rs -p no:cacheprovider -n "${MOKA_TEST_WORKERS:-2}" --dist loadgroup "$@"
if [ -f bench/__main__.py ]; then
  echo "== benchmarks (quick)"
  # Into an ignored file: a test run must leave the checkout clean (bench/results/latest-*.json
  # are the reference runs that docs/performance.md reports).
  .venv/bin/python -m bench --quick --out bench/results/test-run-quick.json
fi
