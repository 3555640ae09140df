#!/usr/bin/env bash
# Set up everything Moka needs on a fresh Debian/Ubuntu machine (as root) or an existing one:
# system packages (Qt WebEngine runtime libraries, Chromium for browser tests, Xvfb), the
# Python venv in .venv with pinned dependencies, and (for the tests) the pinned npm example servers
# and the front end's formatter and linter.
# Safe to run again: each step is skipped when it is already done.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
WITH_TEST=${MOKA_SETUP_TEST:-0}

APT_PACKAGES=(
  # Qt WebEngine (pywebview's Qt backend) runtime libraries
  libegl1 libgl1 libgbm1 libnss3 libasound2 libdbus-1-3 libfontconfig1 libxkbfile1 libxkbcommon0
  libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcomposite1 libxdamage1 libxrandr2
  libxtst6 libxshmfence1 fonts-dejavu-core
  # browser mode tests and `moka check` use Debian's Chromium through Playwright
  chromium
  # a virtual display for the GTK build's smoke test; git/node for a bare machine
  xvfb xauth git ca-certificates
  # the desktop test under Xvfb presses real keys
  xdotool
  # tests/test_desktop_actions.py hands a server's text to the real notify-send
  libnotify-bin
)

need_apt=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_apt+=("$p")
  done
  if ! command -v node >/dev/null 2>&1; then need_apt+=(nodejs npm); fi
  if ! "$PY" -c "import venv, ensurepip" >/dev/null 2>&1; then need_apt+=(python3-venv); fi
  if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
      echo "setup: missing system packages: ${need_apt[*]}" >&2
      echo "setup: run this script as root once, or: sudo apt-get install -y ${need_apt[*]}" >&2
      exit 1
    fi
    echo "setup: installing system packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  fi
fi

"$PY" - <<'PYEOF'
import sys
if sys.version_info < (3, 11):
    sys.exit(f"setup: Moka needs Python 3.11 or newer; {sys.executable} is {sys.version.split()[0]}. "
             "Set PYTHON=/path/to/python3.11 and run again.")
PYEOF

if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv"
  "$PY" -m venv .venv
fi
stamp=.venv/.moka-installed
want="$(cat requirements.lock pyproject.toml plugins/*/pyproject.toml 2>/dev/null | sha1sum | cut -c1-16)-$WITH_TEST"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages (pinned in requirements.lock)"
  extras=""
  [ "$WITH_TEST" = 1 ] && extras="[dev]"
  .venv/bin/python -m pip install -q --disable-pip-version-check -c requirements.lock -e ".$extras"
  for plugin in plugins/*/; do
    [ -f "$plugin/pyproject.toml" ] || continue
    .venv/bin/python -m pip install -q --disable-pip-version-check -c requirements.lock -e "$plugin"
  done
  echo "$want" > "$stamp"
fi

if [ "$WITH_TEST" = 1 ]; then
  if [ ! -d tests/npm/node_modules/@modelcontextprotocol/server-basic-vanillajs ] \
     || [ tests/npm/package-lock.json -nt tests/npm/node_modules/.package-lock.json ]; then
    echo "setup: installing the pinned MCP Apps example servers and MCP conformance suite from npm"
    (cd tests/npm && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # The front end's formatter and linter (Biome, pinned in the root package.json), which
  # scripts/test.sh runs with node's test runner before pytest.
  if [ ! -x node_modules/.bin/biome ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "setup: installing the front end's pinned formatter and linter from npm"
    npm ci --no-audit --no-fund --loglevel=error
  fi
  # The benchmark's AppBridge reference host (bench/appbridge_ref.py): bundled from the pinned
  # ext-apps with the pinned esbuild into an ignored path, never vendored.
  ab=bench/appbridge
  if [ ! -f $ab/dist/host.js ] || [ $ab/host.js -nt $ab/dist/host.js ] \
     || [ tests/npm/package-lock.json -nt $ab/dist/host.js ]; then
    echo "setup: bundling the AppBridge reference host ($ab/dist/host.js)"
    NODE_PATH=tests/npm/node_modules tests/npm/node_modules/.bin/esbuild $ab/host.js --bundle --format=iife \
      --minify --log-level=warning --outfile=$ab/dist/host.js
  fi
fi
echo "setup: ready ($ROOT/.venv)"
