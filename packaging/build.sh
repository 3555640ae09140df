#!/usr/bin/env bash
# Build a Linux artifact of Moka with PyInstaller, check its size and smoke-test it.
#
#   bash packaging/build.sh qt    portable one-folder bundle on PyQt6/QtWebEngine, as .tar.gz
#   bash packaging/build.sh deb   .deb on the distribution's GTK 3 + WebKitGTK 4.1
#
# Options (environment): MOKA_SKIP_SMOKE=1 (build only), PYTHON=/path/to/python3.11+,
# MOKA_WHEELS="moka_shell-X.whl moka_anthropic-X.whl" (put these wheels in the bundle instead of
# building Moka and the bundled plugins from this checkout: the test suite and the release
# workflow build the wheels once and hand them to every build).
# Installs what it needs: apt packages (when run as root; otherwise it names them),
# and a separate build venv (packaging/.venv-qt, packaging/.venv-gtk) with
# pyinstaller==6.22.3, Moka's pinned dependencies and the bundled first-party plugins.
# Outputs go to packaging/dist/ (gitignored); intermediate files to packaging/build/.
set -euo pipefail

# Everything runs inside main so bash has read the whole file before it starts (editing
# the script while a build runs cannot derail it).
main() {
usage() {
  cat >&2 <<'USAGE'
usage: bash packaging/build.sh qt|deb

  qt    the portable Linux bundle on Qt WebEngine: packaging/dist/moka-VERSION-linux-ARCH-qt.tar.gz
        (unpack anywhere; its install.sh adds a menu entry and ~/.local/bin/moka)
  deb   the Debian/Ubuntu package on the distribution's WebKitGTK: packaging/dist/moka_VERSION_ARCH.deb
        (sudo apt install ./packaging/dist/moka_*.deb)

Each builds with PyInstaller in its own venv, checks the size budget, and smoke-tests the
artifact (packaging/smoke.sh). Environment: MOKA_SKIP_SMOKE=1, PYTHON=python3.11,
MOKA_WHEELS="moka_shell-*.whl moka_anthropic-*.whl", MOKA_BUNDLE_SYSTEM_LIBS=1 (qt).
See packaging/README.md.
USAGE
  exit "${1:-2}"
}
case "${1:-}" in -h | --help) usage 0 ;; esac
[ $# -eq 1 ] || usage
TARGET=$1
case "$TARGET" in
  qt) FLAVOR=qt ;;
  deb | gtk) TARGET=deb; FLAVOR=gtk ;;
  *) usage ;;
esac

cd "$(dirname "$0")/.."
ROOT=$(pwd)
PKG=$ROOT/packaging
PY=${PYTHON:-python3}
PYINSTALLER_PIN="pyinstaller==6.22.3"
HOOKS_CONTRIB_PIN="pyinstaller-hooks-contrib==2026.9"
PYWEBVIEW_GTK_PIN="pywebview[gtk]==6.2.1"
# First-party plugins shipped inside the bundles (their entry points work in the frozen app).
BUNDLED_PLUGINS=(plugins/moka-anthropic)
# Budgets (issue #6). "MB" on disk is `du -sm` (MiB blocks), as in shared/docs/packaging.md.
QT_DISK_BUDGET_MB=380
QT_TGZ_BUDGET_MIB=155
DEB_BUDGET_MB=46  # 45 until the plugin installer (packaging, the wheel reader) went in: +0.2 MB

VENV=$PKG/.venv-$FLAVOR
BUILD=$PKG/build/$FLAVOR
DIST=$PKG/dist
LOG=$BUILD/logs
mkdir -p "$BUILD" "$DIST" "$LOG"
START=$SECONDS

say() { printf '\n== %s\n' "$*"; }
die() { echo "build.sh: $*" >&2; exit 1; }
# Run a noisy command with its output in a log; show the log's end if it fails.
logged() {
  local name=$1; shift
  if ! "$@" >"$LOG/$name.log" 2>&1; then
    tail -n 40 "$LOG/$name.log" >&2
    die "$name failed (full log: $LOG/$name.log)"
  fi
}

# ---- system packages ---------------------------------------------------------------------
APT=(binutils)  # readelf (closure pass) and strip
if [ "$FLAVOR" = qt ]; then
  # Qt WebEngine's runtime libraries: PyInstaller must find them to bundle them, and the
  # smoke test runs the bundle (offscreen).
  APT+=(libegl1 libgl1 libgbm1 libnss3 libasound2 libdbus-1-3 libfontconfig1 libxkbfile1 libxkbcommon0
        libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
        libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxcomposite1 libxdamage1
        libxrandr2 libxtst6 libxshmfence1 fonts-dejavu-core)
else
  # PyGObject 3.50.0 is built from source against the distro's GI and cairo; the smoke
  # test runs the app under Xvfb on the distro's WebKitGTK.
  APT+=(gir1.2-webkit2-4.1 gir1.2-gtk-3.0 libgirepository1.0-dev libcairo2-dev pkg-config gcc
        xvfb xauth dpkg-dev fonts-dejavu-core)
fi
APT+=(desktop-file-utils)  # desktop-file-validate checks the menu entries the packages install
if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in "${APT[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    SUDO=()
    if [ "$(id -u)" -ne 0 ]; then
      sudo -n true 2>/dev/null || die "missing system packages: ${missing[*]} (sudo apt-get install -y ${missing[*]})"
      SUDO=(sudo -n)
    fi
    say "installing system packages: ${missing[*]}"
    "${SUDO[@]}" apt-get update -qq
    "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  die "this script builds on Debian/Ubuntu (dpkg); see packaging/README.md for other systems"
fi

"$PY" - <<'PYEOF' || die "Moka needs Python 3.11 or newer (set PYTHON=...)"
import sys
sys.exit(0 if sys.version_info >= (3, 11) else 1)
PYEOF

# ---- build venv ---------------------------------------------------------------------------
say "build venv $VENV"
[ -x "$VENV/bin/python" ] || logged venv "$PY" -m venv "$VENV"
VPY=$VENV/bin/python
# Requirements: Moka's and the bundled plugins' runtime dependencies from their pyproject
# files, minus the other toolkit, plus the build tools. moka-shell and the plugins
# themselves go in with --no-deps so pip never pulls PyQt6 into the GTK venv.
"$VPY" - "$FLAVOR" pyproject.toml "${BUNDLED_PLUGINS[@]/%//pyproject.toml}" >"$BUILD/requirements.txt" <<'PYEOF'
import re, sys, tomllib
flavor, files = sys.argv[1], sys.argv[2:]
qt = re.compile(r"^(pyqt6|pyqt6-webengine|qtpy)\b", re.I)
out = []
for path in files:
    with open(path, "rb") as fh:
        deps = tomllib.load(fh)["project"].get("dependencies", [])
    for dep in deps:
        name = re.split(r"[\s<>=!~;\[]", dep, maxsplit=1)[0]
        if name.lower().replace("_", "-") == "moka-shell":
            continue
        if flavor == "gtk" and qt.match(name):
            continue
        if dep not in out:
            out.append(dep)
print("\n".join(out))
PYEOF
{
  echo "$PYINSTALLER_PIN"
  echo "$HOOKS_CONTRIB_PIN"
  [ "$FLAVOR" = gtk ] && echo "$PYWEBVIEW_GTK_PIN"
} >>"$BUILD/requirements.txt"
want=$(cat "$BUILD/requirements.txt" requirements.lock | sha1sum | cut -c1-16)
if [ "$(cat "$VENV/.moka-build" 2>/dev/null)" != "$want" ]; then
  say "installing build requirements (log: $LOG/pip.log)"
  logged pip "$VPY" -m pip install --disable-pip-version-check -c requirements.lock -r "$BUILD/requirements.txt"
  echo "$want" >"$VENV/.moka-build"
fi
# Always reinstall Moka and its plugins (not editable: the bundle must see installed metadata,
# like a user's install would): the given wheels, or built from this checkout.
if [ -n "${MOKA_WHEELS:-}" ]; then
  read -r -a wheels <<<"$MOKA_WHEELS"
  for w in "${wheels[@]}"; do [ -f "$w" ] || die "MOKA_WHEELS: no such wheel $w"; done
  echo "installing the given wheels: ${wheels[*]##*/}"
  logged pip-moka "$VPY" -m pip install --disable-pip-version-check --no-deps --force-reinstall "${wheels[@]}"
else
  logged pip-moka "$VPY" -m pip install --disable-pip-version-check --no-deps --force-reinstall \
    "$ROOT" "${BUNDLED_PLUGINS[@]/#/$ROOT/}"
fi
VERSION=$("$VPY" -c "import moka_shell; print(moka_shell.__version__)")
if [ -d .git ] && [ -n "$(git status --porcelain -- src plugins 2>/dev/null)" ]; then
  echo "build.sh: note: src/ or plugins/ has uncommitted changes; they go into this build" >&2
fi

# ---- PyInstaller --------------------------------------------------------------------------
say "pyinstaller ($FLAVOR flavour, moka $VERSION)"
t0=$SECONDS
rm -rf "$BUILD/dist" "$BUILD/work"
logged pyinstaller env PYINSTALLER_CONFIG_DIR="$BUILD/pyi-config" MOKA_FLAVOR=$FLAVOR \
  "$VPY" -m PyInstaller --noconfirm --clean --log-level WARN \
    --distpath "$BUILD/dist" --workpath "$BUILD/work" "$PKG/moka.spec"
PYI_SECONDS=$((SECONDS - t0))
APPDIR=$BUILD/dist/moka
[ -x "$APPDIR/moka" ] || die "PyInstaller produced no $APPDIR/moka"
DISK_MB=$(du -sm "$APPDIR" | cut -f1)
DISK_BYTES=$(du -sb "$APPDIR" | cut -f1)
FILES=$(find "$APPDIR" -type f | wc -l)
echo "bundle: $APPDIR  ${DISK_MB} MB (du -sm), $DISK_BYTES bytes, $FILES files, PyInstaller ${PYI_SECONDS}s"

# ---- artifact -----------------------------------------------------------------------------
ARCH=$(dpkg --print-architecture)
if [ "$TARGET" = qt ]; then
  MACH=$(uname -m)
  ARTIFACT=$DIST/moka-$VERSION-linux-$MACH-qt.tar.gz
  say "tarball $(basename "$ARTIFACT")"
  rm -f "$ARTIFACT"
  install -m 0644 "$PKG/icons/moka.svg" "$APPDIR/moka.svg"  # the menu icon install.sh installs
  install -m 0755 "$PKG/tarball/install.sh" "$APPDIR/install.sh"  # a menu entry and PATH link for one user
  # gzip -9: 0.6 MiB smaller than the default -6 for 10 s more.
  tar -C "$BUILD/dist" --owner=0 --group=0 --numeric-owner -cf - moka | gzip -9 >"$ARTIFACT"
  ART_BYTES=$(stat -c %s "$ARTIFACT")
  ART_MIB=$("$VPY" -c "print(f'{$ART_BYTES / 1048576:.1f}')")
  echo "artifact: $ARTIFACT  ${ART_MIB} MiB"
  over=""
  [ "$DISK_MB" -le "$QT_DISK_BUDGET_MB" ] || over="on disk ${DISK_MB} MB > ${QT_DISK_BUDGET_MB} MB"
  "$VPY" -c "import sys; sys.exit(0 if $ART_BYTES <= $QT_TGZ_BUDGET_MIB * 1048576 else 1)" \
    || over="$over tar.gz ${ART_MIB} MiB > ${QT_TGZ_BUDGET_MIB} MiB"
else
  DEB_NAME=moka_${VERSION}_${ARCH}.deb
  ARTIFACT=$DIST/$DEB_NAME
  say "package $DEB_NAME"
  STAGE=$BUILD/deb-root
  rm -rf "$STAGE"
  mkdir -p "$STAGE/DEBIAN" "$STAGE/opt" "$STAGE/usr/bin" "$STAGE/usr/share/applications" \
           "$STAGE/usr/share/icons/hicolor/scalable/apps" "$STAGE/usr/share/doc/moka"
  cp -a "$APPDIR" "$STAGE/opt/moka"
  ln -s /opt/moka/moka "$STAGE/usr/bin/moka"
  install -m 0644 "$PKG/deb/moka.desktop" "$STAGE/usr/share/applications/moka.desktop"
  desktop-file-validate "$STAGE/usr/share/applications/moka.desktop" || die "moka.desktop is not a valid menu entry"
  install -m 0644 "$PKG/icons/moka.svg" "$STAGE/usr/share/icons/hicolor/scalable/apps/moka.svg"
  install -m 0644 "$PKG/deb/copyright" "$STAGE/usr/share/doc/moka/copyright"
  # Depends: the typelibs gi loads at run time (they pull GTK 3, WebKitGTK 4.1, JSC, soup)
  # plus the packages owning every shared library the bundle links but does not carry.
  DEPENDS=$("$VPY" "$PKG/deb/depends.py" "$STAGE/opt/moka")
  INSTALLED_KB=$(du -sk --exclude=DEBIAN "$STAGE" | cut -f1)
  sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_SIZE@/$INSTALLED_KB/" \
      -e "s|@DEPENDS@|$DEPENDS|" "$PKG/deb/control.in" >"$STAGE/DEBIAN/control"
  echo "Depends: $DEPENDS"
  find "$STAGE" -type d -exec chmod 0755 {} +
  rm -f "$ARTIFACT"
  logged dpkg-deb dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$ARTIFACT"
  ART_BYTES=$(stat -c %s "$ARTIFACT")
  ART_MIB=$("$VPY" -c "print(f'{$ART_BYTES / 1048576:.1f}')")
  ART_MB=$("$VPY" -c "print(f'{$ART_BYTES / 1e6:.1f}')")
  echo "artifact: $ARTIFACT  $ART_MB MB ($ART_MIB MiB), installs ${DISK_MB} MB under /opt/moka"
  over=""
  # installed size from KiB blocks (du -sm rounds each file up to a whole MiB in total)
  [ "$(du -sk "$APPDIR" | cut -f1)" -le $((DEB_BUDGET_MB * 1024)) ] || over="installed ${DISK_MB} MB > ${DEB_BUDGET_MB} MB"
  "$VPY" -c "import sys; sys.exit(0 if $ART_BYTES <= $DEB_BUDGET_MB * 1e6 else 1)" \
    || over="$over .deb ${ART_MB} MB > ${DEB_BUDGET_MB} MB"
fi
BUILD_SECONDS=$((SECONDS - START))

# ---- smoke test ---------------------------------------------------------------------------
SMOKE=skipped
if [ "${MOKA_SKIP_SMOKE:-0}" != 1 ]; then
  say "smoke test"
  bash "$PKG/smoke.sh" "$ARTIFACT"
  SMOKE=passed
fi

# A small machine-readable record for the tests and the README's size table.
"$VPY" - "$DIST/$TARGET.json" <<PYEOF
import json, sys
json.dump({"target": "$TARGET", "flavor": "$FLAVOR", "version": "$VERSION", "artifact": "$(basename "$ARTIFACT")",
           "artifact_bytes": $ART_BYTES, "bundle_du_sm": $DISK_MB, "bundle_bytes": $DISK_BYTES, "files": $FILES,
           "pyinstaller_seconds": $PYI_SECONDS, "build_seconds": $BUILD_SECONDS, "smoke": "$SMOKE",
           "over_budget": "${over# }" or None}, open(sys.argv[1], "w"), indent=2)
PYEOF
say "done in $((SECONDS - START))s: $ARTIFACT"
[ -z "$over" ] || die "over budget: ${over# }"
}

main "$@"; exit $?
