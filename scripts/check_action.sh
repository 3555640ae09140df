#!/usr/bin/env bash
# The entry script of the repository's GitHub Action (action.yml): installs Moka from a wheel and
# runs `moka check` with profiles, JUnit, the HTML report and (optionally) baselines.
# tests/test_check_action.py runs this same script against the demo server with a wheel built from
# the checkout.
# Inputs come as environment variables (the action maps its inputs onto them):
#   MOKA_SERVER (required)   the server to check, a name in MOKA_CONFIG_FILE or a built-in (moka-demo)
#   MOKA_WHEEL               a wheel file or a pip requirement (default: moka-shell); [check] is added
#   MOKA_CONFIG_FILE         a Moka config naming the server (optional)
#   MOKA_PROFILES            profiles, a comma list or "all" (default: all)
#   MOKA_OUT                 the folder for moka.xml, moka.html and the screenshots (default: moka-check)
#   MOKA_ENGINE              chromium, webview or auto (default: auto)
#   MOKA_BASELINE            a folder of baseline screenshots (`moka check --baseline`; optional): a
#                            changed view fails, and its diff image goes into the out folder's shots/
#   MOKA_EXTRA_ARGS          more arguments for `moka check` (word-split)
#   MOKA_PYTHON              the Python to install into (default: python3)
#   MOKA_PIP_ARGS            more arguments for pip (word-split, e.g. --no-index)
#   MOKA_INSTALL_BROWSER     1 to run `playwright install --with-deps chromium` (default: 1)
set -euo pipefail

: "${MOKA_SERVER:?set MOKA_SERVER (the server input of the action) to the server to check}"
python="${MOKA_PYTHON:-python3}"
wheel="${MOKA_WHEEL:-moka-shell}"
out="${MOKA_OUT:-moka-check}"
data="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/moka-check-data"

read -r -a pip_args <<< "${MOKA_PIP_ARGS:-}"
"$python" -m pip install --disable-pip-version-check -q "${pip_args[@]}" "${wheel}[check]"
if [ "${MOKA_INSTALL_BROWSER:-1}" = "1" ]; then
  "$python" -m playwright install --with-deps chromium
fi

moka=("$python" -m moka_shell)
global=(--data-dir "$data")
if [ -n "${MOKA_CONFIG_FILE:-}" ]; then
  global=(--config "$MOKA_CONFIG_FILE" "${global[@]}")
fi
read -r -a extra <<< "${MOKA_EXTRA_ARGS:-}"
if [ -n "${MOKA_BASELINE:-}" ]; then
  extra=(--baseline "$MOKA_BASELINE" "${extra[@]}")
fi
mkdir -p "$out"
set +e
"${moka[@]}" "${global[@]}" check "$MOKA_SERVER" --engine "${MOKA_ENGINE:-auto}" \
  --profile "${MOKA_PROFILES:-all}" --junit "$out/moka.xml" --html "$out/moka.html" \
  --screenshot "$out/shots" "${extra[@]}"
rc=$?
set -e
echo "moka check: exit $rc; the report is in $out/ (moka.html, moka.xml, shots/)"
exit "$rc"
