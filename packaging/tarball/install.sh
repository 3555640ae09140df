#!/bin/sh
# Add Moka to your own applications menu and PATH, from wherever this folder was unpacked.
#
#   ./install.sh              menu entry (~/.local/share/applications/moka.desktop), the icon,
#                             and ~/.local/bin/moka -> this folder's moka
#   ./install.sh --uninstall  remove those three again (this folder stays; delete it yourself)
#
# Nothing outside your home folder is touched, and no root is needed. XDG_DATA_HOME moves the
# menu entry and icon, as it does for every desktop; MOKA_BIN_DIR moves the link.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
data=${XDG_DATA_HOME:-$HOME/.local/share}
apps=$data/applications
icons=$data/icons/hicolor/scalable/apps
bin=${MOKA_BIN_DIR:-$HOME/.local/bin}
entry=$apps/moka.desktop

refresh() {  # let the menu notice at once, where the desktop has the tools for it
  command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$apps" 2>/dev/null || true
  command -v gtk-update-icon-cache >/dev/null 2>&1 && gtk-update-icon-cache -q -t "$data/icons/hicolor" 2>/dev/null || true
}

case "${1:-}" in
  --uninstall)
    rm -f "$entry" "$icons/moka.svg"
    if [ -L "$bin/moka" ] && [ "$(readlink "$bin/moka")" = "$here/moka" ]; then rm -f "$bin/moka"; fi
    refresh
    echo "removed the Moka menu entry, icon and $bin/moka; delete $here to remove Moka itself"
    exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--uninstall]" >&2; exit 2 ;;
esac

[ -x "$here/moka" ] || { echo "install.sh: no moka program in $here" >&2; exit 1; }
case "$here" in
  *[[:space:]]*) echo "install.sh: move the folder to a path without spaces first ($here)" >&2; exit 1 ;;
esac
mkdir -p "$apps" "$icons" "$bin"
cp "$here/moka.svg" "$icons/moka.svg"
cat >"$entry.tmp" <<EOF
[Desktop Entry]
Type=Application
Name=Moka
GenericName=MCP Apps host
Comment=Use MCP Apps and chat with any model
Exec=$here/moka
Icon=moka
Terminal=false
Categories=Development;
Keywords=MCP;AI;chat;model;
StartupWMClass=moka
EOF
mv "$entry.tmp" "$entry"
if [ -e "$bin/moka" ] && [ ! -L "$bin/moka" ]; then
  echo "install.sh: $bin/moka exists and is not a link; left it alone" >&2
else
  ln -sf "$here/moka" "$bin/moka"
fi
refresh
echo "added Moka to the applications menu ($entry) and $bin/moka"
case ":$PATH:" in *":$bin:"*) ;; *) echo "note: $bin is not on your PATH" ;; esac
