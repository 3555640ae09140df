#!/usr/bin/env bash
# Smoke-test a built Moka: run the frozen binary the way a user would.
#
#   bash packaging/smoke.sh ARTIFACT
#
# ARTIFACT is the app folder (with moka or moka.exe in it), the binary itself, a
# Moka.app, a .tar.gz or .zip of the folder, a .deb (unpacked, not installed; to
# test an installed package pass /usr/bin/moka), or a venv's bin/moka (a wheel install). Used by packaging/build.sh and by the
# release workflow on Linux, macOS and Windows.
#
# Steps: --version; tools moka-demo; call moka-demo roll_dice; plugins (no plugin may
# report an error: entry points must survive freezing); check moka-demo --engine webview
# (renders the demo views in the app's own webview: Qt offscreen, GTK under Xvfb, the
# system webview on macOS/Windows; 60 s per view, for slow CI machines). Config and data
# go to a temporary folder.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: bash packaging/smoke.sh ARTIFACT_DIR_OR_BINARY" >&2; exit 2; }
ART=$1
[ -e "$ART" ] || { echo "smoke: no such file or folder: $ART" >&2; exit 2; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/moka-smoke.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT

# ---- find the binary ------------------------------------------------------------------------
find_bin() {  # $1: a folder that holds the app somewhere inside
  local d=$1 c
  for c in "$d/moka" "$d/moka.exe" "$d/Moka.app/Contents/MacOS/moka" "$d/Contents/MacOS/moka" \
           "$d/moka/moka" "$d/moka/moka.exe" "$d/opt/moka/moka"; do
    if [ -f "$c" ]; then echo "$c"; return 0; fi
  done
  return 1
}
case "$ART" in
  *.tar.gz | *.tgz) mkdir "$TMP/unpacked"; tar -xzf "$ART" -C "$TMP/unpacked"; BIN=$(find_bin "$TMP/unpacked") ;;
  *.zip) mkdir "$TMP/unpacked"; unzip -q "$ART" -d "$TMP/unpacked"; BIN=$(find_bin "$TMP/unpacked") ;;
  *.deb) mkdir "$TMP/unpacked"; dpkg-deb -x "$ART" "$TMP/unpacked"; BIN=$(find_bin "$TMP/unpacked") ;;
  *) if [ -d "$ART" ]; then BIN=$(find_bin "$ART"); else BIN=$ART; fi ;;
esac
[ -n "${BIN:-}" ] && [ -f "$BIN" ] || { echo "smoke: no moka binary found in $ART" >&2; exit 2; }
# Where the binary really lives: /usr/bin/moka (the .deb) and ~/.local/bin/moka (pipx) are links.
REAL=$(readlink -f "$BIN" 2>/dev/null || echo "$BIN")  # an old macOS readlink has no -f
APP=$(cd "$(dirname "$REAL")" && pwd)
echo "smoke: $BIN"

# ---- environment ----------------------------------------------------------------------------
export MOKA_CONFIG=$TMP/config/config.json MOKA_DATA_DIR=$TMP/data
unset MOKA_LOAD_PLUGINS PYTHONPATH PYTHONHOME
KIND=native
case "$(uname -s)" in
  Linux)
    # A frozen Qt bundle, or a pip/pipx install (a venv's bin/, where Linux gets PyQt6 from PyPI): Qt.
    if [ -d "$APP/_internal/PyQt6" ] || [ -x "$APP/python" ]; then KIND=qt; else KIND=gtk; fi ;;
esac
WRAP=()
if [ "$KIND" = qt ]; then
  # No display needed: Qt's offscreen platform. Chromium refuses to run as root with its sandbox.
  [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] || export QT_QPA_PLATFORM=offscreen
  [ "$(id -u)" -ne 0 ] || export QTWEBENGINE_CHROMIUM_FLAGS="${QTWEBENGINE_CHROMIUM_FLAGS:-} --no-sandbox"
elif [ "$KIND" = gtk ] && [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  command -v xvfb-run >/dev/null || { echo "smoke: the GTK build needs a display: install xvfb" >&2; exit 2; }
  WRAP=(xvfb-run -a -s "-screen 0 1280x1024x24")
fi
echo "smoke: kind=$KIND"

FAILED=0
PASSED=0
OUT=$TMP/out.txt
# run NAME EXPECTED_REGEX REJECTED_REGEX CMD... : run it, show its output, and check rc 0,
# that stdout matches EXPECTED and (if not empty) does not match REJECTED.
run() {
  local name=$1 expect=$2 reject=$3; shift 3
  local t0=$SECONDS rc=0
  "$@" >"$OUT" 2>"$TMP/err.txt" || rc=$?
  local dt=$((SECONDS - t0))
  sed 's/^/    /' "$OUT"
  if [ $rc -ne 0 ] || ! grep -Eq -- "$expect" "$OUT" || { [ -n "$reject" ] && grep -Eq -- "$reject" "$OUT"; }; then
    echo "FAIL  $name (rc=$rc, ${dt}s; expected /$expect/)"
    { grep -v -E "^\[[0-9:./]+:(ERROR|WARNING|INFO)" "$TMP/err.txt" || true; } | tail -n 30 | sed 's/^/    stderr: /'
    FAILED=$((FAILED + 1))
  else
    echo "ok    $name (${dt}s)"
    PASSED=$((PASSED + 1))
  fi
}

run "--version" '^moka [0-9]+\.[0-9]+' '' "$BIN" --version
run "tools moka-demo" 'moka-demo/roll_dice' '' "$BIN" tools moka-demo
run "call moka-demo roll_dice" 'Rolled 3d6: [1-6], [1-6], [1-6] \(total [0-9]+\)' '' \
  "$BIN" call moka-demo roll_dice '{"sides":6,"count":3}'
# Every plugin must load: an "error:" line means a module or an entry point was lost.
run "plugins" '^moka\.transports ' 'error:' "$BIN" plugins
run "check moka-demo --engine webview" '^OK: [0-9]+ of [0-9]+ views passed' '' \
  ${WRAP[@]+"${WRAP[@]}"} "$BIN" check moka-demo --engine webview --timeout 60

echo "smoke: $PASSED passed, $FAILED failed"
[ $FAILED -eq 0 ]
